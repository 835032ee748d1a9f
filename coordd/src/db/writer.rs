//! The single writer: one thread owns the only read-write connection and group-commits.
//!
//! It blocks for the first job, drains whatever else is queued (up to [`MAX_BATCH`]), runs
//! them all inside one `BEGIN IMMEDIATE` transaction with a SAVEPOINT per job (so a failing
//! job rolls back alone), commits once, then publishes the batch's events and answers each
//! caller. A reply that says ok therefore always follows a durable commit, and the event
//! stream is published in commit order. With one writer there is no `SQLITE_BUSY` between
//! writers and claims are serialized without retries.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use coord_proto::types::Event;
use rusqlite::Connection;
use tokio::sync::{broadcast, mpsc, oneshot};

use crate::db::Published;
use crate::error::{Error, Result};

/// Most jobs folded into one transaction.
pub const MAX_BATCH: usize = 512;

/// What a job sees: the open transaction, the clock of this batch and the events it appends.
pub struct WriteCtx<'c> {
    pub conn: &'c Connection,
    events: Vec<Event>,
}

impl<'c> WriteCtx<'c> {
    /// Record an event written by this job; it is published after the commit.
    pub fn push_event(&mut self, event: Event) {
        self.events.push(event);
    }
}

type Completion = Box<dyn FnOnce(Option<&Error>) + Send>;
/// A queued write. It is called with `None` when the batch could not open a transaction,
/// so that its caller still gets an answer.
type Job = Box<dyn FnOnce(Option<&mut WriteCtx<'_>>) -> (bool, Completion) + Send>;

/// Handle to the writer thread. Cloning is cheap; the thread stops when all handles drop.
#[derive(Clone)]
pub struct Writer {
    tx: mpsc::Sender<Job>,
}

impl Writer {
    /// Start the writer thread on `conn`.
    pub fn spawn(
        conn: Connection,
        bus: broadcast::Sender<Arc<Published>>,
        last_event_id: Arc<AtomicI64>,
    ) -> std::io::Result<(Writer, std::thread::JoinHandle<()>)> {
        let (tx, rx) = mpsc::channel::<Job>(4 * MAX_BATCH);
        let handle = std::thread::Builder::new()
            .name("coordd-writer".into())
            .spawn(move || run(conn, rx, bus, last_event_id))?;
        Ok((Writer { tx }, handle))
    }

    /// Run `f` inside a write transaction and return its result once committed.
    pub async fn write<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut WriteCtx<'_>) -> Result<T> + Send + 'static,
    {
        let (reply, rx) = oneshot::channel();
        let job: Job = Box::new(move |ctx| {
            let res = match ctx {
                Some(ctx) => f(ctx),
                None => Err(Error::Internal("cannot open a write transaction".into())),
            };
            let ok = res.is_ok();
            let completion: Completion = Box::new(move |commit_err| {
                let out = match (res, commit_err) {
                    (Ok(_), Some(e)) => Err(Error::Internal(format!("commit failed: {e}"))),
                    (res, _) => res,
                };
                let _ = reply.send(out);
            });
            (ok, completion)
        });
        self.tx.send(job).await.map_err(|_| Error::Internal("the writer has stopped (daemon shutting down)".into()))?;
        rx.await.map_err(|_| Error::Internal("the writer dropped the request".into()))?
    }
}

fn run(
    conn: Connection,
    mut rx: mpsc::Receiver<Job>,
    bus: broadcast::Sender<Arc<Published>>,
    last_event_id: Arc<AtomicI64>,
) {
    let mut batch: Vec<Job> = Vec::with_capacity(MAX_BATCH);
    while let Some(first) = rx.blocking_recv() {
        batch.push(first);
        while batch.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        run_batch(&conn, &mut batch, &bus, &last_event_id);
    }
    tracing::debug!("writer stopped");
}

fn run_batch(
    conn: &Connection,
    batch: &mut Vec<Job>,
    bus: &broadcast::Sender<Arc<Published>>,
    last_event_id: &AtomicI64,
) {
    let mut completions: Vec<Completion> = Vec::with_capacity(batch.len());
    let mut events: Vec<Event> = Vec::new();
    if let Err(e) = conn.execute_batch("BEGIN IMMEDIATE") {
        tracing::error!(error = %e, "cannot begin write transaction");
        for job in batch.drain(..) {
            let (_, completion) = job(None);
            completion(None);
        }
        return;
    }
    for job in batch.drain(..) {
        let mut ctx = WriteCtx { conn, events: Vec::new() };
        if let Err(e) = conn.execute_batch("SAVEPOINT job") {
            tracing::error!(error = %e, "savepoint failed");
        }
        let outcome = catch_unwind(AssertUnwindSafe(|| job(Some(&mut ctx))));
        let ok = matches!(outcome, Ok((true, _)));
        if ok {
            let _ = conn.execute_batch("RELEASE job");
            events.append(&mut ctx.events);
        } else {
            let _ = conn.execute_batch("ROLLBACK TO job; RELEASE job");
        }
        match outcome {
            Ok((_, completion)) => completions.push(completion),
            Err(_) => {
                tracing::error!("a write job panicked; it was rolled back");
            }
        }
    }
    let commit = conn.execute_batch("COMMIT").map_err(Error::Sqlite);
    if let Err(e) = &commit {
        tracing::error!(error = %e, "commit failed; rolling back the batch");
        let _ = conn.execute_batch("ROLLBACK");
        events.clear();
    }
    if let Some(last) = events.last() {
        last_event_id.store(last.event_id, Ordering::SeqCst);
    }
    for event in events {
        match Published::new(event) {
            Ok(p) => {
                // No receivers is fine: nobody is waiting.
                let _ = bus.send(Arc::new(p));
            }
            Err(e) => tracing::error!(error = %e, "cannot serialize event"),
        }
    }
    let commit_err = commit.err();
    for completion in completions {
        completion(commit_err.as_ref());
    }
}
