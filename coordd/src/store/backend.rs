//! [`Store`]: what a storage backend provides around the repositories. Writes run inside
//! a transaction on the backend's writer and return only once durable, after which their
//! events are published on the [`crate::bus::Bus`]; reads see one consistent snapshot and
//! never write. Both run off the async executor threads.
//!
//! The trait is object-safe (the daemon holds an `Arc<dyn Store>`, chosen at start-up);
//! the typed helpers [`write`] and [`read`] sit on top of it.

use futures::future::BoxFuture;
use tokio::sync::oneshot;

use super::repos::Tx;
use crate::error::{Error, Result};

/// Facts about the backing store, for discovery and `inbox.init`.
#[derive(Debug, Clone)]
pub struct StoreInfo {
    pub location: String,
    pub schema_version: i64,
    pub journal_mode: String,
}

/// One unit of work for the writer.
///
/// [`Job::run`] runs it inside the write transaction and says whether it succeeded. A
/// writer may run it again, on a fresh transaction, when the batch it shared had to be
/// rolled back (see the SQLite writer), so a job must be repeatable: it keeps nothing but
/// the outcome of its last run. [`Job::complete`] then delivers that outcome, once the
/// transaction committed (`None`) or failed.
pub trait Job: Send {
    /// Run inside the transaction (`None`: no transaction could be opened); true on success.
    fn run(&mut self, tx: Option<&mut dyn Tx>) -> bool;
    /// Deliver the last run's outcome.
    fn complete(self: Box<Self>, commit_err: Option<&Error>);
}

pub type WriteJob = Box<dyn Job>;

/// A [`Job`] from a repeatable closure, answering on a channel.
struct Closure<F, T> {
    f: F,
    last: Option<Result<T>>,
    reply: oneshot::Sender<Result<T>>,
}

impl<F, T> Job for Closure<F, T>
where
    T: Send + 'static,
    F: FnMut(&mut dyn Tx) -> Result<T> + Send + 'static,
{
    fn run(&mut self, tx: Option<&mut dyn Tx>) -> bool {
        let res = match tx {
            Some(tx) => (self.f)(tx),
            None => Err(Error::Storage("cannot open a write transaction".into())),
        };
        let ok = res.is_ok();
        self.last = Some(res);
        ok
    }

    fn complete(self: Box<Self>, commit_err: Option<&Error>) {
        let out = match (self.last, commit_err) {
            // The batch failed before this job's turn.
            (None, Some(e)) => Err(e.shared()),
            (None, None) => Err(Error::Internal("the write job never ran (it panicked?)".into())),
            (Some(Ok(_)), Some(e)) => Err(e.shared()),
            (Some(res), _) => res,
        };
        let _ = self.reply.send(out);
    }
}

/// A read: runs on a consistent snapshot.
pub type ReadJob = Box<dyn FnOnce(&dyn Tx) + Send>;

pub trait Store: Send + Sync + 'static {
    fn info(&self) -> StoreInfo;
    /// Queue a write job (waiting while the writer's queue is full).
    fn submit(&self, job: WriteJob) -> BoxFuture<'_, Result<()>>;
    /// Run a read job on a snapshot, off the executor threads.
    fn run_read(&self, job: ReadJob) -> BoxFuture<'_, Result<()>>;
    /// Present while the store refuses writes because it could not be opened for writing
    /// (SQLite on a full disk); `system.hello` reports it. PostgreSQL never is.
    fn read_only(&self) -> Option<coord_proto::types::ReadOnlyState> {
        None
    }
    /// Whether this daemon runs the project's background duties (lease-expiry events,
    /// automatic retries) now. Where several daemons share one store only one does at a
    /// time; a store that one daemon owns always does (the default).
    fn duties(&self) -> tokio::sync::watch::Receiver<bool> {
        tokio::sync::watch::channel(true).1
    }
    /// Finish the queued writes and release the storage; called once at shutdown.
    fn close(&self) -> BoxFuture<'_, ()>;
}

/// Run `f` in a write transaction; returns after the commit. `f` may run more than once
/// (see [`Job`]).
pub async fn write<T, F>(store: &dyn Store, f: F) -> Result<T>
where
    T: Send + 'static,
    F: FnMut(&mut dyn Tx) -> Result<T> + Send + 'static,
{
    submit(store, f).await?.await.map_err(|_| Error::Internal("the writer dropped the request".into()))?
}

/// Queue `f` to run in a write transaction, without waiting for it: returns once it is
/// queued, with the receiver of its outcome (after the commit).
pub async fn submit<T, F>(store: &dyn Store, f: F) -> Result<oneshot::Receiver<Result<T>>>
where
    T: Send + 'static,
    F: FnMut(&mut dyn Tx) -> Result<T> + Send + 'static,
{
    let (reply, rx) = oneshot::channel();
    store.submit(Box::new(Closure { f, last: None, reply })).await?;
    Ok(rx)
}

/// Run `f` on a consistent read snapshot.
pub async fn read<T, F>(store: &dyn Store, f: F) -> Result<T>
where
    T: Send + 'static,
    F: FnOnce(&dyn Tx) -> Result<T> + Send + 'static,
{
    let (reply, rx) = oneshot::channel();
    store
        .run_read(Box::new(move |tx| {
            let _ = reply.send(f(tx));
        }))
        .await?;
    rx.await.map_err(|_| Error::Internal("a read failed to answer (it panicked?)".into()))?
}
