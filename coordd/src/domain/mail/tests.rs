//! Mail rules against SQLite in memory: one copy per recipient and none for the sender,
//! the delivery states as time passes, delivery into a session once and urgent first,
//! read/ack, and withdrawal by the sender only.

use crate::domain::credentials::Acting;
use std::time::Duration;

use coord_proto::ErrorCode;
use coord_proto::types::*;

use super::{copies, delivery};
use crate::domain::agents;
use crate::ops::{self, messages};
use crate::store::sqlite::testing::Memory;

fn send(to: &str) -> SendParams {
    SendParams {
        from: "lead".into(),
        to: to.into(),
        task_id: Some("t1".into()),
        category: Some("handoff".into()),
        message: MessageInput { summary: "s".into(), ..Default::default() },
        ..Default::default()
    }
}

fn mail_of(m: &Memory, agent: &str) -> Vec<MailItem> {
    let p = MailParams { agent: agent.into(), ..Default::default() };
    m.read(|tx, now| copies::list(tx, now, p)).unwrap().mail
}

#[test]
fn one_copy_per_recipient_and_none_for_the_sender() {
    let m = Memory::new();
    for id in ["lead", "w-a", "w-b"] {
        let p = RegisterParams { agent_id: id.into(), role: "r".into(), ..Default::default() };
        m.write(|tx, now| agents::register(tx, now, p)).unwrap();
    }
    let b = m.write(|tx, now| messages::send(tx, now, send(BROADCAST))).unwrap();
    assert_eq!(b.message.category, Some(Category::Handoff));
    assert!(b.message.requires_ack, "HANDOFF requires an ack by default");
    m.write(|tx, now| messages::send(tx, now, send("w-a"))).unwrap();
    m.write(|tx, now| messages::send(tx, now, SendParams { to: "lead".into(), ..send("lead") })).unwrap();
    assert_eq!(mail_of(&m, "w-a").len(), 2);
    assert_eq!(mail_of(&m, "w-b").len(), 1);
    assert!(mail_of(&m, "lead").is_empty(), "no copy for the sender");
    let newest_first: Vec<i64> = mail_of(&m, "w-a").iter().map(|i| i.event_id).collect();
    assert!(newest_first[0] > newest_first[1]);
}

#[test]
fn a_named_unknown_recipient_is_recorded_unless_strict() {
    let m = Memory::new();
    m.write(|tx, now| messages::send(tx, now, send("newcomer"))).unwrap();
    let a = m.read(|tx, _| agents::show(tx, "newcomer")).unwrap();
    assert!(!a.registered);
    m.write(|tx, now| agents::init(tx, now, InitParams { strict_agents: Some(true), ..Default::default() })).unwrap();
    let e = m.write(|tx, now| messages::send(tx, now, send("stranger"))).unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::UnknownSender));
}

#[test]
fn queued_mail_expires_and_delivered_mail_does_not() {
    let m = Memory::new();
    let p = SendParams { expires_in_seconds: Some(60), ..send("w") };
    m.write(|tx, now| messages::send(tx, now, p.clone())).unwrap();
    m.write(|tx, now| messages::send(tx, now, p)).unwrap();
    let check = |m: &Memory| {
        let p = CheckParams {
            agent: Some("w".into()),
            task_id: None,
            priorities: vec![Priority::Urgent],
            ..Default::default()
        };
        m.write(|tx, now| delivery::check(tx, now, p)).unwrap()
    };
    assert!(check(&m).messages.is_empty(), "only urgent asked for");
    let all = CheckParams { agent: Some("w".into()), ..Default::default() };
    let first = mail_of(&m, "w").pop().unwrap();
    assert_eq!(first.delivery, Delivery::Queued);
    let delivered = m.write(|tx, now| delivery::check(tx, now, all.clone())).unwrap();
    assert_eq!(delivered.messages.len(), 2);
    m.advance(Duration::from_secs(61));
    assert!(mail_of(&m, "w").iter().all(|i| i.delivery == Delivery::Delivered), "delivered mail never expires");
    let p = SendParams { expires_in_seconds: Some(60), ..send("w") };
    m.write(|tx, now| messages::send(tx, now, p)).unwrap();
    m.advance(Duration::from_secs(61));
    assert_eq!(mail_of(&m, "w")[0].delivery, Delivery::Expired);
    assert!(
        m.write(|tx, now| delivery::check(tx, now, all)).unwrap().messages.is_empty(),
        "expired mail stays undelivered"
    );
}

