//! [`PgTx`]: the repositories over one PostgreSQL connection, inside the writer's
//! transaction (writes) or a read-only repeatable-read transaction (reads). The repository
//! implementations live in the per-domain files of this module (their rows mapped by
//! `store::rows`); this file holds what they share: the type, the event id counter of a write
//! transaction, and statement helpers.

use std::cell::{Cell, RefCell};

use coord_proto::types::Event;
use postgres::Row;

use super::cache::Cache;
use super::conn::{Param, PgConn};
use super::deferred::{Table, Val};
use crate::error::{Error, Result};
use crate::store::repos::Tx;
use crate::store::rows::RowRead;
use crate::store::within::{Same, Within};

/// The event ids of one write transaction. The writer locks the counter row (`SELECT …
/// FOR UPDATE`) as the transaction begins and reads the last id (a transaction that did
/// not locks it at its first event); ids count on in memory; before `COMMIT` the writer
/// stores the last id back. The row lock is held to the end of the transaction,
/// so no other transaction can take ids until this one has committed: ids commit in their
/// own order, and a reader at cursor N never sees N+2 without N+1.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct EventIds {
    /// `(last id in the counter row when locked, last id handed out)`.
    pub taken: Option<(i64, i64)>,
}

impl EventIds {
    /// Ids of a transaction that locked the counter row when it began, at `last`.
    pub fn locked(last: i64) -> EventIds {
        EventIds { taken: Some((last, last)) }
    }

    /// The last id to store back, if this transaction took any.
    pub fn to_store(&self) -> Option<i64> {
        self.taken.filter(|(from, to)| to > from).map(|(_, to)| to)
    }
}

/// The repositories over one connection, and the events to publish after the commit.
pub struct PgTx<'c> {
    conn: RefCell<&'c mut PgConn>,
    ids: Option<&'c mut EventIds>,
    published: Vec<Event>,
    /// Write statements run (a failed job that ran none left nothing behind).
    writes: u64,
    /// A statement failed: PostgreSQL has aborted the transaction (or savepoint).
    failed: Cell<bool>,
}

impl<'c> PgTx<'c> {
    /// A read snapshot (no event ids: it cannot write events).
    pub fn read(conn: &'c mut PgConn) -> Self {
        PgTx { conn: RefCell::new(conn), ids: None, published: Vec::new(), writes: 0, failed: Cell::new(false) }
    }

    /// The writer's transaction, taking event ids from `ids`.
    pub fn write(conn: &'c mut PgConn, ids: &'c mut EventIds) -> Self {
        PgTx { conn: RefCell::new(conn), ids: Some(ids), published: Vec::new(), writes: 0, failed: Cell::new(false) }
    }

