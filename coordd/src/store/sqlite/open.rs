//! Opening the database and [`SqliteStore`], the backend the daemon runs on by default.
//!
//! The file is put in WAL mode; the writer's connection gets `synchronous=NORMAL` (a
//! process crash loses nothing; power loss may lose the last commits), foreign keys, a
//! 64 MiB page cache and no automatic checkpoints (the writer checkpoints). Reads go to a
//! small pool of read-only, `query_only` connections, each read in one read transaction.

use std::path::{Path, PathBuf};

use coord_proto::types::ReadOnlyState;
use futures::future::BoxFuture;
use r2d2_sqlite::SqliteConnectionManager;
use rusqlite::{Connection, OpenFlags};

use super::checkpoint::Checkpointer;
use super::migrations;
use super::read_only::{self, ReadOnlyFlag, can_serve_read_only};
use super::tx::SqliteTx;
use super::writer;
use crate::bus::Bus;
use crate::error::{Error, Result};
use crate::store::backend::{ReadJob, Store, StoreInfo, WriteJob};
use crate::store::queue::Writer;
use crate::store::repos::Events;

/// Read-only connections in the pool.
const READERS: u32 = 4;

pub struct SqliteStore {
    path: PathBuf,
    writer: Writer,
    writer_thread: std::sync::Mutex<Option<std::thread::JoinHandle<()>>>,
    readers: r2d2::Pool<SqliteConnectionManager>,
    schema_version: i64,
    journal_mode: String,
    read_only: ReadOnlyFlag,
}

fn configure(conn: &Connection) -> rusqlite::Result<()> {
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    conn.set_prepared_statement_cache_capacity(128);
    conn.pragma_update(None, "foreign_keys", "ON")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    // Statement journals (one per SAVEPOINT'd job) stay in memory.
    conn.pragma_update(None, "temp_store", "MEMORY")?;
    Ok(())
}

/// The writer's connection, opened and migrated.
struct Writable {
    conn: Connection,
    schema_version: i64,
    journal_mode: String,
}

/// Open (creating if needed) the database for writing: WAL, pragmas, migrations.
fn open_writable(path: &Path) -> Result<Writable> {
    // Only the writer thread uses this connection: no SQLite mutex is needed.
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let mut conn = Connection::open_with_flags(path, flags | OpenFlags::SQLITE_OPEN_URI)?;
    refuse_untouchable(&conn)?;
    let mode: String = conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(Error::Internal(format!("cannot enable WAL (journal_mode={mode})")));
    }
    configure(&conn)?;
    conn.pragma_update(None, "wal_autocheckpoint", 0)?;
    conn.pragma_update(None, "cache_size", -65536)?;
    let schema_version = migrations::migrate(&mut conn)?;
    conn.execute_batch("PRAGMA optimize=0x10002")?;
    Ok(Writable { conn, schema_version, journal_mode: mode.to_lowercase() })
}

/// Open the database for writing again, once a read-only daemon gets a write.
fn reopen(path: &Path) -> Result<(Connection, Checkpointer)> {
    let w = open_writable(path)?;
    Ok((w.conn, Checkpointer::spawn(path)?))
}

impl SqliteStore {
    /// Open (creating if needed) and migrate the database at `path`; returns the store and
    /// the bus its writer publishes on. When the disk is too full to open it for writing,
    /// the store serves reads and refuses writes until space returns (see `read_only`).
    pub fn open(path: &Path) -> Result<(SqliteStore, Bus)> {
        disable_memory_statistics();
        let flag = ReadOnlyFlag::default();
        let (writable, cause) = match open_writable(path) {
            Ok(w) => (Some(w), None),
            Err(e) if can_serve_read_only(&e) => (None, Some(e)),
            Err(e) => return Err(e),
        };
        let readers = r2d2::Pool::builder().max_size(READERS).min_idle(Some(1)).build(readers(path))?;
        let (schema_version, journal_mode, last) = match &writable {
            Some(w) => (w.schema_version, w.journal_mode.clone(), SqliteTx::new(&w.conn).last_event_id()?),
            None => {
                let cause = cause.expect("a cause when not writable");
                let (version, last) = match read_only_facts(&readers) {
                    Ok((v, last)) if v == migrations::latest_version() => (v, last),
                    // Reads need the current schema, and migrating needs space.
                    _ => return Err(cause),
                };
                flag.enter(&cause);
                (version, "wal".to_string(), last)
            }
        };
        let bus = Bus::new(last);
        let spawned = match writable {
            Some(w) => writer::spawn(w.conn, bus.clone(), Checkpointer::spawn(path)?),
            None => {
                let (path, bus, flag) = (path.to_path_buf(), bus.clone(), flag.clone());
                Writer::spawn("coordd-writer", move |queue| read_only::wait_for_space(path, reopen, queue, bus, flag))
            }
        };
        let (writer, handle) = spawned.map_err(|e| Error::Internal(format!("cannot start the writer thread: {e}")))?;
        let store = SqliteStore {
            path: path.to_path_buf(),
            writer,
            writer_thread: std::sync::Mutex::new(Some(handle)),
            readers,
            schema_version,
            journal_mode,
            read_only: flag,
        };
        Ok((store, bus))
    }
}

