//! A store for unit tests: SQLite in memory, migrated, with a [`ManualClock`] the test
//! moves. Writes run in a savepoint that commits when the closure succeeds and rolls back
//! when it fails, as in the writer; the events they publish are kept for inspection.

use std::cell::RefCell;
use std::time::Duration;

use coord_proto::types::Event;
use rusqlite::Connection;

use super::migrations;
use super::tx::SqliteTx;
use crate::error::Result;
use crate::store::Tx;
use crate::time::{Clock, ManualClock, Ts};

pub struct Memory {
    conn: Connection,
    pub clock: ManualClock,
    published: RefCell<Vec<Event>>,
}

impl Default for Memory {
    fn default() -> Self {
        Self::new()
    }
}

impl Memory {
    pub fn new() -> Memory {
        let mut conn = Connection::open_in_memory().expect("in-memory database");
        conn.pragma_update(None, "foreign_keys", "ON").expect("foreign keys");
        migrations::migrate(&mut conn).expect("migrations");
        // 2026-01-01T00:00:00Z
        let clock = ManualClock::at(Ts::from_millis(1_767_225_600_000));
        Memory { conn, clock, published: RefCell::new(Vec::new()) }
    }

    /// Run `f` in a transaction at the clock's `now`; rolled back if it fails.
    pub fn write<T>(&self, f: impl FnOnce(&mut dyn Tx, Ts) -> Result<T>) -> Result<T> {
        self.conn.execute_batch("SAVEPOINT test").expect("savepoint");
        let mut tx = SqliteTx::new(&self.conn);
        let out = f(&mut tx, self.clock.now());
        if out.is_ok() {
            self.conn.execute_batch("RELEASE test").expect("release");
            self.published.borrow_mut().extend(tx.take_published());
        } else {
            self.conn.execute_batch("ROLLBACK TO test; RELEASE test").expect("rollback");
        }
        out
    }

    /// Run a read at the clock's `now`.
    pub fn read<T>(&self, f: impl FnOnce(&dyn Tx, Ts) -> Result<T>) -> Result<T> {
        f(&SqliteTx::new(&self.conn), self.clock.now())
    }

    /// Move the clock forward.
    pub fn advance(&self, by: Duration) {
        self.clock.advance(by);
    }

    /// The events committed so far, in order.
    pub fn events(&self) -> Vec<Event> {
        self.published.borrow().clone()
    }

    /// The connection, for query-plan checks.
    pub fn conn(&self) -> &Connection {
        &self.conn
    }
}

/// The connection under a transaction of this backend (reads and writes only ever hand
/// out a [`SqliteTx`] as their `dyn Tx`), for tests that need raw SQL inside one.
pub fn conn_of<'a>(tx: &'a dyn Tx) -> &'a Connection {
    // SAFETY: every `dyn Tx` this backend creates (`open.rs`, `writer.rs`, `Memory`) is a
    // `SqliteTx`; tests call this only on those.
    unsafe { &*(tx as *const dyn Tx as *const SqliteTx<'a>) }.conn
}
