//! The writer: one thread per instance owns the connection that writes, and group-commits
//! through the same [`group_commit`] engine as the SQLite writer (same batches, same
//! poisoned-batch re-run with a savepoint per job, same "reply only after COMMIT"); this
//! file holds what PostgreSQL adds.
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
//! 3. The held writes, the counter and `COMMIT` go in one round trip, pipelined: the
//!    turns under the lock are a round trip shorter (a turn is `BEGIN` with the lock, the
//!    jobs, then that one round trip).
//! 4. No `NOTIFY` in any write transaction: after a batch that recorded events commits,
//!    its last id goes to the [`Notifier`](super::notify::Notifier), whose own thread and
//!    connection tell the other daemons, sharing one notification among batches that
//!    commit faster than it sends.
//!
//! A lost connection fails the batch (`storage`, nothing acknowledged); the next batch
//! connects again.
//!
//! At debug level (`COORDD_LOG=coordd::store::postgres::writer=debug`) the writer logs, at
//! most once a second, what its batches came to since it started ([`Stats`]): batches,
//! jobs, round trips, the time spent waiting on them, and the time spent in batches.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::cache::{Cache, SMALL, TextRow};
use super::conn::{PgConn, Trips};
use super::follow::Shared;
use super::notify::Notifier;
use super::tx::{EventIds, PgTx};
use crate::error::{Error, Result};
use crate::store::backend::WriteJob;
use crate::store::group_commit::{self, Conn, JobRun, Outcome};
use crate::store::queue::{MAX_BATCH, Queue, Writer};
use crate::store::rows::{self, AGENT_COLUMNS};

/// A wait for jobs this long is a pause: the statistics are logged after the next batch.
const PAUSE: Duration = Duration::from_millis(100);

/// Start the writer thread on `conn` (reconnecting through `shared` when it is lost).
pub fn spawn(conn: PgConn, shared: Arc<Shared>) -> std::io::Result<(Writer, std::thread::JoinHandle<()>)> {
    let notifier = Notifier::spawn(shared.clone())?;
    Writer::spawn("coordd-pg-writer", move |queue| run(Some(conn), queue, shared, notifier))
}

fn run(mut conn: Option<PgConn>, mut queue: Queue, shared: Arc<Shared>, notifier: Notifier) {
    let mut batch: Vec<WriteJob> = Vec::with_capacity(MAX_BATCH);
    let mut stats = Stats::new();
    // Where other instances' events are read before this one's are published.
    let mut reader: Option<PgConn> = None;
    loop {
        let idle = Instant::now();
        if !queue.next_batch(&mut batch) {
            break;
        }
        let t0 = Instant::now();
        let jobs = run_batch(&mut conn, &mut reader, &mut batch, &shared, &notifier, Some(&mut queue));
        let trips = conn.as_mut().map(PgConn::take_trips).unwrap_or_default();
        stats.batch(jobs, trips, t0.elapsed(), t0 - idle);
    }
    queue.close(&mut batch);
    run_batch(&mut conn, &mut reader, &mut batch, &shared, &notifier, None);
    queue.finished();
}

/// What the writer's batches came to since it started, logged at debug level after a
/// batch, at most once a second, and after the first batch that follows a pause (so the
/// totals of a burst are logged as it ends): `batches`, `jobs` (and the largest batch
/// since the line before), round `trips` and
/// the microseconds spent waiting on them (`waited_us`; of which `begin_us`, `flush_us`
/// and `commit_us` for the `BEGIN` round trip with the write lock's wait, the held
/// writes sent with the `COMMIT` (see [`Conn::flush`] below), and a `COMMIT` sent alone,
/// which [`Conn::commit`] keeps for an engine that would not flush first), and the microseconds spent
/// running batches (`busy_us`; the rest of the time the writer waited for jobs).
struct Stats {
    started: Instant,
    logged: Instant,
    batches: u64,
    jobs: u64,
    largest: usize,
    trips: u64,
    waited: Duration,
    begin: Duration,
    flush: Duration,
    commit: Duration,
    busy: Duration,
}

impl Stats {
    fn new() -> Stats {
        let now = Instant::now();
        Stats {
            started: now,
            logged: now,
            batches: 0,
            jobs: 0,
            largest: 0,
            trips: 0,
            waited: Duration::ZERO,
            begin: Duration::ZERO,
            flush: Duration::ZERO,
            commit: Duration::ZERO,
            busy: Duration::ZERO,
        }
    }

