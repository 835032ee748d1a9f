//! The single writer: one thread owns the only read-write connection and group-commits.
//!
//! It blocks for the first job, drains whatever else is queued (up to [`MAX_BATCH`]), runs
//! them all inside one `BEGIN IMMEDIATE` transaction (without savepoints; again with a
//! SAVEPOINT per job if one fails after writing, so that it rolls back alone), commits
//! once, then publishes the batch's events on the bus and answers each caller. A batch
//! that cannot commit (a full disk, a read-only file) fails as a whole with
//! `io_write_failed`, and the next batch simply tries again. A reply that says ok therefore always follows a durable commit, and
//! the event stream is published in commit order. With one writer there is no
//! `SQLITE_BUSY` between writers and claims are serialized without retries.
//!
//! Checkpoints (SQLite's automatic checkpoint is off) are shared with the
//! [`Checkpointer`](super::checkpoint::Checkpointer) thread. Every [`CHECKPOINT_EVERY`]
//! jobs the writer asks it to copy the WAL into the database; it does, concurrently with
//! further commits, round after round until few frames are left, and says so. The writer
//! then, between two batches, checkpoints the last few frames itself: only then is every
//! frame copied at the moment a write transaction starts, which is what lets SQLite
//! restart the WAL from its beginning. (A checkpoint that only ever runs concurrently
//! with a continuous stream of commits never gets there: the WAL grows without bound,
//! measured at 2 GB after 64k sends.) Commits thus wait for a small checkpoint, never for
//! a large one.

use std::panic::{AssertUnwindSafe, catch_unwind};

use rusqlite::Connection;

use coord_proto::types::Event;

use super::checkpoint::Checkpointer;
use super::tx::{SqliteTx, unwritable};
use crate::bus::Bus;
use crate::error::Error;
use crate::store::backend::WriteJob;
use crate::store::queue::{MAX_BATCH, Queue, Writer};

/// Jobs committed between two WAL checkpoints.
const CHECKPOINT_EVERY: usize = 1000;

/// Start the writer thread on `conn`, publishing committed events on `bus`, with
/// `checkpointer` for the bulk of its checkpoints.
pub fn spawn(
    conn: Connection,
    bus: Bus,
    checkpointer: Checkpointer,
) -> std::io::Result<(Writer, std::thread::JoinHandle<()>)> {
    Writer::spawn("coordd-writer", move |queue| run(conn, queue, bus, checkpointer, Vec::new(), true))
}

/// The writer's loop. `batch` holds jobs already taken from the queue (by the read-only
/// writer, see `read_only`), `more` whether the queue was still open when they were.
pub(super) fn run(
    conn: Connection,
    mut queue: Queue,
    bus: Bus,
    checkpointer: Checkpointer,
    mut batch: Vec<WriteJob>,
    mut more: bool,
) {
    batch.reserve(MAX_BATCH);
    if batch.is_empty() && more {
        more = queue.next_batch(&mut batch);
    }
    let mut since_checkpoint = 0;
    loop {
        since_checkpoint += batch.len();
        run_batch(&conn, &mut batch, &bus);
        if !more {
            break;
        }
        if checkpointer.caught_up() {
            // The bulk is copied: copy the rest, so the next transaction restarts the WAL.
            checkpoint(&conn, "PASSIVE");
        } else if since_checkpoint >= CHECKPOINT_EVERY && checkpointer.request() {
            since_checkpoint = 0;
        }
        more = queue.next_batch(&mut batch);
    }
    checkpointer.stop();
    // Refuse whatever arrives from now on, fold the WAL into the database and truncate it.
    queue.close(&mut batch);
    run_batch(&conn, &mut batch, &bus);
    checkpoint(&conn, "TRUNCATE");
    queue.finished();
}

/// Run a parameterless statement through the statement cache (no parse per batch).
fn run_cached(conn: &Connection, sql: &str) -> rusqlite::Result<usize> {
    conn.prepare_cached(sql)?.execute([])
}

fn checkpoint(conn: &Connection, mode: &str) {
    if let Err(e) = conn.query_row(&format!("PRAGMA wal_checkpoint({mode})"), [], |_| Ok(())) {
        tracing::warn!(error = %e, mode, "WAL checkpoint failed");
    }
}

/// How a batch's jobs are isolated from each other inside the transaction.
#[derive(Clone, Copy, PartialEq)]
enum Isolation {
    /// No savepoints. A job that fails before writing anything needs none; one that fails
    /// after writing poisons the batch, which is then rolled back and run again per job.
    Shared,
    /// A SAVEPOINT per job, so a failing job rolls back alone.
    PerJob,
}

