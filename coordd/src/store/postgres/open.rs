//! Opening the PostgreSQL backend and [`PgStore`], its [`Store`] implementation.
//!
//! Opening connects the writer's connection, migrates the schema (under an advisory lock,
//! so instances starting together take turns), reads the last event id for the bus, and
//! starts the writer and follower threads. Reads run in `spawn_blocking` on a small pool of
//! connections, each read inside one `REPEATABLE READ READ ONLY` transaction (one
//! snapshot, and no writes possible).

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use tokio::sync::{Semaphore, watch};

use super::conn::{self, PgConn};
use super::follow::{Follower, Publisher, Shared};
use super::migrations;
use super::tx::PgTx;
use super::writer;
use crate::bus::Bus;
use crate::error::{Error, Result};
use crate::store::backend::{ReadJob, Store, StoreInfo, WriteJob};
use crate::store::queue::Writer;
use crate::store::repos::Events;

/// Connections reads may use at once.
const READERS: usize = 4;

/// Idle read connections. The synchronous client must never be dropped on the async
/// executor (it shuts a runtime of its own down), so what is left at the end is dropped on
/// a thread of its own, wherever the last handle goes.
#[derive(Default)]
struct Idle(Mutex<Vec<PgConn>>);

impl Idle {
    fn take(&self) -> Option<PgConn> {
        self.0.lock().ok().and_then(|mut v| v.pop())
    }

    fn put(&self, conn: PgConn) {
        if let Ok(mut v) = self.0.lock() {
            v.push(conn);
        }
    }

    fn drain(&self) -> Vec<PgConn> {
        self.0.lock().map(|mut v| std::mem::take(&mut *v)).unwrap_or_default()
    }
}

impl Drop for Idle {
    fn drop(&mut self) {
        let conns = self.drain();
        if !conns.is_empty() {
            let _ = std::thread::Builder::new().name("coordd-pg-close".into()).spawn(move || drop(conns));
        }
    }
}

pub struct PgStore {
    location: String,
    shared: Arc<Shared>,
    writer: Writer,
    writer_thread: Mutex<Option<std::thread::JoinHandle<()>>>,
    follower: Follower,
    idle: Arc<Idle>,
    permits: Arc<Semaphore>,
    schema_version: i64,
}

/// The URL without its password, for logs and `system.hello`.
pub fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let creds = &url[scheme + 3..at];
            match creds.find(':') {
                Some(colon) => format!("{}{}:***{}", &url[..scheme + 3], &creds[..colon], &url[at..]),
                None => url.to_string(),
            }
        }
        _ => url.to_string(),
    }
}

impl PgStore {
    /// Connect to `url`, migrate, and start the writer and the follower; returns the store
    /// and the bus they publish on. Blocking: call it off the executor.
    pub fn open(url: &str) -> Result<(PgStore, Bus)> {
        let cfg = conn::config(url)?;
        let mut writer_conn = PgConn::connect(&cfg)?.writer_plans()?;
        let schema_version = migrations::migrate(&mut writer_conn)?;
        let schema = writer_conn.schema()?;
        let last = PgTx::read(&mut writer_conn).last_event_id()?;
        let bus = Bus::new(last);
        let shared = Arc::new(Shared {
            listen_cfg: cfg.clone(),
            cfg,
            channel: conn::channel(&schema),
            write_key: conn::lock_key(&schema, "write"),
            duty_key: conn::lock_key(&schema, "duties"),
            publisher: Publisher::new(bus.clone(), last),
        });
        let start = |e: std::io::Error| Error::Internal(format!("cannot start a PostgreSQL backend thread: {e}"));
        let (writer, handle) = writer::spawn(writer_conn, shared.clone()).map_err(start)?;
        let follower = Follower::spawn(shared.clone()).map_err(start)?;
        let store = PgStore {
            location: redact(url),
            shared,
            writer,
            writer_thread: Mutex::new(Some(handle)),
            follower,
            idle: Arc::new(Idle::default()),
            permits: Arc::new(Semaphore::new(READERS)),
            schema_version,
        };
        Ok((store, bus))
    }
}

/// Run `job` on a read snapshot of `conn`; false when the connection should not be reused.
fn read_on(conn: &mut PgConn, job: ReadJob) -> Result<()> {
    conn.batch("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")?;
    job(&PgTx::read(conn));
    conn.batch("COMMIT")
}

impl Store for PgStore {
    fn info(&self) -> StoreInfo {
        StoreInfo {
            location: self.location.clone(),
            schema_version: self.schema_version,
            journal_mode: "postgresql".into(),
        }
    }

    fn submit(&self, job: WriteJob) -> BoxFuture<'_, Result<()>> {
        Box::pin(self.writer.submit(job))
    }

    fn run_read(&self, job: ReadJob) -> BoxFuture<'_, Result<()>> {
        let (idle, permits, shared) = (self.idle.clone(), self.permits.clone(), self.shared.clone());
        Box::pin(async move {
            let _permit =
                permits.acquire_owned().await.map_err(|_| Error::Internal("the read pool is closed".into()))?;
            tokio::task::spawn_blocking(move || -> Result<()> {
                let mut conn = match idle.take() {
                    Some(c) if !c.is_closed() => c,
                    _ => PgConn::connect(&shared.cfg)?,
                };
                let out = read_on(&mut conn, job);
                if out.is_ok() && !conn.is_closed() {
                    idle.put(conn);
                }
                out
            })
            .await
            .map_err(|e| Error::Internal(format!("read task failed: {e}")))?
        })
    }

    fn duties(&self) -> watch::Receiver<bool> {
        self.follower.duties()
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            self.writer.stop().await;
            let handle = self.writer_thread.lock().ok().and_then(|mut g| g.take());
            if let Some(h) = handle {
                let _ = tokio::task::spawn_blocking(move || h.join()).await;
            }
            self.follower.stop();
            // The synchronous client must not be dropped on the executor.
            let idle = self.idle.drain();
            let _ = tokio::task::spawn_blocking(move || drop(idle)).await;
        })
    }
}
