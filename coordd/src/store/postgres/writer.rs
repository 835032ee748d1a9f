//! The writer: one thread per instance owns the connection that writes, and group-commits
//! like the SQLite writer (same batches, same poisoned-batch re-run with a savepoint per
//! job, same "reply only after COMMIT").
//!
//! What several instances on one database add, per transaction:
//!
//! 1. `pg_advisory_xact_lock(write key)` first: write transactions of all instances run
//!    one at a time, as SQLite's single writer runs them on one host. Every rule is a
//!    read-check-write inside its transaction, so this is what keeps them correct across
//!    instances unchanged: exactly one grant for racing claims, generations that only
//!    grow, a dispatch recorded once (its write re-checks the attempt number), one
//!    reservation per exclusive scope. The lock is taken by its own statement, before any
//!    read, so every later statement (READ COMMITTED: a snapshot per statement) sees every
//!    earlier holder's commit.
//! 2. Event ids from the counter row, locked when the transaction begins (see
//!    [`super::tx::EventIds`]) and stored back before `COMMIT`: ids commit in order, so a
//!    cursor never skips one. (The advisory lock alone would order them too; the row lock
//!    keeps the guarantee for any other writer, such as `coordd migrate`.)
//! 3. No `NOTIFY` in any write transaction: after a batch that recorded events commits,
//!    its last id goes to the [`Notifier`](super::notify::Notifier), whose own thread and
//!    connection tell the other daemons, sharing one notification among batches that
//!    commit faster than it sends.
//!
//! A lost connection fails the batch (`storage`, nothing acknowledged); the next batch
//! connects again.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use coord_proto::types::Event;

use super::conn::PgConn;
use super::follow::Shared;
use super::notify::Notifier;
use super::tx::{EventIds, PgTx};
use crate::error::{Error, Result};
use crate::store::backend::WriteJob;
use crate::store::queue::{MAX_BATCH, Queue, Writer};

/// Start the writer thread on `conn` (reconnecting through `shared` when it is lost).
pub fn spawn(conn: PgConn, shared: Arc<Shared>) -> std::io::Result<(Writer, std::thread::JoinHandle<()>)> {
    let notifier = Notifier::spawn(shared.clone())?;
    Writer::spawn("coordd-pg-writer", move |queue| run(Some(conn), queue, shared, notifier))
}

fn run(mut conn: Option<PgConn>, mut queue: Queue, shared: Arc<Shared>, notifier: Notifier) {
    let mut batch: Vec<WriteJob> = Vec::with_capacity(MAX_BATCH);
    while queue.next_batch(&mut batch) {
        run_batch(&mut conn, &mut batch, &shared, &notifier);
    }
    queue.close(&mut batch);
    run_batch(&mut conn, &mut batch, &shared, &notifier);
    queue.finished();
}

/// How a batch's jobs are isolated from each other inside the transaction.
#[derive(Clone, Copy, PartialEq)]
enum Isolation {
    Shared,
    PerJob,
}

enum Attempt {
    Committed(Vec<Event>),
    /// The transaction could not begin: nothing of the batch reached the server.
    NotBegun(Error),
    Failed(Error),
    Poisoned,
}

/// Run a batch in one transaction, publish its events, answer its jobs.
fn run_batch(conn: &mut Option<PgConn>, batch: &mut Vec<WriteJob>, shared: &Shared, notifier: &Notifier) {
    if batch.is_empty() {
        return;
    }
    let mut outcome = None;
    // A connection found dead at BEGIN (the server restarted while it sat idle) is
    // replaced and the batch begun again: nothing of it had reached the server.
    for _ in 0..2 {
        if !connected(conn, shared) {
            break;
        }
        let Some(c) = conn.as_mut() else { break };
        match attempt(c, batch, Isolation::Shared, shared) {
            Attempt::NotBegun(e) if c.is_closed() => {
                *conn = None;
                outcome = Some(Attempt::Failed(e));
            }
            other => {
                outcome = Some(other);
                break;
            }
        }
    }
    let (Some(c), Some(outcome)) = (conn.as_mut(), outcome) else {
        fail(batch, &Error::Storage("PostgreSQL is unreachable".into()));
        return;
    };
    let outcome = match outcome {
        Attempt::Poisoned => {
            tracing::warn!("a write job failed after writing; running its batch again, one savepoint per job");
            attempt(c, batch, Isolation::PerJob, shared)
        }
        other => other,
    };
    let commit_err = match outcome {
        Attempt::Committed(events) => {
            if let Some(last) = events.last() {
                notifier.committed(last.event_id);
            }
            shared.publisher.committed(c, events);
            None
        }
        Attempt::Failed(e) | Attempt::NotBegun(e) => Some(e),
        Attempt::Poisoned => Some(Error::Internal("a write job failed after writing in its own savepoint".into())),
    };
    if c.is_closed() {
        *conn = None;
    }
    for job in batch.drain(..) {
        job.complete(commit_err.as_ref());
    }
}