#[test]
fn check_delivers_each_message_once_urgent_first() {
    let m = Memory::new();
    m.write(|tx, now| messages::send(tx, now, send("w"))).unwrap();
    let urgent = SendParams { priority: Some(Priority::Urgent), ..send("w") };
    let u = m.write(|tx, now| messages::send(tx, now, urgent)).unwrap();
    let p = CheckParams { agent: Some("w".into()), ..Default::default() };
    let first = m.write(|tx, now| delivery::check(tx, now, p.clone())).unwrap();
    assert_eq!(first.messages[0].message_id, u.message.message_id);
    assert_eq!(first.messages.len(), 2);
    assert!(m.write(|tx, now| delivery::check(tx, now, p)).unwrap().messages.is_empty());
    let pending = PendingParams { agent: Some("w".into()), ..Default::default() };
    assert_eq!(m.read(|tx, now| delivery::pending(tx, now, &pending)).unwrap().pending, 0);
}

#[test]
fn acking_is_terminal_and_implies_read_and_delivered() {
    let m = Memory::new();
    let sent = m.write(|tx, now| messages::send(tx, now, send("w"))).unwrap();
    let r = MailRef { agent: "w".into(), message_id: sent.message.message_id.clone() };
    let acked = m.write(|tx, now| ops::agents::mail_ack(tx, now, r.clone())).unwrap();
    assert_eq!(acked.mail.state, MailState::Acked);
    assert!(acked.mail.read_at.is_some() && acked.mail.delivered_at.is_some());
    assert!(m.write(|tx, now| ops::agents::mail_ack(tx, now, r.clone())).unwrap().event_id.is_none());
    assert_eq!(m.write(|tx, now| ops::agents::mail_read(tx, now, r)).unwrap().mail.state, MailState::Acked);
    let stranger = MailRef { agent: "x".into(), message_id: sent.message.message_id };
    let e = m.write(|tx, now| ops::agents::mail_ack(tx, now, stranger)).unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::AckForbidden));
}

#[test]
fn only_the_sender_withdraws_and_only_what_is_queued() {
    let m = Memory::new();
    let sent = m.write(|tx, now| messages::send(tx, now, send("w"))).unwrap();
    let by = |agent: &str| MailRef { agent: agent.into(), message_id: sent.message.message_id.clone() };
    let e = m.write(|tx, now| delivery::withdraw(tx, now, by("w"))).unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::WithdrawForbidden));
    let w = m.write(|tx, now| delivery::withdraw(tx, now, by("lead"))).unwrap();
    assert_eq!(w.recipients, ["w"]);
    assert_eq!(mail_of(&m, "w")[0].delivery, Delivery::Withdrawn);
    let e = m.write(|tx, now| delivery::withdraw(tx, now, by("lead"))).unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::InvalidTransition));
}

#[test]
fn mail_to_a_task_waits_for_whoever_runs_it() {
    let m = Memory::new();
    let p = SendParams { to: String::new(), to_task: Some("backend".into()), ..send("") };
    m.write(|tx, now| messages::send(tx, now, p)).unwrap();
    let box_of = |agent: &str| PendingParams { agent: Some(agent.into()), ..Default::default() };
    assert_eq!(m.read(|tx, now| delivery::pending(tx, now, &box_of("w"))).unwrap().pending, 0);
    let work = SendParams { task_id: Some("backend".into()), category: None, ..send("w") };
    let t = m.write(|tx, now| messages::send(tx, now, work)).unwrap().thread.thread_id;
    let p = ClaimParams { agent: "w".into(), thread_id: t, lease_seconds: None };
    m.write(|tx, now| messages::claim(tx, now, p, &Acting::daemon())).unwrap();
    assert_eq!(m.read(|tx, now| delivery::pending(tx, now, &box_of("w"))).unwrap().pending, 2);
}
