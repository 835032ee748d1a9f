//! The single writer: one thread owns the only read-write connection and group-commits.
//!
//! It blocks for the first job, drains whatever else is queued (up to [`MAX_BATCH`]), runs
//! them all inside one `BEGIN IMMEDIATE` transaction through the shared
//! [`group_commit`] engine (without savepoints; again with a SAVEPOINT per job if one
//! fails after writing, so that it rolls back alone), commits once, then publishes the
//! batch's events on the bus and answers each caller. A batch
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

use rusqlite::Connection;

use super::checkpoint::Checkpointer;
use super::tx::{BatchCache, SqliteTx, unwritable};
use crate::bus::Bus;
use crate::error::{Error, Result};
use crate::store::backend::WriteJob;
use crate::store::group_commit::{self, Conn, JobRun, Outcome};
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

/// The writer's connection as the group-commit engine drives it, with the batch's cache
/// of settings and agent rows (emptied whenever something is rolled back).
struct Sqlite<'c> {
    conn: &'c Connection,
    cache: BatchCache,
}

impl Conn for Sqlite<'_> {
    fn begin(&mut self, _per_job: bool) -> Result<()> {
        self.cache.clear();
        run_cached(self.conn, "BEGIN IMMEDIATE").map(drop).map_err(|e| failure("cannot begin a write transaction", &e))
    }

    fn savepoint(&mut self) -> Result<()> {
        run_cached(self.conn, "SAVEPOINT job").map(drop).map_err(|e| failure("savepoint failed", &e))
    }

    fn release(&mut self) -> Result<()> {
        run_cached(self.conn, "RELEASE job").map(drop).map_err(|e| failure("savepoint release failed", &e))
    }

    fn rollback_to(&mut self) -> Result<()> {
        self.cache.clear();
        run_cached(self.conn, "ROLLBACK TO job")
            .and_then(|_| run_cached(self.conn, "RELEASE job"))
            .map(drop)
            .map_err(|e| failure("savepoint rollback failed", &e))
    }

    fn commit(&mut self) -> Result<()> {
        run_cached(self.conn, "COMMIT").map(drop).map_err(|e| failure("commit failed", &e))
    }

    fn rollback(&mut self) {
        self.cache.clear();
        // SQLite may have rolled back by itself (disk full, I/O error).
        if !self.conn.is_autocommit()
            && let Err(e) = self.conn.execute_batch("ROLLBACK")
        {
            tracing::error!(error = %e, "rollback failed");
        }
    }

    fn run(&mut self, job: &mut WriteJob) -> JobRun {
        let before = self.conn.total_changes();
        let mut tx = SqliteTx::cached(self.conn, &self.cache);
        let ok = group_commit::run_job(job, &mut tx);
        let events = tx.take_published();
        JobRun { ok, dirty: self.conn.total_changes() != before, events }
    }

    fn lost(&mut self) -> Option<Error> {
        // SQLite rolls the whole transaction back by itself on some errors (disk full, I/O
        // error); the batch then fails as a whole.
        self.conn.is_autocommit().then(rolled_back)
    }
}

/// Run a batch of jobs in one transaction (see [`group_commit`]), answer them, publish
/// their events.
pub(super) fn run_batch(conn: &Connection, batch: &mut Vec<WriteJob>, bus: &Bus) {
    if batch.is_empty() {
        return;
    }
    let commit_err = match group_commit::run(&mut Sqlite { conn, cache: BatchCache::default() }, batch) {
        Outcome::Committed(events) => {
            bus.publish(events);
            None
        }
        Outcome::NotBegun(e) | Outcome::Failed(e) => Some(e),
    };
    group_commit::complete(batch, commit_err.as_ref());
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
    Error::WriteFailed(
        "cannot write to the database: SQLite rolled the transaction back after a disk-full or I/O error; \
         nothing of this call was saved, and it can be retried once that is fixed (reads keep working)"
            .into(),
    )
}
