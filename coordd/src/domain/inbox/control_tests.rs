//! Typed control messages against SQLite in memory: what each role does to its thread,
//! requests and their answers, the recipient, and filters by type and recipient agreeing
//! live and stored.

use coord_proto::ErrorCode;
use coord_proto::types::*;
use serde_json::json;

use crate::domain::{events, policy};
use crate::ops;
use crate::store::repos::EventQuery;
use crate::store::sqlite::testing::Memory;

fn typed(from: &str, to: Option<&str>, t: &str, payload: serde_json::Value) -> ControlSendParams {
    ControlSendParams {
        from: from.into(),
        to: to.map(str::to_string),
        msg_type: t.into(),
        payload,
        ..Default::default()
    }
}

fn send(m: &Memory, p: ControlSendParams) -> crate::error::Result<ControlSendResult> {
    m.write(|tx, now| ops::control::send(tx, now, p, None))
}

#[test]
fn each_role_does_what_it_says_to_its_thread() {
    let m = Memory::new();
    let req = send(&m, typed("w1", Some("lead"), "permission_request", json!({"tool_name": "Bash"}))).unwrap();
    assert_eq!((req.thread.status, req.thread.priority), (ThreadStatus::Pending, Priority::Urgent));
    assert_eq!(req.request_id.as_deref(), Some(req.message.message_id.as_str()), "the message id serves");
    let task =
        send(&m, typed("lead", Some("w1"), "task_assignment", json!({"task_id": "T1", "subject": "s"}))).unwrap();
    assert_eq!(
        (task.thread.status, task.message.kind, task.thread.task_id.as_str()),
        (ThreadStatus::Pending, MessageKind::Task, "T1")
    );
    let notice = send(&m, typed("w1", Some("lead"), "idle_notification", json!({"idle_reason": "available"}))).unwrap();
    assert_eq!(notice.thread.status, ThreadStatus::Done);
    let into = ControlSendParams {
        thread_id: Some(task.thread.thread_id.clone()),
        ..typed("lead", Some("w1"), "x", json!({}))
    };
    let added = send(&m, into).unwrap();
    assert_eq!((added.thread.thread_id, added.thread.status), (task.thread.thread_id, ThreadStatus::Pending));
    let answer = typed("lead", None, "permission_response", json!({"request_id": req.request_id, "approved": true}));
    let a = send(&m, answer).unwrap();
    assert_eq!((a.thread.thread_id.as_str(), a.thread.status), (req.thread.thread_id.as_str(), ThreadStatus::Done));
    assert_eq!(a.message.to_agent, "w1");
    let mine = MailParams { agent: "w1".into(), ..Default::default() };
    let mail = m.read(|tx, now| crate::domain::mail::copies::list(tx, now, mine)).unwrap();
    assert!(mail.iter().all(|c| c.message_id != a.message.message_id), "an answer is not mail");
    // The answered request's copy, never delivered, no longer waits in the lead's session.
    let lead = MailParams { agent: "lead".into(), ..Default::default() };
    let copies = m.read(|tx, now| crate::domain::mail::copies::list(tx, now, lead)).unwrap();
    let copy = copies.iter().find(|c| c.message_id == req.message.message_id).unwrap();
    assert_eq!(copy.delivery, Delivery::Withdrawn);
}

