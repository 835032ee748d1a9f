//! [`PgConn`]: one PostgreSQL connection (the synchronous `postgres` client, used only on
//! backend threads) with a statement cache, the per-schema names several instances agree
//! on (the notification channel, the advisory lock keys), and error conversion.

use std::collections::HashMap;
use std::str::FromStr;
use std::time::{Duration, Instant};

use postgres::types::ToSql;
use postgres::{Row, Statement};

use super::cache::Cache;
use super::client::Client;
pub use super::client::describe;
use super::deferred::{Pending, Table, Val};
use crate::error::{Error, Result};
use crate::store::rows::{RowRead, col_err};

/// How long opening a connection may take before the attempt counts as failed.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// A write transaction idle this long is ended by the server: a frozen instance cannot
/// hold the write lock for ever.
const IDLE_IN_TRANSACTION: &str = "30s";

/// A statement parameter.
pub type Param<'a> = &'a (dyn ToSql + Sync);

/// Round trips made on one connection, and the time spent waiting for their answers (the
/// server's work included): what the writer reports of its batches.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Trips {
    pub count: u64,
    pub waited: Duration,
    /// Of the time waited, what the writer's `BEGIN` (the write lock's wait included), its
    /// held writes and its `COMMIT` took.
    pub begin: Duration,
    pub flush: Duration,
    pub commit: Duration,
}

/// One connection with prepared statements cached by their text, and the inserts held
/// back to be sent together (see [`deferred`](super::deferred)).
pub struct PgConn {
    client: Client,
    stmts: HashMap<String, Statement>,
    schema: Option<String>,
    /// Whether plain inserts of some tables are held back now (the writer's batch without savepoints).
    deferring: bool,
    pending: Pending,
    /// What the writer's open transaction has read of settings and agents (see [`Cache`]).
    cache: Option<Cache>,
    trips: Trips,
}

/// A connection's configuration (every connection is tokio-postgres's, see [`Client`]).
pub type Config = tokio_postgres::Config;

/// Parse a `postgres://` URL (or key=value string) into a client configuration, with
/// coordd's timeouts and keepalives.
pub fn config(url: &str) -> Result<Config> {
    let mut c =
        tokio_postgres::Config::from_str(url).map_err(|e| Error::Storage(format!("invalid PostgreSQL URL: {e}")))?;
    c.application_name("coordd")
        .connect_timeout(CONNECT_TIMEOUT)
        .keepalives(true)
        .keepalives_idle(Duration::from_secs(30));
    // No JIT: every statement here is a keyed lookup or a small write, and a plan whose
    // estimate passed `jit_above_cost` was compiled by LLVM on every run (8 ms of the
    // server's CPU per read of one event, seen as 13 ms cross-daemon wakes). Set first, so
    // that options given in the URL still win.
    let options = match c.get_options() {
        Some(o) if !o.trim().is_empty() => format!("-c jit=off {o}"),
        _ => "-c jit=off".to_string(),
    };
    c.options(&options);
    Ok(c)
}

impl PgConn {
    pub fn connect(cfg: &Config) -> Result<PgConn> {
        let mut client = Client::connect(cfg)?;
        // Every statement is prepared once and run many times. A generic plan made while a
        // table was small (a sequential scan) would stay cached while the table grows, and
        // each call would then scan it; a custom plan per call follows the table's size.
        // (The writer opts back in: see `writer_plans`.)
        client
            .batch_execute(&format!(
                "SET idle_in_transaction_session_timeout = '{IDLE_IN_TRANSACTION}'; \
                 SET plan_cache_mode = force_custom_plan"
            ))
            .map_err(Error::from)?;
        Ok(PgConn {
            client,
            stmts: HashMap::new(),
            schema: None,
            deferring: false,
            pending: Pending::default(),
            cache: None,
            trips: Trips::default(),
        })
    }

    /// The writer's plans: generic ones after a few runs (PostgreSQL's default), which
    /// save it the planning of every statement of every batch.
    pub fn writer_plans(mut self) -> Result<PgConn> {
        self.batch("SET plan_cache_mode = auto")?;
        Ok(self)
    }

