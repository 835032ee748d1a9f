//! What only SQLite has: reads on connections that cannot write, the query plans the hot
//! paths rely on, and `user_version` migrations. (The contract both backends keep, group
//! commit and row mapping and migration pins, is `tests/tests/store_contract.rs`.)

use coord_proto::types::*;
use rusqlite::Connection;

use super::SqliteStore;
use super::migrations;
use super::testing::Memory;
use crate::store::repos::FetchQuery;

#[tokio::test]
async fn reads_run_on_connections_that_cannot_write() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("coord.db");
    let (store, _bus) = SqliteStore::open(&path).unwrap();
    let conn = r2d2::ManageConnection::connect(&super::open::readers(&path)).unwrap();
    let e = conn.execute("INSERT INTO settings (key, value) VALUES ('x', 'y')", []).unwrap_err();
    assert!(e.to_string().contains("readonly") || e.to_string().contains("read-only"), "{e}");
    crate::store::Store::close(&store).await;
}

fn plan(conn: &Connection, sql: &str) -> Vec<String> {
    plan_with(conn, sql, &[])
}

/// The plan of `sql` with its parameters bound to `params`.
fn plan_with(conn: &Connection, sql: &str, params: &[&dyn rusqlite::ToSql]) -> Vec<String> {
    let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
    stmt.query_map(params, |r| r.get::<_, String>(3)).unwrap().collect::<Result<_, _>>().unwrap()
}

/// `inbox.fetch` is served in its order by an index: no sort of the agent's pending
/// threads, however many there are.
#[test]
fn fetch_is_served_in_order_by_its_index() {
    let m = Memory::new();
    let q = FetchQuery { agent: "w".into(), statuses: vec![ThreadStatus::Pending], unread: false, limit: 50 };
    m.read(|tx, _| tx.threads().threads_fetch(&q)).unwrap();
    // The very statement `threads_fetch` runs.
    let p = plan_with(m.conn(), &super::threads::fetch_sql(&q), &[&"w", &"pending"]);
    assert!(p.iter().any(|l| l.contains("idx_threads_fetch")), "{p:?}");
    assert!(!p.iter().any(|l| l.contains("TEMP B-TREE")), "no sort: {p:?}");
}

#[test]
fn a_recipients_mail_is_one_key_range_newest_first() {
    let m = Memory::new();
    let p = plan(
        m.conn(),
        "SELECT x.message_id FROM mail x JOIN messages m ON m.message_id = x.message_id \
         WHERE x.recipient = 'w' ORDER BY x.event_id DESC LIMIT 50",
    );
    assert!(p.iter().any(|l| l.contains("PRIMARY KEY") || l.contains("sqlite_autoindex_mail")), "{p:?}");
    assert!(!p.iter().any(|l| l.contains("TEMP B-TREE")), "no sort: {p:?}");
    let q = plan(
        m.conn(),
        "SELECT COUNT(*) FROM mail x INDEXED BY idx_mail_queued WHERE x.recipient IN ('w') \
         AND x.delivered_at IS NULL AND x.withdrawn_at IS NULL",
    );
    assert!(q.iter().any(|l| l.contains("idx_mail_queued")), "{q:?}");
}

/// The per-change run probes and the ready queue must stay index lookups: a scan of a
/// run's tasks on every change made adding 100k tasks quadratic once.
#[test]
fn run_probes_and_the_ready_queue_use_the_task_index() {
    let m = Memory::new();
    for sql in [
        "SELECT 1 FROM tasks WHERE run_id = 'R1' AND status IN ('pending', 'ready', 'dispatched', 'in_progress', 'blocked', 'failed')",
        "SELECT 1 FROM tasks WHERE run_id = 'R1' AND status IN ('failed') AND retry_pending = 0",
        "SELECT task_id FROM tasks t WHERE t.run_id = 'R1' AND t.status = 'ready' ORDER BY t.prio_rank DESC, t.rowid LIMIT 50",
    ] {
        let p = plan(m.conn(), sql);
        assert!(p.iter().any(|l| l.contains("idx_tasks_queue") && l.contains("status=?")), "{p:?}");
        assert!(!p.iter().any(|l| l.contains("TEMP B-TREE")), "no sort: {p:?}");
    }
}

#[test]
fn migrates_a_fresh_database_and_is_idempotent() {
    let mut conn = Connection::open_in_memory().unwrap();
    assert_eq!(migrations::migrate(&mut conn).unwrap(), migrations::latest_version());
    assert_eq!(migrations::migrate(&mut conn).unwrap(), migrations::latest_version());
}

#[test]
fn a_newer_schema_is_refused() {
    let mut conn = Connection::open_in_memory().unwrap();
    conn.pragma_update(None, "user_version", 999).unwrap();
    assert!(migrations::migrate(&mut conn).is_err());
}