#[test]
fn requests_refuse_a_thread_and_broadcast_and_answers_need_their_request() {
    let m = Memory::new();
    let err = |p| send(&m, p).unwrap_err().code();
    let with_thread =
        ControlSendParams { thread_id: Some("thr_x".into()), ..typed("w", Some("l"), "shutdown_request", json!({})) };
    assert_eq!(err(with_thread), Some(ErrorCode::InvalidInput));
    assert_eq!(
        err(typed("w", Some(BROADCAST), "plan_approval_request", json!({"plan": "p"}))),
        Some(ErrorCode::InvalidInput)
    );
    assert_eq!(err(typed("l", None, "shutdown_approved", json!({"request_id": "nope"}))), Some(ErrorCode::NotFound));
    assert_eq!(err(typed("l", None, "shutdown_approved", json!({}))), Some(ErrorCode::InvalidInput));
    send(&m, typed("w", Some("l"), "plan_approval_request", json!({"request_id": "r", "plan": "p"}))).unwrap();
    assert_eq!(
        err(typed("w", Some("l"), "plan_approval_request", json!({"request_id": "r", "plan": "p"}))),
        Some(ErrorCode::InvalidInput),
        "a request id is used once"
    );
    assert_eq!(
        err(typed("w", None, "plan_approval_response", json!({"request_id": "r", "approved": true}))),
        Some(ErrorCode::ResponseForbidden)
    );
    assert_eq!(
        err(typed("l", None, "permission_response", json!({"request_id": "r", "approved": true}))),
        Some(ErrorCode::InvalidInput),
        "the wrong answer type"
    );
}

#[test]
fn without_a_recipient_the_policys_lead_is_told() {
    let m = Memory::new();
    let idle = || typed("w1", None, "idle_notification", json!({"idle_reason": "available"}));
    assert_eq!(send(&m, idle()).unwrap_err().code(), Some(ErrorCode::InvalidInput));
    let set = PolicySetParams {
        actor: "boss".into(),
        policy: Policy { lead: Some("boss".into()), ..Policy::default() },
        expected_version: Some(0),
    };
    m.write(|tx, now| policy::set(tx, now, set.clone())).unwrap();
    assert_eq!(send(&m, idle()).unwrap().message.to_agent, "boss");
    let stale = m.write(|tx, now| policy::set(tx, now, set.clone())).unwrap_err();
    assert_eq!(stale.code(), Some(ErrorCode::InvalidTransition), "version 0 is gone");
}

#[test]
fn filters_by_type_and_recipient_agree_live_and_stored() {
    let m = Memory::new();
    send(&m, typed("w1", Some("lead"), "permission_request", json!({"tool_name": "Bash"}))).unwrap();
    send(&m, typed("lead", Some(BROADCAST), "team_permission_update", json!({"rules": []}))).unwrap();
    send(&m, typed("lead", Some("w1"), "brand_new", json!({}))).unwrap();
    let p = SendParams {
        from: "lead".into(),
        to: "w1".into(),
        message: MessageInput { summary: "plain".into(), ..Default::default() },
        ..Default::default()
    };
    m.write(|tx, now| ops::messages::send(tx, now, p)).unwrap();
    let filters = vec![
        EventFilter { to: Some("w1".into()), ..Default::default() },
        EventFilter { to: Some("lead".into()), ..Default::default() },
        EventFilter { message_types: vec![ANY_TYPE.into()], ..Default::default() },
        EventFilter { message_types: vec!["brand_new".into()], ..Default::default() },
        EventFilter { to: Some("w1".into()), message_types: vec![ANY_TYPE.into()], ..Default::default() },
        EventFilter {
            event_types: vec![EventType::ThreadCreated],
            message_types: vec!["permission_request".into()],
            ..Default::default()
        },
        EventFilter {
            event_types: vec![EventType::PolicyChanged],
            message_types: vec!["x".into()],
            ..Default::default()
        },
    ];
    let all = m.events();
    for f in filters {
        let q: EventQuery = m.read(|tx, _| events::resolve(tx, f.clone(), 0)).unwrap();
        let stored: Vec<i64> =
            m.read(|tx, _| tx.events().events_after(&q, 100)).unwrap().iter().map(|e| e.event_id).collect();
        let live: Vec<i64> = all.iter().filter(|e| events::matches(&q, e)).map(|e| e.event_id).collect();
        assert_eq!(stored, live, "{f:?}");
    }
    let to_w1 = EventFilter { to: Some("w1".into()), message_types: vec![ANY_TYPE.into()], ..Default::default() };
    let q = m.read(|tx, _| events::resolve(tx, to_w1, 0)).unwrap();
    assert_eq!(m.read(|tx, _| tx.events().events_after(&q, 100)).unwrap().len(), 2, "the broadcast and brand_new");
}
