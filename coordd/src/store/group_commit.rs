//! The group-commit engine both writers share: a batch of write jobs runs in one
//! transaction over a [`Conn`] (begin, savepoint, rollback-to, commit), with the
//! driver-specific parts behind that trait (`store::sqlite::writer`,
//! `store::postgres::writer`).
//!
//! A batch first runs without savepoints: nearly every job checks everything before its
//! first write, and a savepoint per job costs every job (SQLite copies each page it touches
//! into a statement journal, PostgreSQL takes two more statements). A job that fails
//! before writing leaves nothing to undo. Should one fail (or panic) after writing, that
//! attempt is rolled back and the whole batch runs again, each job in a savepoint of its
//! own, so that it alone is rolled back (jobs are repeatable, see
//! [`Job`](super::backend::Job)). The caller answers the jobs only after the outcome is
//! known ([`complete`]), so a reply that says ok always follows a durable commit.

use std::panic::{AssertUnwindSafe, catch_unwind};

use coord_proto::types::Event;

use super::backend::WriteJob;
use super::repos::Tx;
use crate::error::{Error, Result};

/// What one job's run inside the transaction came to.
pub struct JobRun {
    /// The job succeeded.
    pub ok: bool,
    /// The job left something to roll back (a write, or a failed statement).
    pub dirty: bool,
    /// The events it published, to publish once the transaction commits.
    pub events: Vec<Event>,
}

/// One driver's write connection, as the engine drives it. Every method that returns an
/// error has already made that error clear to a user (`io_write_failed` for a full disk,
/// `storage` otherwise).
pub trait Conn {
    /// Open the batch's transaction. `per_job`: every job will run in a savepoint of its
    /// own, so a driver that holds writes back to send them together must send each at
    /// once (a job's failure must be its own).
    fn begin(&mut self, per_job: bool) -> Result<()>;
    /// The transaction is open (and its first run has not started): add the jobs that were
    /// submitted meanwhile to the batch (none by default). PostgreSQL's `BEGIN` may have
    /// waited for another daemon's write lock; what queued up during that wait goes in the
    /// same transaction instead of waiting for the next turn.
    fn top_up(&mut self, _batch: &mut Vec<WriteJob>) {}
    /// Send the writes held back to be sent together (none by default): before the
    /// commit of a batch without savepoints. A failure poisons the batch.
    fn flush(&mut self) -> Result<()> {
        Ok(())
    }
    /// Mark where the next job starts.
    fn savepoint(&mut self) -> Result<()>;
    /// The job since the last savepoint succeeded: forget the mark.
    fn release(&mut self) -> Result<()>;
    /// The job since the last savepoint failed: undo it, and forget the mark.
    fn rollback_to(&mut self) -> Result<()>;
    /// Commit the transaction.
    fn commit(&mut self) -> Result<()>;
    /// Abandon the transaction (errors are logged, not returned: there is nothing more to undo).
    fn rollback(&mut self);
    /// Run one job inside the open transaction (through [`run_job`], which catches a panic).
    fn run(&mut self, job: &mut WriteJob) -> JobRun;
    /// The transaction is gone under the engine's feet (SQLite rolled it back after a
    /// disk-full error; the PostgreSQL connection was lost): why, so the batch fails.
    fn lost(&mut self) -> Option<Error>;
}

/// How a batch's jobs are isolated from each other inside the transaction.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Isolation {
    /// No savepoints: a job that fails after writing poisons the batch.
    Shared,
    /// A savepoint per job, so a failing job rolls back alone.
    PerJob,
}

/// What running a batch came to.
#[derive(Debug)]
pub enum Outcome {
    /// Committed: these events (in commit order) are to be published.
    Committed(Vec<Event>),
    /// The transaction could not begin: nothing of the batch reached the store.
    NotBegun(Error),
    /// The transaction could not be completed or committed; every job fails with this.
    Failed(Error),
}

