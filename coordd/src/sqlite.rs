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
use crate::store::{Published, Store, StoreInfo};

pub struct SqliteStore {
    db: Db,
    path: PathBuf,
}

impl SqliteStore {
    pub fn open(path: PathBuf) -> Result<Self> {
        Ok(SqliteStore { db: Db::open(&path)?, path })
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
}
