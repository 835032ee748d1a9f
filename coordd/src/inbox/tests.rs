//! Store-level tests of the inbox domain against a real SQLite file: state machine,
//! leases, fencing, group-commit isolation, read-only queries and query plans.

use coord_proto::ErrorCode;
use coord_proto::types::*;
use rusqlite::Connection;

use crate::db::Db;
use crate::error::Error;
use crate::events;
use crate::inbox::{read, write};

struct T {
    db: Db,
    _dir: tempfile::TempDir,
    path: std::path::PathBuf,
}

fn open() -> T {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("coord.db");
    T { db: Db::open(&path).unwrap(), _dir: dir, path }
}

fn msg(summary: &str) -> MessageInput {
    MessageInput { summary: summary.into(), ..Default::default() }
}

fn code(e: Error) -> ErrorCode {
    e.to_app().code
}

async fn send(t: &T, to: &str) -> MessageResult {
    let p = SendParams { from: "lead".into(), to: to.into(), message: msg("task"), ..Default::default() };
    t.db.write(move |c| write::send(c, p)).await.unwrap()
}

async fn claim(t: &T, agent: &str, thread: &str) -> Result<LeaseResult, Error> {
    let p = ClaimParams { agent: agent.into(), thread_id: thread.into(), lease_seconds: None };
    t.db.write(move |c| write::claim(c, p)).await
}

#[tokio::test]
async fn claim_is_exclusive_and_expired_leases_can_be_taken_over() {
    let t = open();
    let thr = send(&t, "w1").await.thread.thread_id;
    let first = claim(&t, "w1", &thr).await.unwrap();
    assert_eq!(first.lease.generation, 1);
    assert_eq!(code(claim(&t, "w2", &thr).await.unwrap_err()), ErrorCode::LeaseConflict);
    // Expire the lease in place.
    let id = thr.clone();
    t.db.write(move |c| {
        c.conn.execute("UPDATE leases SET expires_at = '2000-01-01T00:00:00.000Z' WHERE thread_id = ?1", [&id])?;
        Ok(())
    })
    .await
    .unwrap();
    let second = claim(&t, "w2", &thr).await.unwrap();
    assert_eq!(second.lease.generation, 2);
    assert_eq!(second.thread.assigned_to, "w2");
    let p = UpdateParams { agent: "w1".into(), thread_id: thr.clone(), message: msg("late"), ..Default::default() };
    let e = t.db.write(move |c| write::update(c, p)).await.unwrap_err();
    assert_eq!(code(e), ErrorCode::NotLeaseHolder);
}

#[tokio::test]
async fn transitions_follow_the_state_machine() {
    let t = open();
    let thr = send(&t, "w1").await.thread.thread_id;
    let finish = |agent: &str| FinishParams {
        agent: agent.into(),
        thread_id: thr.clone(),
        message: msg("r"),
        ..Default::default()
    };
    let p = finish("w1");
    let e = t.db.write(move |c| write::finish(c, p, ThreadStatus::Done)).await.unwrap_err();
    assert_eq!(code(e), ErrorCode::NotLeaseHolder, "done needs a lease");
    claim(&t, "w1", &thr).await.unwrap();
    let p = UpdateParams {
        agent: "w1".into(),
        thread_id: thr.clone(),
        status: Some(ThreadStatus::Blocked),
        message: msg("q"),
        ..Default::default()
    };
    let blocked = t.db.write(move |c| write::update(c, p)).await.unwrap();
    assert_eq!(blocked.thread.status, ThreadStatus::Blocked);
    assert_eq!(blocked.message.kind, MessageKind::Question);
    assert_eq!(blocked.message.to_agent, "lead");
    let p = ReplyParams { from: "lead".into(), thread_id: thr.clone(), message: msg("a"), ..Default::default() };
    let answered = t.db.write(move |c| write::reply(c, p)).await.unwrap();
    assert_eq!(answered.thread.status, ThreadStatus::InProgress);
    assert_eq!(answered.message.to_agent, "w1");
    let p = finish("w1");
    let done = t.db.write(move |c| write::finish(c, p, ThreadStatus::Done)).await.unwrap();
    assert_eq!(done.thread.status, ThreadStatus::Done);
    let p = CancelParams { agent: "lead".into(), thread_id: thr.clone(), reason: "late".into(), artifacts: vec![] };
    let e = t.db.write(move |c| write::cancel(c, p)).await.unwrap_err();
    assert_eq!(code(e), ErrorCode::InvalidTransition);
}