    /// Whether the connection is known to be gone (it then has to be replaced).
    pub fn is_closed(&self) -> bool {
        self.client.is_closed()
    }

    /// The client itself (for notifications).
    pub fn client(&mut self) -> &mut Client {
        &mut self.client
    }

    /// The round trips made since the last call (counting starts again).
    pub fn take_trips(&mut self) -> Trips {
        std::mem::take(&mut self.trips)
    }

    /// The round trips counted so far (for the writer to note its phases).
    pub fn trips_mut(&mut self) -> &mut Trips {
        &mut self.trips
    }

    /// One round trip to the server, counted.
    fn trip<T>(&mut self, f: impl FnOnce(&mut Client) -> std::result::Result<T, postgres::Error>) -> Result<T> {
        let t0 = Instant::now();
        let r = f(&mut self.client);
        self.trips.count += 1;
        self.trips.waited += t0.elapsed();
        Ok(r?)
    }

    /// Run statements without parameters (no preparation, no result rows).
    pub fn batch(&mut self, sql: &str) -> Result<()> {
        self.trip(|c| c.batch_execute(sql))
    }

    /// Run statements without parameters in one round trip; the rows any of them returned,
    /// in order, every value as text.
    pub fn simple_rows(&mut self, sql: &str) -> Result<Vec<Vec<Option<String>>>> {
        let mut rows = Vec::new();
        for m in self.trip(|c| c.simple_query(sql))? {
            if let postgres::SimpleQueryMessage::Row(r) = m {
                rows.push((0..r.len()).map(|i| r.get(i).map(str::to_string)).collect());
            }
        }
        Ok(rows)
    }

    /// Keep what the open transaction reads of settings and agents (`Some`: a new, empty
    /// cache), or stop (`None`). Only the writer does, under the write lock.
    pub fn set_cache(&mut self, cache: Option<Cache>) {
        self.cache = cache;
    }

    /// The open transaction's cache, while the writer keeps one.
    pub fn cache(&mut self) -> Option<&mut Cache> {
        self.cache.as_mut()
    }

    /// Hold back an update of an existing agent's `last_seen_at`, while inserts are held;
    /// false when writes are sent at once (the caller sends it).
    pub fn touch_later(&mut self, agent_id: &str, at: &str) -> bool {
        if self.deferring {
            self.pending.touch(agent_id, at.to_string());
        }
        self.deferring
    }

    /// Hold inserts back from now on (`true`), or send each at once (`false`, the default).
    /// Turning it off drops nothing: call [`PgConn::flush`] or [`PgConn::discard`] first.
    pub fn defer_inserts(&mut self, on: bool) {
        self.deferring = on;
    }

    /// Insert one row of `table`: held back while deferring, else sent at once.
    pub fn insert(&mut self, table: &'static Table, row: Vec<Val>) -> Result<()> {
        let was_empty = self.pending.is_empty();
        self.pending.add(table, row).map_err(Error::Internal)?;
        if self.deferring {
            if was_empty {
                tracing::trace!(table = table.name, "holding inserts back");
            }
            return Ok(());
        }
        self.flush()
    }

    /// Send every held write, in one statement.
    pub fn flush(&mut self) -> Result<()> {
        let held = self.pending.take();
        if held.is_empty() {
            return Ok(());
        }
        let s = self.stmt(&held.sql())?;
        self.trip(|c| c.execute(&s, &held.params()))?;
        Ok(())
    }

    /// Send every held write and then `then` (statements without parameters: the
    /// writer's counter and `COMMIT`) in one round trip ([`Client::execute_then`]).
    pub fn flush_then(&mut self, then: &str) -> Result<()> {
        let held = self.pending.take();
        if held.is_empty() {
            return self.batch(then);
        }
        let s = self.stmt(&held.sql())?;
        self.trip(|c| c.execute_then(&s, &held.params(), then))
    }

    /// Drop the held inserts (their transaction is being rolled back).
    pub fn discard(&mut self) {
        self.pending.take();
    }

    /// Send the held inserts before `sql` if it may see them (it names a held table).
    fn flush_for(&mut self, sql: &str) -> Result<()> {
        if !self.pending.is_empty() && self.pending.named_in(sql) { self.flush() } else { Ok(()) }
    }