    /// A batch of `jobs`, which made `trips` and took `took`, after the writer waited
    /// `idle` for it.
    fn batch(&mut self, jobs: usize, trips: Trips, took: Duration, idle: Duration) {
        self.batches += 1;
        self.jobs += jobs as u64;
        self.largest = self.largest.max(jobs);
        self.trips += trips.count;
        self.waited += trips.waited;
        self.begin += trips.begin;
        self.flush += trips.flush;
        self.commit += trips.commit;
        self.busy += took;
        let due = self.logged.elapsed() >= Duration::from_secs(1) || idle >= PAUSE;
        if due && tracing::enabled!(tracing::Level::DEBUG) {
            self.logged = Instant::now();
            tracing::debug!(
                batches = self.batches,
                jobs = self.jobs,
                largest = self.largest,
                trips = self.trips,
                waited_us = self.waited.as_micros() as u64,
                begin_us = self.begin.as_micros() as u64,
                flush_us = self.flush.as_micros() as u64,
                commit_us = self.commit.as_micros() as u64,
                busy_us = self.busy.as_micros() as u64,
                up_us = self.started.elapsed().as_micros() as u64,
                "writer statistics"
            );
            self.largest = 0;
        }
    }
}

/// Run a batch in one transaction, publish its events, answer its jobs; how many jobs it
/// held (with those `queue` added once the transaction began, see [`Conn::top_up`]).
fn run_batch(
    conn: &mut Option<PgConn>,
    reader: &mut Option<PgConn>,
    batch: &mut Vec<WriteJob>,
    shared: &Shared,
    notifier: &Notifier,
    mut queue: Option<&mut Queue>,
) -> usize {
    if batch.is_empty() {
        return 0;
    }
    let mut outcome = None;
    // A connection found dead at BEGIN (the server restarted while it sat idle) is
    // replaced and the batch begun again: nothing of it had reached the server.
    for _ in 0..2 {
        if !connected(conn, shared) {
            break;
        }
        let Some(c) = conn.as_mut() else { break };
        match group_commit::run(&mut Pg::new(c, shared.write_key, queue.as_deref_mut()), batch) {
            Outcome::NotBegun(e) if c.is_closed() => {
                *conn = None;
                outcome = Some(Outcome::Failed(e));
            }
            other => {
                outcome = Some(other);
                break;
            }
        }
    }
    let jobs = batch.len();
    let (Some(c), Some(outcome)) = (conn.as_mut(), outcome) else {
        group_commit::fail(batch, &Error::Storage("PostgreSQL is unreachable".into()));
        return jobs;
    };
    let commit_err = match outcome {
        Outcome::Committed(events) => {
            // Published here first, then announced: this instance's own follower, woken by
            // the notification, finds its cursor already past these events and reads
            // nothing back.
            let last = events.last().map(|e| e.event_id);
            shared.publisher.committed(reader, &shared.cfg, events);
            if let Some(last) = last {
                notifier.committed(last);
            }
            None
        }
        Outcome::Failed(e) | Outcome::NotBegun(e) => Some(e),
    };
    if c.is_closed() {
        *conn = None;
    }
    group_commit::complete(batch, commit_err.as_ref());
    jobs
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

/// The writer's connection as the group-commit engine drives it, with the event ids of
/// the open transaction (and where they stood at the last savepoint).
struct Pg<'c, 'q> {
    c: &'c mut PgConn,
    write_key: i64,
    ids: EventIds,
    at_savepoint: EventIds,
    /// Where jobs submitted while `BEGIN` waited are taken from.
    queue: Option<&'q mut Queue>,
    /// The transaction was committed with the held writes ([`Conn::flush`]).
    committed: bool,
}

impl<'c, 'q> Pg<'c, 'q> {
    fn new(c: &'c mut PgConn, write_key: i64, queue: Option<&'q mut Queue>) -> Self {
        Pg { c, write_key, ids: EventIds::default(), at_savepoint: EventIds::default(), queue, committed: false }
    }

    /// [`Conn::begin`]'s work.
    fn begin_transaction(&mut self, per_job: bool) -> Result<()> {
        self.c.discard();
        self.c.defer_inserts(!per_job);
        self.c.set_cache(None);
        self.committed = false;
        let begin = format!(
            "BEGIN; SELECT pg_advisory_xact_lock({}); SELECT last FROM coordd_event_counter FOR UPDATE; \
             SELECT key, value FROM settings; SELECT {AGENT_COLUMNS} FROM agents LIMIT {}",
            self.write_key,
            SMALL + 1
        );
        let rows =
            self.c.simple_rows(&begin).map_err(|e| Error::Storage(format!("cannot begin a write transaction: {e}")))?;
        // The lock's row (one empty value), the counter's (one value), the settings' (two),
        // the agents' (eight).
        let mut last = None;
        let mut settings = HashMap::new();
        let mut agents = Vec::new();
        for row in rows {
            match row.as_slice() {
                [Some(v)] => last = v.parse::<i64>().ok().or(last),
                [Some(k), Some(v)] => {
                    settings.insert(k.clone(), v.clone());
                }
                _ if row.len() == AGENT_COLUMNS.split(',').count() => agents.push(rows::agent(&TextRow(row))?),
                _ => {}
            }
        }
        let last = last.ok_or_else(|| {
            Error::Storage("cannot begin a write transaction: the event counter row is missing".into())
        })?;
        self.ids = EventIds::locked(last);
        let mut cache = Cache::default();
        cache.settings_read(settings);
        let whole = agents.len() as i64 <= SMALL;
        cache.agents_read(agents, whole);
        self.c.set_cache(Some(cache));
        Ok(())
    }

    /// What commits the transaction: the counter stored back (when the batch recorded
    /// events), then `COMMIT`.
    fn commit_sql(&self) -> String {
        let mut sql = String::new();
        if let Some(last) = self.ids.to_store() {
            sql.push_str(&format!("UPDATE coordd_event_counter SET last = {last}; "));
        }
        sql.push_str("COMMIT");
        sql
    }

    fn statement(&mut self, sql: &str, what: &str) -> Result<()> {
        self.c.batch(sql).map_err(|e| Error::Storage(format!("{what}: {e}")))
    }
}

impl Conn for Pg<'_, '_> {
    /// One round trip: begin, take the write lock, then the counter row (every batch takes
    /// it; only a batch that recorded events stores it back), every setting and the agents
    /// (kept for the transaction, see [`Cache`]).
    fn begin(&mut self, per_job: bool) -> Result<()> {
        let t0 = Instant::now();
        let begun = self.begin_transaction(per_job);
        self.c.trips_mut().begin += t0.elapsed();
        begun
    }

    fn top_up(&mut self, batch: &mut Vec<WriteJob>) {
        if let Some(q) = self.queue.as_deref_mut() {
            q.top_up(batch);
        }
    }

    /// The held writes, the counter and `COMMIT`, sent together: one round trip, and a
    /// turn under the write lock one round trip shorter ([`PgConn::flush_then`]). The
    /// engine calls this only right before [`Conn::commit`], which then has nothing left
    /// to do. If the held writes fail, the statements after them fail too (the
    /// transaction is aborted) and nothing is committed: the engine rolls back and runs
    /// the batch again with a savepoint per job, as before.
    fn flush(&mut self) -> Result<()> {
        let sql = self.commit_sql();
        let t0 = Instant::now();
        let r = self.c.flush_then(&sql).map_err(|e| Error::Storage(format!("cannot write the batch's rows: {e}")));
        self.c.trips_mut().flush += t0.elapsed();
        self.committed = r.is_ok();
        if self.committed {
            self.c.defer_inserts(false);
            self.c.set_cache(None);
        }
        r
    }

    fn savepoint(&mut self) -> Result<()> {
        self.at_savepoint = self.ids;
        self.statement("SAVEPOINT job", "savepoint failed")
    }

    fn release(&mut self) -> Result<()> {
        self.statement("RELEASE job", "savepoint release failed")
    }

    fn rollback_to(&mut self) -> Result<()> {
        self.ids = self.at_savepoint;
        // What the job read or wrote may be undone: read again.
        self.c.set_cache(Some(Cache::default()));
        self.statement("ROLLBACK TO job; RELEASE job", "savepoint rollback failed")
    }

    /// Store the counter and commit, in one round trip (a failing statement skips the
    /// rest, and the engine rolls back); nothing when [`Conn::flush`] committed already.
    fn commit(&mut self) -> Result<()> {
        if std::mem::take(&mut self.committed) {
            return Ok(());
        }
        let sql = self.commit_sql();
        self.c.defer_inserts(false);
        self.c.set_cache(None);
        let t0 = Instant::now();
        let r = self.statement(&sql, "commit failed");
        self.c.trips_mut().commit += t0.elapsed();
        r
    }

    fn rollback(&mut self) {
        self.c.discard();
        self.c.defer_inserts(false);
        self.c.set_cache(None);
        let _ = self.c.batch("ROLLBACK");
    }

    fn run(&mut self, job: &mut WriteJob) -> JobRun {
        let mut tx = PgTx::write(self.c, &mut self.ids);
        let ok = group_commit::run_job(job, &mut tx);
        // A job that swallowed a failed statement left PostgreSQL's transaction aborted:
        // it is rolled back like a failing one.
        JobRun { ok: ok && !tx.statement_failed(), dirty: tx.dirty(), events: tx.take_published() }
    }

    fn lost(&mut self) -> Option<Error> {
        self.c.is_closed().then(|| Error::Storage("the connection to PostgreSQL was lost".into()))
    }
}
