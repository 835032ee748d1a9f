//! The compositions: a send is inbox + mail + reconcile in one transaction, in that order;
//! an operation that fails leaves nothing behind.

use crate::domain::credentials::Acting;
use coord_proto::ErrorCode;
use coord_proto::types::*;

use super::messages;
use crate::store::sqlite::testing::Memory;

fn msg(summary: &str) -> MessageInput {
    MessageInput { summary: summary.into(), ..Default::default() }
}

#[test]
fn a_send_writes_the_message_its_copies_and_its_one_event() {
    let m = Memory::new();
    let p = SendParams { from: "lead".into(), to: "w".into(), message: msg("t"), ..Default::default() };
    let sent = m.write(|tx, now| messages::send(tx, now, p)).unwrap();
    let copy = m.read(|tx, _| tx.mail().mail_item("w", &sent.message.message_id)).unwrap().unwrap();
    assert_eq!(copy.event_id, sent.event_id);
    assert_eq!(m.events().len(), 1);
}

#[test]
fn a_failing_operation_leaves_nothing_behind() {
    let m = Memory::new();
    let p = SendParams {
        from: "lead".into(),
        to: "w".into(),
        thread_id: Some("thr_missing".into()),
        message: msg("t"),
        ..Default::default()
    };
    let e = m.write(|tx, now| messages::send(tx, now, p)).unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::NotFound));
    let bad_category = SendParams {
        from: "lead".into(),
        to: "w".into(),
        category: Some("urgentish".into()),
        task_id: Some("t".into()),
        message: msg("t"),
        ..Default::default()
    };
    let e = m.write(|tx, now| messages::send(tx, now, bad_category)).unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::InvalidCategory));
    assert!(m.events().is_empty());
    assert!(m.read(|tx, _| tx.agents().agent("w")).unwrap().is_none(), "no recipient recorded either");
}

#[test]
fn reconcile_events_follow_the_message_event() {
    let m = Memory::new();
    let p = RunCreateParams { run_id: Some("R1".into()), goal: "g".into(), ..Default::default() };
    m.write(|tx, now| crate::domain::orch::plan::create_run(tx, now, p)).unwrap();
    let p = TaskAddParams {
        run_id: "R1".into(),
        task_id: "T".into(),
        title: "t".into(),
        assign_to: Some("w".into()),
        kind: Some(TaskKind::Thread),
        ..Default::default()
    };
    m.write(|tx, now| crate::domain::orch::plan::add_task(tx, now, p)).unwrap();
    let plans = vec![crate::domain::orch::attempts::Plan {
        task_id: "T".into(),
        attempt: 1,
        worker: "w".into(),
        repo: None,
        worktree: None,
        previous: None,
        host: None,
        feedback: None,
    }];
    let mode = crate::domain::orch::attempts::Mode::Dispatch;
    let d = m.write(|tx, now| super::orch::record_attempts(tx, now, "R1", &plans, mode)).unwrap();
    let before = m.events().len();
    let p = ClaimParams { agent: "w".into(), thread_id: d.dispatches[0].thread_id.clone(), lease_seconds: None };
    m.write(|tx, now| messages::claim(tx, now, p, &Acting::daemon())).unwrap();
    let types: Vec<EventType> = m.events()[before..].iter().map(|e| e.event_type).collect();
    assert_eq!(types, [EventType::ThreadClaimed, EventType::TaskInProgress]);
}
