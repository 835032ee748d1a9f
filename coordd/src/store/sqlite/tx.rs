//! [`SqliteTx`]: the repositories over one SQLite connection, inside the writer's
//! transaction (writes) or a read transaction on a read-only pooled connection (reads).
//! The repository implementations live in the per-domain files of this module; this file
//! holds what they share: the type itself, the writer's per-batch cache, statement
//! helpers (rows are mapped by `store::rows`) and error conversion.

use std::cell::RefCell;
use std::collections::HashMap;

use coord_proto::types::{Agent, Event};
use rusqlite::{Connection, Params};

use crate::error::{Error, Result};
use crate::store::repos::Tx;
use crate::store::rows::RowRead;
use crate::store::within::{Same, Within};

/// The repositories over one connection, and the events to publish after the commit.
pub struct SqliteTx<'c> {
    pub(super) conn: &'c Connection,
    published: Vec<Event>,
    /// The writer's batch cache, when this runs a job of a batch.
    pub(super) cache: Option<&'c BatchCache>,
}

/// What the jobs of one write batch read over and over: the project's settings (a send
/// reads two) and agent rows (a send reads its recipient's). The writer keeps one per
/// batch attempt, so it never outlives the transaction that read it: it is emptied when
/// a job is rolled back, and an entry is forgotten when the row is written (by the
/// repository methods that write agents and settings, the only writers of those tables).
#[derive(Default)]
pub struct BatchCache {
    settings: RefCell<HashMap<String, Option<String>>>,
    agents: RefCell<HashMap<String, Option<Agent>>>,
}

impl BatchCache {
    /// Forget everything (a rollback undid writes that may have been cached).
    pub fn clear(&self) {
        self.settings.borrow_mut().clear();
        self.agents.borrow_mut().clear();
    }

    /// The setting `key` as cached, or read by `read` and cached.
    pub(super) fn setting(&self, key: &str, read: impl FnOnce() -> Result<Option<String>>) -> Result<Option<String>> {
        through(&self.settings, key, read)
    }

    /// The agent `id` as cached, or read by `read` and cached.
    pub(super) fn agent(&self, id: &str, read: impl FnOnce() -> Result<Option<Agent>>) -> Result<Option<Agent>> {
        through(&self.agents, id, read)
    }

    pub(super) fn forget_setting(&self, key: &str) {
        self.settings.borrow_mut().remove(key);
    }

    pub(super) fn forget_agent(&self, id: &str) {
        self.agents.borrow_mut().remove(id);
    }
}

/// `key`'s value in `map`, or read by `read` and kept there.
fn through<T: Clone>(map: &RefCell<HashMap<String, T>>, key: &str, read: impl FnOnce() -> Result<T>) -> Result<T> {
    if let Some(v) = map.borrow().get(key) {
        return Ok(v.clone());
    }
    let v = read()?;
    map.borrow_mut().insert(key.to_string(), v.clone());
    Ok(v)
}

impl<'c> SqliteTx<'c> {
    pub fn new(conn: &'c Connection) -> Self {
        SqliteTx { conn, published: Vec::new(), cache: None }
    }

    /// A job of a write batch, reading through the batch's `cache`.
    pub fn cached(conn: &'c Connection, cache: &'c BatchCache) -> Self {
        SqliteTx { conn, published: Vec::new(), cache: Some(cache) }
    }

    /// The events published by this transaction so far, in order.
    pub fn take_published(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.published)
    }

    /// Map every row of a (cached) statement.
    pub(super) fn map<T>(
        &self,
        sql: &str,
        params: impl Params,
        f: impl Fn(&dyn RowRead) -> Result<T>,
    ) -> Result<Vec<T>> {
        let mut stmt = self.conn.prepare_cached(sql)?;
        let mut rows = stmt.query(params)?;
        let mut out = Vec::new();
        while let Some(row) = rows.next()? {
            out.push(f(row as &dyn RowRead)?);
        }
        Ok(out)
    }

    /// Map rows of a (cached) statement until their text reaches `max_bytes` ([`Within`]).
    pub(super) fn map_within<T>(
        &self,
        sql: &str,
        params: impl Params,
        max_bytes: usize,
        f: impl Fn(&dyn RowRead) -> Result<T>,
        same: Option<Same<T>>,
    ) -> Result<Within<T>> {
        let mut stmt = self.conn.prepare_cached(sql)?;
        let mut rows = stmt.query(params)?;
        let mut out = Within::new(max_bytes);
        while let Some(row) = rows.next()? {
            if !out.take(row, &f, same)? {
                break;
            }
        }
        Ok(out)
    }

    /// Map the first row of a (cached) statement, if any.
    pub(super) fn map_one<T>(
        &self,
        sql: &str,
        params: impl Params,
        f: impl Fn(&dyn RowRead) -> Result<T>,
    ) -> Result<Option<T>> {
        let mut stmt = self.conn.prepare_cached(sql)?;
        let mut rows = stmt.query(params)?;
        rows.next()?.map(|row| f(row as &dyn RowRead)).transpose()
    }
}

impl Tx for SqliteTx<'_> {
    crate::repositories!();

    fn publish(&mut self, event: Event) {
        self.published.push(event);
    }
}

impl From<rusqlite::Error> for Error {
    fn from(e: rusqlite::Error) -> Self {
        match unwritable(&e) {
            Some(why) => Error::WriteFailed(why),
            None => Error::Storage(e.to_string()),
        }
    }
}

/// How [`unwritable`] says the disk is full (the read-only mode looks for it).
pub const DISK_FULL: &str = "the disk holding the database is full";

/// A clear message for an error that means the database cannot be written at the moment
/// (full disk, read-only file or file system, I/O error); `None` for any other error.
pub fn unwritable(e: &rusqlite::Error) -> Option<String> {
    use rusqlite::ErrorCode::*;
    let rusqlite::Error::SqliteFailure(f, _) = e else { return None };
    let why = match f.code {
        DiskFull => DISK_FULL,
        ReadOnly => "the database file (or its directory or file system) is read-only",
        SystemIoFailure => "the operating system reported an I/O error",
        _ => return None,
    };
    Some(format!(
        "cannot write to the database: {why} ({e}); nothing of this call was saved, and it can be retried once \
         that is fixed (reads keep working)"
    ))
}

impl From<r2d2::Error> for Error {
    fn from(e: r2d2::Error) -> Self {
        Error::Storage(format!("database pool: {e}"))
    }
}

/// `?,?,…` for `n` values.
pub(super) fn marks(start: usize, n: usize) -> String {
    (start..start + n).map(|i| format!("?{i}")).collect::<Vec<_>>().join(",")
}

/// The row layer (`store::rows`) reads SQLite rows by position.
impl RowRead for rusqlite::Row<'_> {
    fn s(&self, i: usize) -> Result<String> {
        Ok(self.get(i)?)
    }
    fn os(&self, i: usize) -> Result<Option<String>> {
        Ok(self.get(i)?)
    }
    fn i(&self, i: usize) -> Result<i64> {
        Ok(self.get(i)?)
    }
    fn oi(&self, i: usize) -> Result<Option<i64>> {
        Ok(self.get(i)?)
    }
    fn b(&self, i: usize) -> Result<bool> {
        Ok(self.get(i)?)
    }
    fn f(&self, i: usize) -> Result<f64> {
        Ok(self.get(i)?)
    }
}