enum Attempt {
    Done(Outcome),
    /// A job failed after writing; the transaction was rolled back.
    Poisoned,
}

/// Run `batch` in one transaction on `c`: without savepoints first, again with one per job
/// if a job failed after writing. The jobs keep their last run's result, for [`complete`].
pub fn run<C: Conn>(c: &mut C, batch: &mut Vec<WriteJob>) -> Outcome {
    match attempt(c, batch, Isolation::Shared) {
        Attempt::Done(outcome) => outcome,
        Attempt::Poisoned => {
            tracing::warn!("a write job failed after writing; running its batch again, one savepoint per job");
            match attempt(c, batch, Isolation::PerJob) {
                Attempt::Done(outcome) => outcome,
                Attempt::Poisoned => {
                    Outcome::Failed(Error::Internal("a write job failed after writing in its own savepoint".into()))
                }
            }
        }
    }
}

/// Answer every job of the batch (emptying it): its own result, or `commit_err`.
pub fn complete(batch: &mut Vec<WriteJob>, commit_err: Option<&Error>) {
    for job in batch.drain(..) {
        job.complete(commit_err);
    }
}

/// Run `job` on `tx`; false if it failed or panicked (a panic is logged, and the job is
/// rolled back like a failing one).
pub fn run_job(job: &mut WriteJob, tx: &mut dyn Tx) -> bool {
    catch_unwind(AssertUnwindSafe(|| job.run(Some(tx)))).unwrap_or_else(|_| {
        tracing::error!("a write job panicked; it was rolled back");
        false
    })
}

/// Fail a batch that no transaction could be opened for.
pub fn fail(batch: &mut Vec<WriteJob>, e: &Error) {
    for job in batch.iter_mut() {
        job.run(None);
    }
    complete(batch, Some(e));
}

fn attempt<C: Conn>(c: &mut C, batch: &mut Vec<WriteJob>, isolation: Isolation) -> Attempt {
    let per_job = isolation == Isolation::PerJob;
    if let Err(e) = c.begin(per_job) {
        tracing::error!(error = %e, "cannot begin a write transaction");
        c.rollback();
        for job in batch.iter_mut() {
            job.run(None);
        }
        return Attempt::Done(Outcome::NotBegun(e));
    }
    if !per_job {
        // (A re-run with savepoints keeps the batch it re-runs.)
        c.top_up(batch);
    }
    let mut events = Vec::new();
    for job in batch.iter_mut() {
        // Checked before every job: once the transaction is gone, a savepoint would open
        // (and its release commit) a transaction of its own.
        if let Some(e) = c.lost() {
            return failed(c, e);
        }
        if per_job && let Err(e) = c.savepoint() {
            return failed(c, e);
        }
        let run = c.run(job);
        if run.ok {
            if per_job && let Err(e) = c.release() {
                return failed(c, e);
            }
            events.extend(run.events);
        } else if per_job {
            if let Err(e) = c.rollback_to() {
                return failed(c, e);
            }
        } else if run.dirty {
            c.rollback();
            return Attempt::Poisoned;
        }
    }
    if let Err(e) = c.flush() {
        if let Some(e) = c.lost() {
            return failed(c, e);
        }
        tracing::warn!(error = %e, "the batch's held writes failed");
        c.rollback();
        return Attempt::Poisoned;
    }
    if let Some(e) = c.lost() {
        return failed(c, e);
    }
    match c.commit() {
        Ok(()) => Attempt::Done(Outcome::Committed(events)),
        Err(e) => failed(c, e),
    }
}

/// Roll back and fail the batch: with why the transaction was lost if it was (a step that
/// failed after that, a savepoint's rollback say, is only its consequence), else with `e`.
fn failed<C: Conn>(c: &mut C, e: Error) -> Attempt {
    let e = c.lost().unwrap_or(e);
    tracing::error!(error = %e, "the write batch failed; rolling it back");
    c.rollback();
    Attempt::Done(Outcome::Failed(e))
}
