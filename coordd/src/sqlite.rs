//! [`Store`] on SQLite: writes go through the group-committing writer, reads through the
//! read-only pool, and both run the domain modules' SQL.

use std::path::PathBuf;
use std::sync::Arc;

use coord_proto::ErrorCode;
use coord_proto::types::*;
use tokio::sync::broadcast;

use crate::db::{Db, WriteCtx};
use crate::error::{Error, Result};
use crate::events::{self, Resolved};
use crate::orch::{self, dispatch::Mode};
use crate::store::{Published, Store, StoreInfo};
use crate::{agents, inbox, mail, reservations, status};

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

impl SqliteStore {
    /// A write made by `agent`: its `last_seen_at` advances. The touch is a job of its own,
    /// queued first, so it usually shares the group commit and survives a call that fails.
    async fn write_as<T, F>(&self, agent: String, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut WriteCtx<'_>) -> Result<T> + Send + 'static,
    {
        let (touched, result) = tokio::join!(self.touch(agent), self.db.write(f));
        log_touch(touched);
        result
    }

    /// A read made by `agent`: its `last_seen_at` advances (a small write, run alongside).
    async fn read_as<T, F>(&self, agent: String, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&rusqlite::Connection) -> Result<T> + Send + 'static,
    {
        let (touched, read) = tokio::join!(self.touch(agent), self.db.read(f));
        log_touch(touched);
        read
    }

    async fn touch(&self, agent: String) -> Result<()> {
        self.db.write(move |ctx| agents::touch(ctx, &agent)).await
    }
}

/// `last_seen_at` is bookkeeping: failing to advance it never fails the call itself.
fn log_touch(r: Result<()>) {
    if let Err(e) = r {
        tracing::warn!(error = %e, "could not record last_seen_at");
    }
}

/// Storage failures of the agents layer carry the seed's I/O codes.
fn io(write: bool) -> impl FnOnce(Error) -> Error {
    move |e| match e {
        Error::App(_) => e,
        other => {
            tracing::error!(error = %other, "request failed");
            let code = if write { ErrorCode::IoWriteFailed } else { ErrorCode::IoReadFailed };
            Error::app(code, other.to_string())
        }
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

    async fn init(&self, p: InitParams) -> Result<bool> {
        self.db
            .write(move |ctx| {
                if let Some(on) = p.strict_agents {
                    agents::set_strict(ctx, on)?;
                }
                agents::strict(ctx.conn)
            })
            .await
    }

    async fn send(&self, p: SendParams) -> Result<MessageResult> {
        self.write_as(p.from.clone(), move |ctx| {
            let to = Some(p.to.as_str()).filter(|t| !t.is_empty());
            agents::check_parties(ctx.conn, &p.from, to)?;
            inbox::write::send(ctx, p)
        })
        .await
    }

    async fn claim(&self, p: ClaimParams) -> Result<LeaseResult> {
        self.write_as(p.agent.clone(), move |ctx| inbox::write::claim(ctx, p)).await
    }

    async fn renew(&self, p: RenewParams) -> Result<LeaseResult> {
        self.write_as(p.agent.clone(), move |ctx| inbox::write::renew(ctx, p)).await
    }

    async fn update(&self, p: UpdateParams) -> Result<MessageResult> {
        self.write_as(p.agent.clone(), move |ctx| inbox::write::update(ctx, p)).await
    }

    async fn reply(&self, p: ReplyParams) -> Result<MessageResult> {
        self.write_as(p.from.clone(), move |ctx| {
            agents::check_parties(ctx.conn, &p.from, p.to.as_deref())?;
            inbox::write::reply(ctx, p)
        })
        .await
    }

    async fn finish(&self, p: FinishParams, status: ThreadStatus) -> Result<MessageResult> {
        self.write_as(p.agent.clone(), move |ctx| inbox::write::finish(ctx, p, status)).await
    }

    async fn cancel(&self, p: CancelParams) -> Result<MessageResult> {
        self.write_as(p.agent.clone(), move |ctx| inbox::write::cancel(ctx, p)).await
    }

    async fn mark_read(&self, p: MarkReadParams) -> Result<MarkReadResult> {
        self.write_as(p.agent.clone(), move |ctx| inbox::write::mark_read(ctx, p)).await
    }

    async fn fetch(&self, p: FetchParams) -> Result<Vec<Thread>> {
        self.read_as(p.agent.clone(), move |c| inbox::read::fetch(c, &p)).await
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

    async fn agent_register(&self, p: RegisterParams) -> Result<AgentResult> {
        self.db.write(move |ctx| agents::register(ctx, p)).await.map_err(io(true))
    }

    async fn agent_list(&self, p: AgentListParams) -> Result<Vec<Agent>> {
        self.db.read(move |c| agents::list(c, &p)).await.map_err(io(false))
    }

    async fn agent_show(&self, p: AgentRef) -> Result<Agent> {
        self.db.read(move |c| agents::show(c, &p.agent_id)).await.map_err(io(false))
    }

    async fn agent_heartbeat(&self, p: HeartbeatParams) -> Result<AgentResult> {
        self.db.write(move |ctx| agents::heartbeat(ctx, p)).await.map_err(io(true))
    }

    async fn mail_list(&self, p: MailParams) -> Result<Vec<MailItem>> {
        self.read_as(p.agent.clone(), move |c| mail::list(c, &p)).await.map_err(io(false))
    }

    async fn mail_mark(&self, p: MailRef, ack: bool) -> Result<MailItemResult> {
        self.write_as(p.agent.clone(), move |ctx| {
            agents::check_known(ctx.conn, &p.agent)?;
            if ack { mail::ack(ctx, p) } else { mail::read(ctx, p) }
        })
        .await
        .map_err(io(true))
    }

    async fn reserve(&self, p: ReserveParams) -> Result<ReserveResult> {
        self.write_as(p.agent.clone(), move |ctx| reservations::reserve(ctx, p)).await.map_err(io(true))
    }

    async fn release(&self, p: ReleaseParams) -> Result<ReleaseResult> {
        self.write_as(p.agent.clone(), move |ctx| reservations::release(ctx, p)).await.map_err(io(true))
    }

    async fn reservation_list(&self, p: ReservationListParams) -> Result<Vec<Reservation>> {
        self.db.read(move |c| reservations::list(c, &p)).await.map_err(io(false))
    }

    async fn reservation_check(&self, p: CheckPathsParams) -> Result<Vec<PathConflict>> {
        self.db.read(move |c| reservations::check(c, &p)).await.map_err(io(false))
    }

    async fn status(&self, p: StatusParams) -> Result<StatusResult> {
        self.db.read(move |c| status::status(c, &p)).await.map_err(io(false))
    }

    async fn mail_check(&self, p: CheckParams) -> Result<CheckResult> {
        let agent = p.agent.clone().unwrap_or_default();
        self.write_as(agent, move |ctx| mail::delivery::check(ctx, p)).await.map_err(io(true))
    }

    async fn mail_pending(&self, p: PendingParams) -> Result<PendingResult> {
        let agent = p.agent.clone().unwrap_or_default();
        if p.remind {
            self.write_as(agent, move |ctx| mail::delivery::remind(ctx, p)).await.map_err(io(true))
        } else {
            self.read_as(agent, move |c| mail::delivery::pending(c, &p)).await.map_err(io(false))
        }
    }

    async fn mail_withdraw(&self, p: MailRef) -> Result<WithdrawResult> {
        self.write_as(p.agent.clone(), move |ctx| mail::delivery::withdraw(ctx, p)).await.map_err(io(true))
    }

    async fn peers_link(&self, p: PeerLinkParams) -> Result<PeersResult> {
        self.db.write(move |ctx| mail::peers::link(ctx, p)).await.map_err(io(true))
    }

    async fn peers_list(&self, p: PeerListParams) -> Result<PeersResult> {
        let peers = self.db.read(move |c| mail::peers::of(c, &p.task_id).map(|peers| (p.task_id, peers))).await;
        let (task_id, peers) = peers.map_err(io(false))?;
        Ok(PeersResult { task_id, peers, event_id: None })
    }

    async fn install_hooks(&self, p: InstallHooksParams) -> Result<InstallHooksResult> {
        let db = self.path.clone();
        tokio::task::spawn_blocking(move || crate::sessions::install(&p, &db))
            .await
            .map_err(|e| Error::Internal(format!("install task failed: {e}")))?
    }
}