#[tokio::test]
async fn every_change_appends_exactly_one_event_and_messages_point_at_theirs() {
    let t = open();
    let sent = send(&t, "w1").await;
    let thr = sent.thread.thread_id.clone();
    claim(&t, "w1", &thr).await.unwrap();
    let p = RenewParams { agent: "w1".into(), thread_id: thr.clone(), ..Default::default() };
    t.db.write(move |c| write::renew(c, p)).await.unwrap();
    let p = FinishParams { agent: "w1".into(), thread_id: thr.clone(), message: msg("r"), ..Default::default() };
    t.db.write(move |c| write::finish(c, p, ThreadStatus::Failed)).await.unwrap();
    let conn = Connection::open(&t.path).unwrap();
    let types: Vec<String> = conn
        .prepare("SELECT event_type FROM events ORDER BY event_id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(types, ["thread.created", "thread.claimed", "lease.renewed", "thread.failed"]);
    let orphans: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM messages m LEFT JOIN events e ON e.event_id = m.event_id \
             WHERE e.message_id IS NOT m.message_id",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(orphans, 0);
    assert_eq!(t.db.last_event_id(), 4);
}

#[tokio::test]
async fn a_failing_job_rolls_back_alone_within_a_group_commit() {
    let t = open();
    // Queue many writes at once so they share transactions; every other one fails
    // after writing a row.
    let mut handles = Vec::new();
    for i in 0..40 {
        let p =
            SendParams { from: "lead".into(), to: "w".into(), message: msg(&format!("m{i}")), ..Default::default() };
        handles.push(t.db.write(move |c| {
            let r = write::send(c, p)?;
            if i % 2 == 1 {
                return Err(Error::invalid("rejected after writing"));
            }
            Ok(r)
        }));
    }
    let results = futures::future::join_all(handles).await;
    assert_eq!(results.iter().filter(|r| r.is_ok()).count(), 20);
    let conn = Connection::open(&t.path).unwrap();
    let threads: i64 = conn.query_row("SELECT COUNT(*) FROM threads", [], |r| r.get(0)).unwrap();
    let events: i64 = conn.query_row("SELECT COUNT(*) FROM events", [], |r| r.get(0)).unwrap();
    assert_eq!((threads, events), (20, 20), "failed jobs left nothing behind");
    // A panicking job is contained too, and the writer keeps going.
    let e = t.db.write(|_| -> crate::error::Result<()> { panic!("boom") }).await.unwrap_err();
    assert!(matches!(e, Error::Internal(_)));
    send(&t, "w").await;
}

#[tokio::test]
async fn reads_run_on_query_only_connections_and_use_the_indexes() {
    let t = open();
    send(&t, "w1").await;
    let conn = Connection::open(&t.path).unwrap();
    conn.pragma_update(None, "query_only", "ON").unwrap();
    let p = FetchParams { agent: "w1".into(), unread: true, ..Default::default() };
    assert_eq!(read::fetch(&conn, &p).unwrap().len(), 1, "fetch works where writing is impossible");
    let plan: Vec<String> = conn
        .prepare(
            "EXPLAIN QUERY PLAN SELECT t.thread_id FROM threads t \
             WHERE t.assigned_to = 'w1' AND t.status IN ('pending')",
        )
        .unwrap()
        .query_map([], |r| r.get::<_, String>(3))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(plan.iter().any(|l| l.contains("idx_threads_status_assigned")), "{plan:?}");
}

#[tokio::test]
async fn payloads_nested_too_deep_to_read_back_are_refused() {
    let t = open();
    let nest = |depth: usize| {
        let mut v = serde_json::json!({});
        for _ in 1..depth {
            v = serde_json::json!({ "a": v });
        }
        v
    };
    let send = |payload: serde_json::Value| {
        let p = SendParams {
            from: "lead".into(),
            to: "w".into(),
            message: MessageInput { summary: "deep".into(), payload_json: Some(payload), ..Default::default() },
            ..Default::default()
        };
        t.db.write(move |c| write::send(c, p))
    };
    assert!(send(nest(crate::inbox::MAX_JSON_DEPTH)).await.is_ok());
    let e = send(nest(crate::inbox::MAX_JSON_DEPTH + 1)).await.unwrap_err();
    assert_eq!(code(e), ErrorCode::InvalidInput);
}

#[tokio::test]
async fn live_filtering_agrees_with_the_sql_filter() {
    let t = open();
    let a = send(&t, "w1").await.thread.thread_id;
    let b = send(&t, "w2").await.thread.thread_id;
    claim(&t, "w1", &a).await.unwrap();
    let p = UpdateParams {
        agent: "w1".into(),
        thread_id: a.clone(),
        status: Some(ThreadStatus::Blocked),
        message: msg("q"),
        ..Default::default()
    };
    t.db.write(move |c| write::update(c, p)).await.unwrap();
    let p = ReplyParams { from: "lead".into(), thread_id: a.clone(), message: msg("a"), ..Default::default() };
    t.db.write(move |c| write::reply(c, p)).await.unwrap();
    let filters = vec![
        EventFilter::default(),
        EventFilter { thread_id: Some(a.clone()), ..Default::default() },
        EventFilter { thread_id: Some(b.clone()), ..Default::default() },
        EventFilter { agent: Some("w1".into()), ..Default::default() },
        EventFilter { agent: Some("lead".into()), ..Default::default() },
        EventFilter { statuses: vec![ThreadStatus::Blocked, ThreadStatus::Pending], ..Default::default() },
        EventFilter { kinds: vec![MessageKind::Answer], ..Default::default() },
        EventFilter { event_types: vec![EventType::ThreadClaimed], after_event: Some(1), ..Default::default() },
    ];
    let conn = Connection::open(&t.path).unwrap();
    let all = events::query(&conn, &events::resolve(&conn, EventFilter::default(), 0).unwrap(), 100).unwrap();
    assert_eq!(all.len(), 5);
    for f in filters {
        let r = events::resolve(&conn, f.clone(), 0).unwrap();
        let by_sql: Vec<i64> = events::query(&conn, &r, 100).unwrap().iter().map(|e| e.event_id).collect();
        let by_mem: Vec<i64> = all.iter().filter(|e| r.matches(e)).map(|e| e.event_id).collect();
        assert_eq!(by_sql, by_mem, "{f:?}");
    }
}
