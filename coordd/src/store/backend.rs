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

/// Called after the transaction's outcome is known: `None` when it committed.
pub type Completion = Box<dyn FnOnce(Option<&Error>) + Send>;

/// One unit of work for the writer. It runs inside the write transaction (isolated: if it
/// fails, its changes roll back alone), returns whether it succeeded, and a completion
/// that runs once the transaction committed or failed. It is called with `None` when no
/// transaction could be opened, so that its caller still gets an answer.
pub type WriteJob = Box<dyn FnOnce(Option<&mut dyn Tx>) -> (bool, Completion) + Send>;

/// A read: runs on a consistent snapshot.
pub type ReadJob = Box<dyn FnOnce(&dyn Tx) + Send>;

pub trait Store: Send + Sync + 'static {
    fn info(&self) -> StoreInfo;
    /// Queue a write job (waiting while the writer's queue is full).
    fn submit(&self, job: WriteJob) -> BoxFuture<'_, Result<()>>;
    /// Run a read job on a snapshot, off the executor threads.
    fn run_read(&self, job: ReadJob) -> BoxFuture<'_, Result<()>>;
    /// Finish the queued writes and release the storage; called once at shutdown.
    fn close(&self) -> BoxFuture<'_, ()>;
}

/// Run `f` in a write transaction; returns after the commit.
pub async fn write<T, F>(store: &dyn Store, f: F) -> Result<T>
where
    T: Send + 'static,
    F: FnOnce(&mut dyn Tx) -> Result<T> + Send + 'static,
{
    let (reply, rx) = oneshot::channel();
    let job: WriteJob = Box::new(move |tx| {
        let res = match tx {
            Some(tx) => f(tx),
            None => Err(Error::Storage("cannot open a write transaction".into())),
        };
        let ok = res.is_ok();
        let completion: Completion = Box::new(move |commit_err| {
            let out = match (res, commit_err) {
                (Ok(_), Some(e)) => Err(Error::Storage(format!("commit failed: {e}"))),
                (res, _) => res,
            };
            let _ = reply.send(out);
        });
        (ok, completion)
    });
    store.submit(job).await?;
    rx.await.map_err(|_| Error::Internal("the writer dropped the request".into()))?
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
