//! The database's share of a PostgreSQL send, measured without the daemon: `pgbench`, one
//! client per daemon (a daemon has one writer) and prepared statements (as the writer), runs the statements of one group-commit batch of
//! sends the way the writer sends them (the write lock, the counter row, the settings
//! and agents read at `BEGIN`; one multi-row statement holding the batch's threads, events,
//! messages and mail copies; the counter stored; `COMMIT`), on a database whose schema
//! the daemon's own migrations made. What the server's processes spend per send there is
//! the least PostgreSQL needs for a send on this machine, whatever the daemon does.

use coord_tests::Project;
use coord_tests::pg::Server;

use super::procfs::comm_cpu_secs;

/// `pgbench`'s script: one batch of `batch` sends to 16 recipients.
fn script(batch: u32) -> String {
    let last = batch - 1;
    format!(
        "BEGIN;
SELECT pg_advisory_xact_lock(7);
SELECT last + 1 AS base FROM coordd_event_counter FOR UPDATE \\gset
SELECT key, value FROM settings;
SELECT * FROM agents LIMIT 257;
WITH g AS (SELECT :base + i AS id, 'thr-' || (:base + i) AS tid, 'msg-' || (:base + i) AS mid, 'w' || (i % 16) AS w, \
'lead' || i AS sender, now()::text AS at FROM generate_series(0, {last}) i), \
th AS (INSERT INTO threads (thread_id, run_id, task_id, subject, created_by, assigned_to, status, priority, prio_rank, \
latest_message_id, created_at, updated_at) SELECT tid, '', '', 'durable send', sender, w, 'open', 'normal', 1, mid, at, at FROM g), \
ev AS (INSERT INTO events (event_id, run_id, task_id, thread_id, source, event_type, message_id, summary, created_at, actor, \
assigned_to, created_by, thread_status, message_kind) SELECT id, '', '', tid, 'inbox', 'message', mid, 'durable send', at, sender, \
w, sender, 'open', 'task' FROM g), \
ms AS (INSERT INTO messages (message_id, thread_id, from_agent, to_agent, kind, summary, body, payload_json, created_at, event_id, \
requires_ack) SELECT mid, tid, sender, w, 'task', 'durable send', '', '{{}}', at, id, false FROM g), \
ma AS (INSERT INTO mail (recipient, event_id, message_id, state, priority) SELECT w, id, mid, 'unread', 'normal' FROM g) \
UPDATE agents SET last_seen_at = now()::text WHERE agent_id IN (SELECT sender FROM g);
UPDATE coordd_event_counter SET last = :base + {last};
COMMIT;
"
    )
}

/// Run the script of batches of `batch` sends from `clients` clients (the writers of as
/// many daemons: they take turns under the write lock) for `secs` seconds on a fresh
/// database of `server`: sends per second, and the server's CPU per send in µs.
pub async fn send_sql_alone(server: &Server, secs: u32, clients: u32, batch: u32) -> Result<(f64, f64), String> {
    let url = server.database();
    let db = url.trim_start_matches("postgres:///").split('?').next().unwrap_or_default().to_string();
    // The daemon's migrations make the schema; it stops again before the measure.
    drop(Project::new().with_store(&url).serve());
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let path = dir.path().join("batch.sql");
    std::fs::write(&path, script(batch)).map_err(|e| e.to_string())?;
    let cpu0 = comm_cpu_secs("postgres");
    let out = tokio::task::block_in_place(|| {
        server
            .pgbench(&db)
            .args(["-n", "-M", "prepared", "-c", &clients.to_string(), "-j", &clients.to_string()])
            .args(["-T", &secs.to_string(), "-f"])
            .arg(&path)
            .output()
    })
    .map_err(|e| format!("cannot run pgbench: {e}"))?;
    let cpu = comm_cpu_secs("postgres") - cpu0;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let failed = stdout.lines().find_map(|l| l.trim().strip_prefix("number of failed transactions: "));
    if failed.is_some_and(|f| !f.starts_with('0')) || !out.status.success() {
        return Err(format!("pgbench failed: {stdout} {}", String::from_utf8_lossy(&out.stderr)));
    }
    let done: f64 = stdout
        .lines()
        .find_map(|l| {
            l.trim().strip_prefix("number of transactions actually processed: ")?.split('/').next()?.parse().ok()
        })
        .ok_or_else(|| format!("no transaction count in pgbench's output: {stdout}"))?;
    let tps: f64 = stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("tps = ")?.split_whitespace().next()?.parse().ok())
        .ok_or_else(|| format!("no tps in pgbench's output: {stdout}"))?;
    let sends = done * f64::from(batch);
    Ok((tps * f64::from(batch), cpu * 1e6 / sends))
}
