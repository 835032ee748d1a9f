//! [`Store`] on SQLite: writes go through the group-committing writer, reads through the
//! read-only pool, and both run the domain modules' SQL.

use std::path::PathBuf;
use std::sync::Arc;

use coord_proto::types::*;
use tokio::sync::broadcast;

use crate::db::Db;
use crate::error::Result;
use crate::events::{self, Resolved};
use crate::inbox;
use crate::orch::{self, dispatch::Mode};
use crate::store::{Published, Store, StoreInfo};

pub struct SqliteStore {
    db: Arc<Db>,
    path: PathBuf,
}

impl SqliteStore {
    pub fn open(path: PathBuf) -> Result<Self> {
        Ok(SqliteStore { db: Arc::new(Db::open(&path)?), path })
    }

    /// Start orch's background duties (automatic retries, lease-expiry events); they end
    /// when `shutdown` turns true.
    pub fn start_background(&self, shutdown: tokio::sync::watch::Receiver<bool>) {
        let db = self.db.clone();
        tokio::spawn(orch::service::auto_retry(db.clone(), db.subscribe(), shutdown.clone()));
        tokio::spawn(orch::service::lease_expiry(db.clone(), db.subscribe(), shutdown));
    }
}

impl Store for SqliteStore {
    fn info(&self) -> StoreInfo {
        StoreInfo {
            location: self.path.display().to_string(),
            schema_version: self.db.schema_version(),
            journal_mode: self.db.journal_mode().to_string(),
        }
    }

    async fn close(&self) {
        self.db.close().await;
    }

    fn last_event_id(&self) -> i64 {
        self.db.last_event_id()
    }

    fn subscribe(&self) -> broadcast::Receiver<Arc<Published>> {
        self.db.subscribe()
    }

    async fn send(&self, p: SendParams) -> Result<MessageResult> {
        self.db.write(move |ctx| inbox::write::send(ctx, p)).await
    }

    async fn claim(&self, p: ClaimParams) -> Result<LeaseResult> {
        self.db.write(move |ctx| inbox::write::claim(ctx, p)).await
    }

    async fn renew(&self, p: RenewParams) -> Result<LeaseResult> {
        self.db.write(move |ctx| inbox::write::renew(ctx, p)).await
    }

    async fn update(&self, p: UpdateParams) -> Result<MessageResult> {
        self.db.write(move |ctx| inbox::write::update(ctx, p)).await
    }

    async fn reply(&self, p: ReplyParams) -> Result<MessageResult> {
        self.db.write(move |ctx| inbox::write::reply(ctx, p)).await
    }

    async fn finish(&self, p: FinishParams, status: ThreadStatus) -> Result<MessageResult> {
        self.db.write(move |ctx| inbox::write::finish(ctx, p, status)).await
    }

    async fn cancel(&self, p: CancelParams) -> Result<MessageResult> {
        self.db.write(move |ctx| inbox::write::cancel(ctx, p)).await
    }

    async fn mark_read(&self, p: MarkReadParams) -> Result<MarkReadResult> {
        self.db.write(move |ctx| inbox::write::mark_read(ctx, p)).await
    }

    async fn fetch(&self, p: FetchParams) -> Result<Vec<Thread>> {
        self.db.read(move |c| inbox::read::fetch(c, &p)).await
    }

    async fn list(&self, p: ListParams) -> Result<Vec<Thread>> {
        self.db.read(move |c| inbox::read::list(c, &p)).await
    }

    async fn show(&self, p: ShowParams) -> Result<ShowResult> {
        self.db.read(move |c| inbox::read::show(c, &p.thread_id)).await
    }

    async fn events_list(&self, p: EventsListParams) -> Result<EventsResult> {
        self.db.read(move |c| events::list(c, p)).await
    }

    async fn resolve_filter(&self, f: EventFilter, default_after: i64) -> Result<Resolved> {
        self.db.read(move |c| events::resolve(c, f, default_after)).await
    }

    async fn events_after(&self, r: Resolved, limit: u32) -> Result<Vec<Event>> {
        self.db.read(move |c| events::query(c, &r, limit)).await
    }

    async fn run_create(&self, p: RunCreateParams) -> Result<RunView> {
        self.db.write(move |ctx| orch::plan::create_run(ctx, p)).await
    }

    async fn run_list(&self) -> Result<RunsResult> {
        self.db.read(orch::plan::list_runs).await
    }

    async fn run_show(&self, p: RunRef) -> Result<RunView> {
        self.db.read(move |c| orch::plan::view(c, &p.run_id, 0)).await
    }

    async fn task_add(&self, p: TaskAddParams) -> Result<TaskView> {
        self.db.write(move |ctx| orch::plan::add_task(ctx, p)).await
    }

    async fn task_list(&self, p: TaskListParams) -> Result<Vec<Task>> {
        self.db.read(move |c| orch::plan::list_tasks(c, &p)).await
    }

    async fn task_show(&self, p: TaskRef) -> Result<TaskView> {
        self.db.read(move |c| orch::plan::task_view(c, &p.run_id, &p.task_id)).await
    }

    async fn dep_change(&self, p: DepParams, add: bool) -> Result<TaskView> {
        self.db.write(move |ctx| orch::plan::change_dep(ctx, p, add)).await
    }

    async fn ready(&self, p: TaskListParams) -> Result<Vec<Task>> {
        self.db.read(move |c| orch::plan::ready(c, &p)).await
    }

    async fn dispatch(&self, p: DispatchParams) -> Result<DispatchResult> {
        orch::service::dispatch(&self.db, p).await
    }

    async fn reconcile(&self, p: RunRef) -> Result<Vec<Task>> {
        self.db.write(move |ctx| orch::reconcile::run(ctx, &p.run_id)).await
    }

    async fn blocked(&self, p: RunRef) -> Result<BlockedResult> {
        self.db.read(move |c| orch::dispatch::blocked(c, &p.run_id)).await
    }

    async fn answer(&self, p: AnswerParams) -> Result<MessageResult> {
        self.db.write(move |ctx| orch::dispatch::answer(ctx, p)).await
    }

    async fn retry(&self, p: RetryParams, reassign: bool) -> Result<DispatchResult> {
        orch::service::retry(&self.db, p, if reassign { Mode::Reassign } else { Mode::Retry }).await
    }

    async fn orch_cancel(&self, p: CancelTaskParams) -> Result<RunView> {
        self.db.write(move |ctx| orch::plan::cancel(ctx, p)).await
    }

    async fn worktrees(&self, p: WorktreeParams, prune: bool) -> Result<WorktreesResult> {
        if prune { orch::worktrees::prune(&self.db, p).await } else { orch::worktrees::list(&self.db, p).await }
    }

    async fn council_start(&self, p: CouncilStartParams) -> Result<Council> {
        self.db.write(move |ctx| orch::council::start(ctx, p)).await
    }

    async fn council_show(&self, p: CouncilRef) -> Result<Council> {
        self.db.read(move |c| orch::council::show(c, &p.run_id, &p.council_id)).await
    }
}
