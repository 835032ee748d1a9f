//! The database's share of a SQLite send, measured without the daemon: one thread of the
//! bench runs a send's four inserts (its event, thread, message and mail copy, through
//! prepared statements, as the writer makes them) in transactions of 32 sends, plus the
//! batch's one `last_seen_at` update, on a database whose schema and pragmas the daemon's
//! own migrations made. Its CPU per send is the least SQLite needs for a send here,
//! whatever the daemon around it does.

use std::path::Path;
use std::time::Instant;

use rusqlite::{Connection, params};

use super::procfs::stat_cpu_secs;

/// CPU time of the calling thread, in seconds.
fn thread_cpu_secs() -> f64 {
    stat_cpu_secs("/proc/thread-self/stat")
}

/// Sends per transaction: the most a batch holds with 32 clients (each waits for its reply).
const BATCH: usize = 32;

/// Run batches for about `secs` seconds on the SQLite database at `db`; sends per second of
/// this one thread and its CPU per send in µs.
pub fn send_sql_alone(db: &Path, secs: f64) -> Result<(f64, f64), String> {
    let conn = Connection::open(db).map_err(|e| e.to_string())?;
    let setup = "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON; \
                 PRAGMA temp_store=MEMORY; PRAGMA cache_size=-65536;";
    conn.execute_batch(setup).map_err(|e| e.to_string())?;
    let (cpu0, t0) = (thread_cpu_secs(), Instant::now());
    let mut n = 0usize;
    while t0.elapsed().as_secs_f64() < secs {
        batch(&conn, n).map_err(|e| e.to_string())?;
        n += BATCH;
    }
    let (wall, cpu) = (t0.elapsed().as_secs_f64(), thread_cpu_secs() - cpu0);
    Ok((n as f64 / wall, cpu * 1e6 / n as f64))
}

/// One transaction of [`BATCH`] sends, numbered from `first`, to 16 recipients.
fn batch(conn: &Connection, first: usize) -> rusqlite::Result<()> {
    let at = "2026-11-26T12:00:00.000000Z";
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let mut senders = Vec::with_capacity(BATCH);
    for i in first..first + BATCH {
        let (thread, message) = (format!("thr-{i:012}"), format!("msg-{i:012}"));
        let (from, to) = (format!("lead{}", i % BATCH), format!("w{}", i % 16));
        conn.prepare_cached(
            "INSERT INTO events (run_id, task_id, thread_id, source, event_type, message_id, summary, \
             payload_json, created_at, actor, assigned_to, created_by, thread_status, message_kind, task_status, \
             message_type, message_to) \
             VALUES ('', '', ?1, 'inbox', 'message', ?2, 'durable send', '{}', ?3, ?4, ?5, ?4, 'open', 'task', NULL, NULL, NULL)",
        )?
        .execute(params![thread, message, at, from, to])?;
        let event = conn.last_insert_rowid();
        conn.prepare_cached(
            "INSERT INTO threads (thread_id, run_id, task_id, subject, created_by, assigned_to, status, \
             priority, prio_rank, latest_message_id, created_at, updated_at) \
             VALUES (?1, '', '', 'durable send', ?2, ?3, 'open', 'normal', 1, ?4, ?5, ?5)",
        )?
        .execute(params![thread, from, to, message, at])?;
        conn.prepare_cached(
            "INSERT INTO messages (message_id, thread_id, from_agent, to_agent, kind, summary, body, \
             payload_json, created_at, event_id, category, requires_ack, msg_type) \
             VALUES (?1, ?2, ?3, ?4, 'task', 'durable send', '', '{}', ?5, ?6, NULL, 0, NULL)",
        )?
        .execute(params![message, thread, from, to, at, event])?;
        conn.prepare_cached(
            "INSERT INTO mail (recipient, event_id, message_id, state, priority, expires_at) \
             VALUES (?1, ?2, ?3, 'unread', 'normal', NULL)",
        )?
        .execute(params![to, event, message])?;
        senders.push(from);
    }
    let json = serde_json::to_string(&senders).unwrap_or_default();
    conn.prepare_cached(
        "UPDATE agents SET last_seen_at = ?1 WHERE agent_id IN (SELECT value FROM json_each(?2)) RETURNING agent_id",
    )?
    .query_map(params![at, json], |r| r.get::<_, String>(0))?
    .for_each(drop);
    conn.execute_batch("COMMIT")
}