    fn stmt(&mut self, sql: &str) -> Result<Statement> {
        if let Some(s) = self.stmts.get(sql) {
            return Ok(s.clone());
        }
        let s = self.trip(|c| c.prepare(sql))?;
        self.stmts.insert(sql.to_string(), s.clone());
        Ok(s)
    }

    /// A cached statement's rows.
    pub fn query(&mut self, sql: &str, params: &[Param<'_>]) -> Result<Vec<Row>> {
        self.flush_for(sql)?;
        let s = self.stmt(sql)?;
        self.trip(|c| c.query(&s, params))
    }

    /// A cached statement's rows affected (after the held inserts: its foreign keys may
    /// name them).
    pub fn execute(&mut self, sql: &str, params: &[Param<'_>]) -> Result<u64> {
        self.flush()?;
        let s = self.stmt(sql)?;
        self.trip(|c| c.execute(&s, params))
    }

    /// A cached statement's rows, streamed one at a time to `each` until it returns false:
    /// the rows after that are never held (list reads that stop at a byte budget).
    pub fn query_each(
        &mut self,
        sql: &str,
        params: &[Param<'_>],
        mut each: impl FnMut(Row) -> Result<bool>,
    ) -> Result<()> {
        self.flush_for(sql)?;
        let s = self.stmt(sql)?;
        let mut rows = self.client.query_raw(&s, params.iter().copied())?;
        while let Some(row) = rows.next()? {
            if !each(row)? {
                break;
            }
        }
        Ok(())
    }

    /// A one-off statement's rows (not cached).
    pub fn query_raw(&mut self, sql: &str, params: &[Param<'_>]) -> Result<Vec<Row>> {
        self.flush_for(sql)?;
        self.trips.count += 1; // a statement not prepared is described first: two round trips
        self.trip(|c| c.query(sql, params))
    }

    /// A one-off statement (not cached).
    pub fn execute_raw(&mut self, sql: &str, params: &[Param<'_>]) -> Result<u64> {
        self.flush()?;
        self.trips.count += 1; // as in query_raw
        self.trip(|c| c.execute(sql, params))
    }

    /// The schema the tables live in (`current_schema()`): names shared by the instances
    /// of one project (channel, lock keys) derive from it.
    pub fn schema(&mut self) -> Result<String> {
        if let Some(s) = &self.schema {
            return Ok(s.clone());
        }
        let rows = self.client.query("SELECT current_schema()::text", &[])?;
        let s: Option<String> = rows.first().and_then(|r| r.get(0));
        let s = s.ok_or_else(|| Error::Storage("no current schema (check search_path)".into()))?;
        self.schema = Some(s.clone());
        Ok(s)
    }
}

/// An advisory lock key for `what` in `schema`: the same in every instance, different per
/// schema (several projects can share a database, one schema each).
pub fn lock_key(schema: &str, what: &str) -> i64 {
    let fnv = format!("coordd:{schema}:{what}")
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    fnv as i64
}

/// The notification channel of a schema's event stream.
pub fn channel(schema: &str) -> String {
    if schema == "public" { "coordd_events".to_string() } else { format!("coordd_events_{schema}") }
}

impl From<postgres::Error> for Error {
    fn from(e: postgres::Error) -> Self {
        Error::Storage(describe(&e))
    }
}

/// The row layer (`store::rows`) reads PostgreSQL rows by position.
impl RowRead for Row {
    fn s(&self, i: usize) -> Result<String> {
        self.try_get(i).map_err(|e| col_err(i, e))
    }
    fn os(&self, i: usize) -> Result<Option<String>> {
        self.try_get(i).map_err(|e| col_err(i, e))
    }
    fn i(&self, i: usize) -> Result<i64> {
        self.try_get(i).map_err(|e| col_err(i, e))
    }
    fn oi(&self, i: usize) -> Result<Option<i64>> {
        self.try_get(i).map_err(|e| col_err(i, e))
    }
    fn b(&self, i: usize) -> Result<bool> {
        self.try_get(i).map_err(|e| col_err(i, e))
    }
    fn f(&self, i: usize) -> Result<f64> {
        self.try_get(i).map_err(|e| col_err(i, e))
    }
}