    /// The events published by this transaction so far, in order.
    pub fn take_published(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.published)
    }

    /// Whether the job left something to roll back: a write, or a failed statement.
    pub fn dirty(&self) -> bool {
        self.writes > 0 || self.failed.get()
    }

    /// Whether a statement failed (PostgreSQL then refuses the rest of the transaction).
    pub fn statement_failed(&self) -> bool {
        self.failed.get()
    }

    fn note<T>(&self, r: Result<T>) -> Result<T> {
        if r.is_err() {
            self.failed.set(true);
        }
        r
    }

    /// Rows of a read statement (cached).
    pub(super) fn rows(&self, sql: &str, params: &[Param<'_>]) -> Result<Vec<Row>> {
        let r = self.conn.borrow_mut().query(sql, params);
        self.note(r)
    }

    /// The first row of a read statement, if any.
    pub(super) fn row(&self, sql: &str, params: &[Param<'_>]) -> Result<Option<Row>> {
        Ok(self.rows(sql, params)?.into_iter().next())
    }

    /// Map every row.
    pub(super) fn map<T>(
        &self,
        sql: &str,
        params: &[Param<'_>],
        f: impl Fn(&dyn RowRead) -> Result<T>,
    ) -> Result<Vec<T>> {
        self.rows(sql, params)?.iter().map(|r| f(r)).collect()
    }

    /// Map rows until their text reaches `max_bytes` ([`Within`]), streaming them.
    pub(super) fn map_within<T>(
        &self,
        sql: &str,
        params: &[Param<'_>],
        max_bytes: usize,
        f: impl Fn(&dyn RowRead) -> Result<T>,
        same: Option<Same<T>>,
    ) -> Result<Within<T>> {
        let mut out = Within::new(max_bytes);
        let r = self.conn.borrow_mut().query_each(sql, params, |row| out.take(&row, &f, same));
        self.note(r)?;
        Ok(out)
    }

    /// Map the first row, if any.
    pub(super) fn map_one<T>(
        &self,
        sql: &str,
        params: &[Param<'_>],
        f: impl Fn(&dyn RowRead) -> Result<T>,
    ) -> Result<Option<T>> {
        self.row(sql, params)?.as_ref().map(|r| f(r)).transpose()
    }

    /// Run a write statement (cached); returns the rows affected.
    pub(super) fn exec(&mut self, sql: &str, params: &[Param<'_>]) -> Result<u64> {
        self.writes += 1;
        let r = self.conn.borrow_mut().execute(sql, params);
        self.note(r)
    }

    /// Insert one row of `table` (held back and sent with others while the writer's batch
    /// runs without savepoints, see [`super::deferred`]).
    pub(super) fn insert(&mut self, table: &'static Table, row: Vec<Val>) -> Result<()> {
        self.writes += 1;
        let r = self.conn.borrow_mut().insert(table, row);
        self.note(r)
    }

    /// Whether the writer keeps a cache of this transaction (see [`Cache`]).
    pub(super) fn caching(&self) -> bool {
        self.conn.borrow_mut().cache().is_some()
    }

    /// Run `f` on the writer's cache of this transaction, if it keeps one (see [`Cache`]).
    pub(super) fn cached<T>(&self, f: impl FnOnce(&mut Cache) -> T) -> Option<T> {
        self.conn.borrow_mut().cache().map(f)
    }

    /// Hold back an existing agent's `last_seen_at` update (a write, sent with the held
    /// inserts); false when writes are sent at once.
    pub(super) fn touch_later(&mut self, agent_id: &str, at: &str) -> bool {
        let held = self.conn.borrow_mut().touch_later(agent_id, at);
        if held {
            self.writes += 1;
        }
        held
    }

    /// The next event id, locking the counter row on the first one.
    pub(super) fn next_event_id(&mut self) -> Result<i64> {
        let Some(taken) = self.ids.as_deref().map(|ids| ids.taken) else {
            return Err(Error::Internal("an event was written outside the writer's transaction".into()));
        };
        let (from, to) = match taken {
            Some(t) => t,
            None => {
                let r = self.conn.borrow_mut().query("SELECT last FROM coordd_event_counter FOR UPDATE", &[]);
                let rows = self.note(r)?;
                let row = rows.first().ok_or_else(|| Error::Storage("the event counter row is missing".into()))?;
                let last = row.i(0)?;
                (last, last)
            }
        };
        let id = to + 1;
        if let Some(ids) = self.ids.as_deref_mut() {
            ids.taken = Some((from, id));
        }
        Ok(id)
    }
}

impl Tx for PgTx<'_> {
    crate::repositories!();

    fn publish(&mut self, event: Event) {
        self.published.push(event);
    }
}

/// Owned statement arguments of a query built at run time.
#[derive(Default)]
pub(super) struct Args(Vec<Box<dyn postgres::types::ToSql + Sync>>);

impl Args {
    /// Add a value; returns its placeholder (`$n`).
    pub fn push(&mut self, v: impl postgres::types::ToSql + Sync + 'static) -> String {
        self.0.push(Box::new(v));
        format!("${}", self.0.len())
    }

    pub fn refs(&self) -> Vec<Param<'_>> {
        self.0.iter().map(|b| b.as_ref() as Param<'_>).collect()
    }
}
