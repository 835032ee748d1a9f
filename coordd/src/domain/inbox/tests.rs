//! Inbox rules against SQLite in memory, with a clock the tests move: the thread state
//! machine, leases and fencing, one event per change, and fetch's order.

use crate::domain::credentials::Acting;
use std::time::Duration;

use coord_proto::ErrorCode;
use coord_proto::types::*;

use super::{lease, read};
use crate::domain::events;
use crate::ops::messages;
use crate::store::repos::EventQuery;
use crate::store::sqlite::testing::Memory;

fn msg(summary: &str) -> MessageInput {
    MessageInput { summary: summary.into(), ..Default::default() }
}

fn send(m: &Memory, to: &str) -> MessageResult {
    send_with(m, SendParams { from: "lead".into(), to: to.into(), message: msg("task"), ..Default::default() })
}

fn send_with(m: &Memory, p: SendParams) -> MessageResult {
    m.write(|tx, now| messages::send(tx, now, p)).unwrap()
}

fn claim(m: &Memory, agent: &str, thread: &str) -> crate::error::Result<LeaseResult> {
    let p = ClaimParams { agent: agent.into(), thread_id: thread.into(), lease_seconds: None };
    m.write(|tx, now| messages::claim(tx, now, p, &Acting::daemon()))
}

fn update(agent: &str, thread: &str, status: ThreadStatus) -> UpdateParams {
    UpdateParams {
        agent: agent.into(),
        thread_id: thread.into(),
        status: Some(status),
        message: msg("u"),
        ..Default::default()
    }
}

#[test]
fn claim_is_exclusive_until_the_lease_expires() {
    let m = Memory::new();
    let thr = send(&m, "w1").thread.thread_id;
    let first = claim(&m, "w1", &thr).unwrap();
    assert_eq!(first.lease.generation, 1);
    assert_eq!(claim(&m, "w2", &thr).unwrap_err().code(), Some(ErrorCode::LeaseConflict));
    m.advance(Duration::from_secs(coord_proto::DEFAULT_LEASE_SECONDS + 1));
    let second = claim(&m, "w2", &thr).unwrap();
    assert_eq!(second.lease.generation, 2, "generations only grow");
    assert_eq!(second.thread.assigned_to, "w2");
    let late = m.write(|tx, now| messages::update(tx, now, update("w1", &thr, ThreadStatus::InProgress)));
    assert_eq!(late.unwrap_err().code(), Some(ErrorCode::NotLeaseHolder));
}

#[test]
fn an_expired_lease_refuses_its_holder_and_a_replaced_token_is_stale() {
    let m = Memory::new();
    let thr = send(&m, "w1").thread.thread_id;
    let old = claim(&m, "w1", &thr).unwrap().lease.lease_token;
    let new = claim(&m, "w1", &thr).unwrap();
    assert_eq!(new.lease.generation, 2, "re-claiming fences the older grant");
    let p = UpdateParams { lease_token: Some(old), ..update("w1", &thr, ThreadStatus::InProgress) };
    assert_eq!(m.write(|tx, now| messages::update(tx, now, p)).unwrap_err().code(), Some(ErrorCode::StaleLease));
    m.advance(Duration::from_secs(coord_proto::DEFAULT_LEASE_SECONDS));
    let e = m.write(|tx, now| messages::update(tx, now, update("w1", &thr, ThreadStatus::InProgress))).unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::LeaseExpired));
}

#[test]
fn renewing_never_shortens_a_lease() {
    let m = Memory::new();
    let thr = send(&m, "w1").thread.thread_id;
    let p = ClaimParams { agent: "w1".into(), thread_id: thr.clone(), lease_seconds: Some(3600) };
    let long = m.write(|tx, now| messages::claim(tx, now, p, &Acting::daemon())).unwrap().lease.expires_at;
    let p = RenewParams { agent: "w1".into(), thread_id: thr, lease_seconds: Some(60), lease_token: None };
    let renewed = m.write(|tx, now| lease::renew(tx, now, p)).unwrap();
    assert_eq!(renewed.lease.expires_at, long);
}

#[test]
fn transitions_follow_the_state_machine() {
    let m = Memory::new();
    let thr = send(&m, "w1").thread.thread_id;
    let finish =
        || FinishParams { agent: "w1".into(), thread_id: thr.clone(), message: msg("r"), ..Default::default() };
    let e = m.write(|tx, now| messages::finish(tx, now, finish(), ThreadStatus::Done)).unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::NotLeaseHolder), "done needs a lease");
    claim(&m, "w1", &thr).unwrap();
    let blocked = m.write(|tx, now| messages::update(tx, now, update("w1", &thr, ThreadStatus::Blocked))).unwrap();
    assert_eq!(blocked.thread.status, ThreadStatus::Blocked);
    assert_eq!(blocked.message.kind, MessageKind::Question);
    assert_eq!(blocked.message.to_agent, "lead");
    let p = ReplyParams { from: "lead".into(), thread_id: thr.clone(), message: msg("a"), ..Default::default() };
    let answered = m.write(|tx, now| messages::reply(tx, now, p, &Acting::daemon())).unwrap();
    assert_eq!(answered.thread.status, ThreadStatus::InProgress, "an answer resumes a blocked thread");
    assert_eq!(answered.message.to_agent, "w1");
    let done = m.write(|tx, now| messages::finish(tx, now, finish(), ThreadStatus::Done)).unwrap();
    assert_eq!(done.thread.status, ThreadStatus::Done);
    assert!(!done.thread.lease.unwrap().active, "finishing releases the lease");
    let p = CancelParams { agent: "lead".into(), thread_id: thr, reason: "late".into(), artifacts: vec![] };
    let e = m.write(|tx, now| messages::cancel(tx, now, p, &Acting::daemon())).unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::InvalidTransition), "terminal threads accept nothing");
}