/// Make sure the writer has a connection; false (logged) when PostgreSQL is unreachable.
fn connected(conn: &mut Option<PgConn>, shared: &Shared) -> bool {
    if conn.as_ref().is_some_and(|c| !c.is_closed()) {
        return true;
    }
    match PgConn::connect(&shared.cfg).and_then(PgConn::writer_plans) {
        Ok(c) => {
            tracing::info!("writer connected to PostgreSQL");
            *conn = Some(c);
            true
        }
        Err(e) => {
            tracing::warn!(error = %e, "writer cannot reach PostgreSQL; failing the batch");
            *conn = None;
            false
        }
    }
}

fn fail(batch: &mut Vec<WriteJob>, e: &Error) {
    for job in batch.iter_mut() {
        job.run(None);
    }
    for job in batch.drain(..) {
        job.complete(Some(e));
    }
}

fn rollback(c: &mut PgConn) {
    let _ = c.batch("ROLLBACK");
}

fn attempt(c: &mut PgConn, batch: &mut [WriteJob], isolation: Isolation, shared: &Shared) -> Attempt {
    // One round trip: begin, take the write lock, then the counter row (every batch takes
    // it; only a batch that recorded events stores it back).
    let begin = format!(
        "BEGIN; SELECT pg_advisory_xact_lock({}); SELECT last FROM coordd_event_counter FOR UPDATE",
        shared.write_key
    );
    let begun = c.batch_value(&begin).and_then(|v| {
        v.and_then(|s| s.parse::<i64>().ok()).ok_or_else(|| Error::Storage("the event counter row is missing".into()))
    });
    let last = match begun {
        Ok(last) => last,
        Err(e) => {
            tracing::error!(error = %e, "cannot begin a write transaction");
            rollback(c);
            for job in batch.iter_mut() {
                job.run(None);
            }
            return Attempt::NotBegun(Error::Storage(format!("cannot begin a write transaction: {e}")));
        }
    };
    let per_job = isolation == Isolation::PerJob;
    let mut ids = EventIds::locked(last);
    let mut events = Vec::new();
    for job in batch.iter_mut() {
        if per_job && let Err(e) = c.batch("SAVEPOINT job") {
            rollback(c);
            return Attempt::Failed(Error::Storage(format!("savepoint failed: {e}")));
        }
        let before = ids;
        let mut tx = PgTx::write(c, &mut ids);
        let ok = catch_unwind(AssertUnwindSafe(|| job.run(Some(&mut tx)))).unwrap_or_else(|_| {
            tracing::error!("a write job panicked; it was rolled back");
            false
        });
        let (dirty, failed_statement, mut published) = (tx.dirty(), tx.statement_failed(), tx.take_published());
        // A job that swallowed a failed statement left PostgreSQL's transaction aborted:
        // it is rolled back like a failing one.
        let ok = ok && !failed_statement;
        if ok {
            if per_job && let Err(e) = c.batch("RELEASE job") {
                rollback(c);
                return Attempt::Failed(Error::Storage(format!("savepoint release failed: {e}")));
            }
            events.append(&mut published);
        } else if per_job {
            ids = before;
            if let Err(e) = c.batch("ROLLBACK TO job; RELEASE job") {
                rollback(c);
                return Attempt::Failed(Error::Storage(format!("savepoint rollback failed: {e}")));
            }
        } else if dirty {
            rollback(c);
            return Attempt::Poisoned;
        }
        if c.is_closed() {
            return Attempt::Failed(Error::Storage("the connection to PostgreSQL was lost".into()));
        }
    }
    if let Err(e) = finish(c, ids) {
        tracing::error!(error = %e, "commit failed; rolling back the batch");
        rollback(c);
        return Attempt::Failed(Error::Storage(format!("commit failed: {e}")));
    }
    Attempt::Committed(events)
}

/// Store the counter and commit, in one round trip (a failing statement skips the rest,
/// and the caller rolls back).
fn finish(c: &mut PgConn, ids: EventIds) -> Result<()> {
    let mut sql = String::new();
    if let Some(last) = ids.to_store() {
        sql.push_str(&format!("UPDATE coordd_event_counter SET last = {last}; "));
    }
    sql.push_str("COMMIT");
    c.batch(&sql)
}