/// The schema version and the newest event id, read through the read-only pool.
fn read_only_facts(readers: &r2d2::Pool<SqliteConnectionManager>) -> Result<(i64, i64)> {
    let conn = readers.get()?;
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    let last = SqliteTx::new(&conn).last_event_id()?;
    Ok((version, last))
}

/// How the read pool opens its connections: read-only and `query_only`, so SQLite itself
/// refuses any write made through them.
pub(super) fn readers(path: &Path) -> SqliteConnectionManager {
    SqliteConnectionManager::file(path)
        .with_flags(OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
        .with_init(|c| {
            c.busy_timeout(std::time::Duration::from_secs(5))?;
            c.set_prepared_statement_cache_capacity(128);
            c.pragma_update(None, "query_only", "ON")
        })
}

/// Refuse, before changing anything, a database this daemon must not or cannot write: one
/// from a newer coordd (a newer schema), or a read-only file (SQLite then opens it
/// read-only instead of failing).
fn refuse_untouchable(conn: &Connection) -> Result<()> {
    let version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if version > migrations::latest_version() {
        return Err(Error::Storage(format!(
            "it was written by a newer coordd (schema version {version}; this one knows up to {}): \
             upgrade coordd; the database was left untouched",
            migrations::latest_version()
        )));
    }
    if conn.is_readonly(rusqlite::MAIN_DB)? {
        return Err(Error::WriteFailed(
            "the file is read-only for this user (or on a read-only file system), and coordd must write it: \
             fix its permissions; the database was left untouched"
                .into(),
        ));
    }
    Ok(())
}

/// SQLite keeps memory statistics by default, behind a global mutex taken on every
/// allocation; nothing here reads them. This must happen before SQLite initialises (the
/// first connection); later calls are refused by SQLite and change nothing.
fn disable_memory_statistics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: sqlite3_config is called before any other SQLite use in this process
        // (the store opens first), with the documented argument for MEMSTATUS (an int).
        unsafe {
            rusqlite::ffi::sqlite3_config(rusqlite::ffi::SQLITE_CONFIG_MEMSTATUS, 0 as std::ffi::c_int);
        }
    });
}

impl Store for SqliteStore {
    fn info(&self) -> StoreInfo {
        StoreInfo {
            location: self.path.display().to_string(),
            schema_version: self.schema_version,
            journal_mode: self.journal_mode.clone(),
        }
    }

    fn read_only(&self) -> Option<ReadOnlyState> {
        self.read_only.get()
    }

    fn submit(&self, job: WriteJob) -> BoxFuture<'_, Result<()>> {
        Box::pin(self.writer.submit(job))
    }

    fn run_read(&self, job: ReadJob) -> BoxFuture<'_, Result<()>> {
        let pool = self.readers.clone();
        Box::pin(async move {
            tokio::task::spawn_blocking(move || -> Result<()> {
                let conn = pool.get()?;
                // One read transaction: everything the job reads comes from one snapshot.
                let snapshot = conn.unchecked_transaction()?;
                job(&SqliteTx::new(&snapshot));
                Ok(())
            })
            .await
            .map_err(|e| Error::Internal(format!("read task failed: {e}")))?
        })
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            self.writer.stop().await;
            let handle = self.writer_thread.lock().ok().and_then(|mut g| g.take());
            if let Some(h) = handle {
                let _ = tokio::task::spawn_blocking(move || h.join()).await;
            }
        })
    }
}