#[test]
fn every_change_records_exactly_one_event_and_messages_point_at_theirs() {
    let m = Memory::new();
    let sent = send(&m, "w1");
    let thr = sent.thread.thread_id.clone();
    claim(&m, "w1", &thr).unwrap();
    let p = RenewParams { agent: "w1".into(), thread_id: thr.clone(), ..Default::default() };
    m.write(|tx, now| lease::renew(tx, now, p)).unwrap();
    let p = FinishParams { agent: "w1".into(), thread_id: thr.clone(), message: msg("r"), ..Default::default() };
    let failed = m.write(|tx, now| messages::finish(tx, now, p, ThreadStatus::Failed)).unwrap();
    let types: Vec<EventType> = m.events().iter().map(|e| e.event_type).collect();
    use EventType::*;
    assert_eq!(types, [ThreadCreated, ThreadClaimed, LeaseRenewed, ThreadFailed]);
    let ids: Vec<i64> = m.events().iter().map(|e| e.event_id).collect();
    assert_eq!(ids, [1, 2, 3, 4]);
    assert_eq!(sent.message.event_id, 1);
    assert_eq!(failed.message.event_id, 4);
    assert_eq!(m.events()[3].message.as_ref().map(|x| x.message_id.clone()), Some(failed.message.message_id));
}

#[test]
fn fetch_serves_higher_priorities_first_then_the_oldest() {
    let m = Memory::new();
    let mut ids = Vec::new();
    for prio in [Priority::Low, Priority::Normal, Priority::Urgent, Priority::Normal, Priority::High] {
        let p = SendParams {
            from: "lead".into(),
            to: "w".into(),
            priority: Some(prio),
            message: msg("t"),
            ..Default::default()
        };
        ids.push(send_with(&m, p).thread.thread_id);
        m.advance(Duration::from_millis(5));
    }
    let p = FetchParams { agent: "w".into(), ..Default::default() };
    let got: Vec<String> =
        m.read(|tx, now| read::fetch(tx, now, p)).unwrap().threads.into_iter().map(|t| t.thread_id).collect();
    assert_eq!(got, [ids[2].clone(), ids[4].clone(), ids[1].clone(), ids[3].clone(), ids[0].clone()]);
}

#[test]
fn unread_fetch_sees_only_threads_with_news_for_the_agent() {
    let m = Memory::new();
    let a = send(&m, "w").thread.thread_id;
    send(&m, "w");
    let p = MarkReadParams { agent: "w".into(), thread_id: a.clone() };
    m.write(|tx, now| read::mark_read(tx, now, p)).unwrap();
    let p = FetchParams { agent: "w".into(), unread: true, ..Default::default() };
    let got = m.read(|tx, now| read::fetch(tx, now, p)).unwrap().threads;
    assert_eq!(got.len(), 1);
    assert_ne!(got[0].thread_id, a);
}

#[test]
fn expired_leases_are_reported_once() {
    let m = Memory::new();
    let thr = send(&m, "w1").thread.thread_id;
    claim(&m, "w1", &thr).unwrap();
    m.write(|tx, now| lease::report_expired(tx, now)).unwrap();
    assert!(!m.events().iter().any(|e| e.event_type == EventType::LeaseExpired), "not expired yet");
    m.advance(Duration::from_secs(coord_proto::DEFAULT_LEASE_SECONDS));
    m.write(|tx, now| lease::report_expired(tx, now)).unwrap();
    m.write(|tx, now| lease::report_expired(tx, now)).unwrap();
    let expired = m.events().iter().filter(|e| e.event_type == EventType::LeaseExpired).count();
    assert_eq!(expired, 1);
}

#[test]
fn live_filtering_agrees_with_the_stored_filter() {
    let m = Memory::new();
    let a = send(&m, "w1").thread.thread_id;
    let b = send(&m, "w2").thread.thread_id;
    claim(&m, "w1", &a).unwrap();
    m.write(|tx, now| messages::update(tx, now, update("w1", &a, ThreadStatus::Blocked))).unwrap();
    let p = ReplyParams { from: "lead".into(), thread_id: a.clone(), message: msg("a"), ..Default::default() };
    m.write(|tx, now| messages::reply(tx, now, p, &Acting::daemon())).unwrap();
    let filters = vec![
        EventFilter::default(),
        EventFilter { thread_id: Some(a.clone()), ..Default::default() },
        EventFilter { thread_id: Some(b), ..Default::default() },
        EventFilter { agent: Some("w1".into()), ..Default::default() },
        EventFilter { agent: Some("lead".into()), ..Default::default() },
        EventFilter { statuses: vec![ThreadStatus::Blocked, ThreadStatus::Pending], ..Default::default() },
        EventFilter { kinds: vec![MessageKind::Answer], ..Default::default() },
        EventFilter { event_types: vec![EventType::ThreadClaimed], after_event: Some(1), ..Default::default() },
    ];
    let all = m.events();
    assert_eq!(all.len(), 5);
    for f in filters {
        let q: EventQuery = m.read(|tx, _| events::resolve(tx, f.clone(), 0)).unwrap();
        let stored: Vec<i64> =
            m.read(|tx, _| tx.events().events_after(&q, 100)).unwrap().iter().map(|e| e.event_id).collect();
        let live: Vec<i64> = all.iter().filter(|e| events::matches(&q, e)).map(|e| e.event_id).collect();
        assert_eq!(stored, live, "{f:?}");
    }
}