/// What one attempt at a batch came to.
enum Attempt {
    Committed(Vec<Event>),
    /// The transaction could not be opened or committed; every job fails with this.
    Failed(Error),
    /// A job failed after writing; the transaction was rolled back.
    Poisoned,
}

/// Run a batch of jobs in one transaction, answer them, publish their events.
///
/// The batch first runs without savepoints: nearly every job checks everything before its
/// first write, and a statement journal per job costs every job a copy of each page it
/// touches. Should a job fail (or panic) after writing, that attempt is rolled back and
/// the whole batch runs again, each job in a savepoint of its own (jobs are repeatable,
/// see `store::backend::Job`).
pub(super) fn run_batch(conn: &Connection, batch: &mut Vec<WriteJob>, bus: &Bus) {
    if batch.is_empty() {
        return;
    }
    let outcome = match attempt(conn, batch, Isolation::Shared) {
        Attempt::Poisoned => {
            tracing::warn!("a write job failed after writing; running its batch again, one savepoint per job");
            attempt(conn, batch, Isolation::PerJob)
        }
        other => other,
    };
    let commit_err = match outcome {
        Attempt::Committed(events) => {
            bus.publish(events);
            None
        }
        Attempt::Failed(e) => Some(e),
        Attempt::Poisoned => Some(Error::Internal("a write job failed after writing in its own savepoint".into())),
    };
    for job in batch.drain(..) {
        job.complete(commit_err.as_ref());
    }
}

fn attempt(conn: &Connection, batch: &mut [WriteJob], isolation: Isolation) -> Attempt {
    if let Err(e) = run_cached(conn, "BEGIN IMMEDIATE") {
        tracing::error!(error = %e, "cannot begin write transaction");
        for job in batch.iter_mut() {
            job.run(None);
        }
        return Attempt::Failed(failure("cannot begin a write transaction", &e));
    }
    let mut events = Vec::new();
    for job in batch.iter_mut() {
        // SQLite rolls the whole transaction back by itself on some errors (disk full, I/O
        // error). Then a SAVEPOINT would silently open, and RELEASE commit, a transaction of
        // its own: so from that point on no job runs, and the batch fails as a whole.
        if conn.is_autocommit() {
            return Attempt::Failed(rolled_back());
        }
        let per_job = isolation == Isolation::PerJob;
        if per_job && let Err(e) = run_cached(conn, "SAVEPOINT job") {
            tracing::error!(error = %e, "savepoint failed");
        }
        let before = conn.total_changes();
        let mut tx = SqliteTx::new(conn);
        let ok = catch_unwind(AssertUnwindSafe(|| job.run(Some(&mut tx)))).unwrap_or_else(|_| {
            tracing::error!("a write job panicked; it was rolled back");
            false
        });
        if ok {
            if per_job {
                let _ = run_cached(conn, "RELEASE job");
            }
            events.append(&mut tx.take_published());
        } else if per_job {
            let _ = run_cached(conn, "ROLLBACK TO job").and_then(|_| run_cached(conn, "RELEASE job"));
        } else if conn.total_changes() != before {
            let _ = conn.execute_batch("ROLLBACK");
            return Attempt::Poisoned;
        }
    }
    if conn.is_autocommit() {
        return Attempt::Failed(rolled_back());
    }
    match run_cached(conn, "COMMIT") {
        Ok(_) => Attempt::Committed(events),
        Err(e) => {
            tracing::error!(error = %e, "commit failed; rolling back the batch");
            let _ = conn.execute_batch("ROLLBACK");
            Attempt::Failed(failure("commit failed", &e))
        }
    }
}

/// A transaction that could not be opened or committed: `io_write_failed` when the cause
/// is a full disk, a read-only file or an I/O error, else `storage`.
fn failure(what: &str, e: &rusqlite::Error) -> Error {
    match unwritable(e) {
        Some(why) => Error::WriteFailed(why),
        None => Error::Storage(format!("{what}: {e}")),
    }
}

/// SQLite rolls a transaction back by itself after some errors (a full disk, an I/O error).
fn rolled_back() -> Error {
    tracing::error!("SQLite rolled the write transaction back (disk full or I/O error)");
    Error::WriteFailed(
        "cannot write to the database: SQLite rolled the transaction back after a disk-full or I/O error; \
         nothing of this call was saved, and it can be retried once that is fixed (reads keep working)"
            .into(),
    )
}
