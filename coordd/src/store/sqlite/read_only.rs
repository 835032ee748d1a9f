//! Read-only mode: the daemon starts even when the database cannot be opened for writing
//! because the disk is full (SQLite must write the WAL index, recover or checkpoint the WAL
//! and run `PRAGMA optimize` to open a file for writing).
//!
//! Reads are served by the usual read-only pool. The writer thread then starts without a
//! connection ([`wait_for_space`]): on each batch of writes it tries once to open the
//! database for writing (no polling loop, no timer; one attempt per batch, so the retry is
//! bounded by the writes clients make). While that fails every job of the batch is refused
//! with `read_only`; once it succeeds the state is cleared, the log says so, the batch runs
//! and the thread carries on as the normal writer. [`ReadOnlyFlag`] is what `system.hello`
//! (and so `coordd status`) reports.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use coord_proto::types::ReadOnlyState;
use rusqlite::Connection;

use super::checkpoint::Checkpointer;
use super::tx::DISK_FULL;
use crate::bus::Bus;
use crate::error::Error;
use crate::store::backend::WriteJob;
use crate::store::queue::{MAX_BATCH, Queue};

/// Whether the store runs read-only, and why; shared by the store and its writer thread.
#[derive(Default, Clone)]
pub struct ReadOnlyFlag(Arc<Mutex<Option<ReadOnlyState>>>);

impl ReadOnlyFlag {
    /// The state to report, `None` while writes are taken.
    pub fn get(&self) -> Option<ReadOnlyState> {
        self.0.lock().map(|g| g.clone()).unwrap_or(None)
    }

    fn set(&self, state: Option<ReadOnlyState>) {
        if let Ok(mut g) = self.0.lock() {
            *g = state;
        }
    }

    /// Go read-only because opening for writing failed with `cause`.
    pub fn enter(&self, cause: &Error) {
        let message = cause.to_string();
        let reason = if message.contains(DISK_FULL) { "disk_full" } else { "unwritable" };
        tracing::error!(
            reason,
            error = %message,
            "the database cannot be opened for writing: serving read-only; writes are refused with read_only \
             until space returns (the next write after that reopens it)"
        );
        let since = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
        self.set(Some(ReadOnlyState { reason: reason.into(), message, since }));
    }

    /// The error every refused write gets.
    fn refusal(&self, cause: &Error) -> Error {
        let message = cause.to_string();
        let why = if message.contains(DISK_FULL) { DISK_FULL } else { message.as_str() };
        Error::ReadOnly(format!(
            "coordd is running read-only: the database cannot be opened for writing ({why}). Nothing of this \
             call was saved; free space and retry: the next write reopens the database. Reads keep working."
        ))
    }
}

/// Whether a failure to open the database for writing is one to serve read-only through:
/// the disk is full. (A read-only file, a newer schema or corruption still stop the start.)
pub fn can_serve_read_only(e: &Error) -> bool {
    matches!(e, Error::WriteFailed(m) if m.contains(DISK_FULL))
}

/// Opening the database for writing, as [`super::SqliteStore::open`] does.
pub type Reopen = fn(&std::path::Path) -> crate::error::Result<(Connection, Checkpointer)>;

/// The writer thread's body while read-only: refuse each batch until the database opens for
/// writing, then run as the normal writer.
pub fn wait_for_space(path: PathBuf, reopen: Reopen, mut queue: Queue, bus: Bus, flag: ReadOnlyFlag) {
    let mut batch: Vec<WriteJob> = Vec::with_capacity(MAX_BATCH);
    loop {
        let more = queue.next_batch(&mut batch);
        if batch.is_empty() && !more {
            break;
        }
        match reopen(&path) {
            Ok((conn, checkpointer)) => {
                flag.set(None);
                tracing::info!("the database opens for writing again: read-only mode is over");
                super::writer::run(conn, queue, bus, checkpointer, batch, more);
                return;
            }
            Err(cause) => {
                tracing::warn!(error = %cause, jobs = batch.len(), "still read-only: writes refused");
                let refusal = flag.refusal(&cause);
                for job in batch.drain(..) {
                    job.complete(Some(&refusal));
                }
            }
        }
        if !more {
            break;
        }
    }
    queue.close(&mut batch);
    let refusal = Error::ReadOnly("coordd is stopping (it was running read-only); nothing was saved".into());
    for job in batch.drain(..) {
        job.complete(Some(&refusal));
    }
    queue.finished();
}
