//! The SQLite backend itself: group-commit isolation, panics contained, reads that cannot
//! write, the query plans the hot paths rely on, and migrations that never change.

use coord_proto::types::*;
use rusqlite::Connection;

use super::SqliteStore;
use super::migrations::{self, MIGRATIONS};
use super::testing::Memory;
use crate::error::Error;
use crate::ops::messages;
use crate::store::backend::{read, write};
use crate::store::repos::FetchQuery;
use crate::time::Ts;

fn send(n: usize) -> SendParams {
    SendParams {
        from: "lead".into(),
        to: "w".into(),
        message: MessageInput { summary: format!("m{n}"), ..Default::default() },
        ..Default::default()
    }
}

#[tokio::test]
async fn a_failing_job_rolls_back_alone_within_a_group_commit() {
    let dir = tempfile::tempdir().unwrap();
    let (store, bus) = SqliteStore::open(&dir.path().join("coord.db")).unwrap();
    // Many writes at once share transactions; every other one fails after writing.
    let now = Ts::from_millis(1_767_225_600_000);
    let jobs = (0..40).map(|i| {
        write(&store, move |tx| {
            let r = messages::send(tx, now, send(i))?;
            if i % 2 == 1 {
                return Err(Error::invalid("rejected after writing"));
            }
            Ok(r)
        })
    });
    let results = futures::future::join_all(jobs).await;
    assert_eq!(results.iter().filter(|r| r.is_ok()).count(), 20);
    let p = ListParams { limit: Some(100), ..Default::default() };
    let threads = read(&store, move |tx| tx.threads_list(&p, 100)).await.unwrap();
    let events = read(&store, |tx| tx.last_event_id()).await.unwrap();
    assert_eq!((threads.len(), events), (20, 20), "failed jobs left nothing behind");
    assert_eq!(bus.last_event_id(), 20);
    // A panicking job is contained too, and the writer keeps going.
    let e = write(&store, |_| -> crate::error::Result<()> { panic!("boom") }).await.unwrap_err();
    assert!(matches!(e, Error::Internal(_)), "{e:?}");
    write(&store, move |tx| messages::send(tx, now, send(99))).await.unwrap();
    crate::store::Store::close(&store).await;
}

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
    let q =
        FetchQuery { agent: "w".into(), statuses: vec![ThreadStatus::Pending], unread: false, after: None, limit: 50 };
    m.read(|tx, _| tx.threads_fetch(&q)).unwrap();
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

/// Shipped migrations are never edited: a database migrated by an older build must match
/// what a new one would build. Add a migration instead, and its hash here.
#[test]
fn shipped_migrations_never_change() {
    let fnv =
        |s: &str| s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    let hashes: Vec<String> = MIGRATIONS.iter().map(|m| format!("{:016x}", fnv(m))).collect();
    assert_eq!(hashes, SHIPPED, "a shipped migration changed");
}

const SHIPPED: &[&str] = &[
    "90ab6258d332f28b",
    "2b21ee7639da8300",
    "87e1d9c76252a45d",
    "e2335aca1525bca7",
    "3ade1e3adf30cba3",
    // 6 (issue 15): attempts.host.
    "b38d1590d18e15a2",
    // 7 (issue 14): agent credentials.
    "a3e0df438774fe78",
    // 8 (issue 11): typed control messages.
    "d19b9d99869bc246",
    // 9 (issue 13): full-text search, stacked tasks.
    "a9b6928e749bf5c8",
    // 10 (issue 19): launched sessions.
    "6df16cf133fe36be",
];
