//! SQLite plumbing: opening the database (WAL), migrations, the single group-committing
//! writer, the read-only connection pool and the in-process event bus. Domain modules
//! (`inbox`, `events`) hold their own SQL and run it through [`Db::write`] and [`Db::read`].

pub mod migrations;
pub mod writer;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use r2d2_sqlite::SqliteConnectionManager;
use rusqlite::{Connection, OpenFlags};
use tokio::sync::broadcast;

use crate::error::{Error, Result};
use crate::store::Published;
pub use writer::WriteCtx;

/// Capacity of the event bus; a subscriber that falls further behind resyncs from the
/// database (see `events::subscription`).
const BUS_CAPACITY: usize = 8192;
/// Read-only connections in the pool.
const READERS: u32 = 4;

/// Read a text column into anything that parses from a string (the protocol's enums).
pub fn parse_col<T: std::str::FromStr<Err = String>>(row: &rusqlite::Row<'_>, idx: usize) -> rusqlite::Result<T> {
    let s: String = row.get(idx)?;
    T::from_str(&s).map_err(|e| rusqlite::Error::FromSqlConversionFailure(idx, rusqlite::types::Type::Text, e.into()))
}

/// Read a nullable text column into an optional protocol enum.
pub fn parse_opt_col<T: std::str::FromStr<Err = String>>(
    row: &rusqlite::Row<'_>,
    idx: usize,
) -> rusqlite::Result<Option<T>> {
    match row.get::<_, Option<String>>(idx)? {
        Some(_) => parse_col(row, idx).map(Some),
        None => Ok(None),
    }
}

/// Read a text column holding JSON.
pub fn json_col(row: &rusqlite::Row<'_>, idx: usize) -> rusqlite::Result<serde_json::Value> {
    let s: String = row.get(idx)?;
    serde_json::from_str(&s)
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(idx, rusqlite::types::Type::Text, e.into()))
}

/// The open database: one writer thread, a reader pool and the event bus.
pub struct Db {
    path: std::path::PathBuf,
    writer: writer::Writer,
    readers: r2d2::Pool<SqliteConnectionManager>,
    bus: broadcast::Sender<Arc<Published>>,
    last_event_id: Arc<AtomicI64>,
    schema_version: i64,
    journal_mode: String,
    writer_thread: std::sync::Mutex<Option<std::thread::JoinHandle<()>>>,
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

impl Db {
    /// Open (creating if needed) and migrate the database at `path`.
    pub fn open(path: &Path) -> Result<Db> {
        let mut conn = Connection::open(path)?;
        let mode: String = conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(Error::Internal(format!("cannot enable WAL (journal_mode={mode})")));
        }
        configure(&conn)?;
        // The writer checkpoints between batches itself (see `writer`); 64 MiB page cache.
        conn.pragma_update(None, "wal_autocheckpoint", 0)?;
        conn.pragma_update(None, "cache_size", -65536)?;
        let schema_version = migrations::migrate(&mut conn)?;
        conn.execute_batch("PRAGMA optimize=0x10002")?;
        let last: i64 = conn.query_row("SELECT COALESCE(MAX(event_id), 0) FROM events", [], |r| r.get(0))?;

        let manager = SqliteConnectionManager::file(path)
            .with_flags(OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
            .with_init(|c| {
                c.busy_timeout(std::time::Duration::from_secs(5))?;
                c.set_prepared_statement_cache_capacity(128);
                c.pragma_update(None, "query_only", "ON")
            });
        let readers = r2d2::Pool::builder().max_size(READERS).min_idle(Some(1)).build(manager)?;

        let (bus, _) = broadcast::channel(BUS_CAPACITY);
        let last_event_id = Arc::new(AtomicI64::new(last));
        let (writer, handle) = writer::Writer::spawn(conn, bus.clone(), last_event_id.clone())
            .map_err(|e| Error::Internal(format!("cannot start writer thread: {e}")))?;
        Ok(Db {
            path: path.to_path_buf(),
            writer,
            readers,
            bus,
            last_event_id,
            schema_version,
            journal_mode: mode.to_lowercase(),
            writer_thread: std::sync::Mutex::new(Some(handle)),
        })
    }

    /// Run `f` in the group-committed write transaction; returns after the commit.
    pub async fn write<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut WriteCtx<'_>) -> Result<T> + Send + 'static,
    {
        self.writer.write(f).await
    }

    /// Run `f` on a pooled read-only connection, off the async executor threads, inside
    /// one read transaction so that everything it reads comes from the same snapshot.
    pub async fn read<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        let pool = self.readers.clone();
        tokio::task::spawn_blocking(move || {
            let conn = pool.get()?;
            let snapshot = conn.unchecked_transaction()?;
            f(&snapshot)
        })
        .await
        .map_err(|e| Error::Internal(format!("read task failed: {e}")))?
    }

    /// Subscribe to events published after their commit.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Published>> {
        self.bus.subscribe()
    }

    /// Id of the newest committed and published event.
    pub fn last_event_id(&self) -> i64 {
        self.last_event_id.load(Ordering::SeqCst)
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn schema_version(&self) -> i64 {
        self.schema_version
    }

    pub fn journal_mode(&self) -> &str {
        &self.journal_mode
    }

    /// Finish the queued writes, truncate the WAL and stop the writer thread. Writes
    /// after this fail; reads keep working until the last handle drops.
    pub async fn close(&self) {
        self.writer.stop().await;
        let handle = self.writer_thread.lock().ok().and_then(|mut g| g.take());
        if let Some(h) = handle {
            let _ = tokio::task::spawn_blocking(move || h.join()).await;
        }
    }
}
