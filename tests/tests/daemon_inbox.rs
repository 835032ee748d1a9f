//! `DaemonInbox` and `Router` over the real daemon: typed messages between processes'
//! inboxes, and an inbox that keeps going across a daemon crash and restart without losing
//! or repeating a message.

use std::time::Duration;

use coord_client::ConnectOptions;
use coord_inbox::{DaemonInbox, DaemonInboxOptions, Inbox, Message, Router, Start};
use coord_proto::api::ControlApiClient;
use coord_proto::types::*;
use coord_tests::Project;
use serde_json::json;

/// Only matters when something is broken.
async fn guarded<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(60), f).await.expect("hung")
}

fn opts(p: &Project, agent: &str) -> DaemonInboxOptions {
    let mut c = ConnectOptions::for_dir(None, p.path());
    c.autostart = false;
    DaemonInboxOptions::new(c, agent)
}

fn task(n: usize) -> TaskAssignmentPayload {
    TaskAssignmentPayload { task_id: format!("T{n}"), subject: format!("task {n}"), ..Default::default() }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_router_of_daemon_inboxes_delivers_to_another_processs_inbox() {
    let p = Project::new();
    let _d = p.serve();
    let w1 = DaemonInbox::open(opts(&p, "w1")).await.unwrap();
    let router = Router::daemon(opts(&p, "unused"));
    let sent = Message::new("lead", "", &task(1));
    let id = sent.id.clone();
    router.send("w1", sent).unwrap();
    let got = guarded(w1.recv()).await.unwrap();
    assert_eq!((got.id.as_str(), got.from.as_str(), got.to.as_str()), (id.as_str(), "lead", "w1"));
    assert_eq!(got.payload_as::<TaskAssignmentPayload>().unwrap(), task(1));
    assert!(got.thread_id.is_some() && got.event_id.is_some());
    assert_eq!(w1.poll().unwrap(), None);
    router.close();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_message_is_reported_by_flush() {
    let p = Project::new();
    let _d = p.serve();
    let inbox = DaemonInbox::open(opts(&p, "w1")).await.unwrap();
    inbox.send(Message::with_payload("lead", "w1", "idle_notification", json!({"idle_reason": "??"}))).unwrap();
    let e = guarded(inbox.flush()).await.unwrap_err();
    assert_eq!(e.error.code(), "invalid_input");
    inbox.send(Message::new("lead", "w1", &task(2))).unwrap();
    guarded(inbox.flush()).await.unwrap();
    assert_eq!(guarded(inbox.recv()).await.unwrap().payload["task_id"], "T2");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_daemon_inbox_resumes_across_a_daemon_restart_without_loss_or_repeats() {
    let p = Project::new();
    let d = p.serve();
    let inbox = DaemonInbox::open(DaemonInboxOptions { capacity: 1000, ..opts(&p, "w1") }).await.unwrap();
    let send = |c: coord_client::Client, range: std::ops::Range<usize>| async move {
        for n in range {
            let p = ControlSendParams {
                from: "lead".into(),
                to: Some("w1".into()),
                msg_type: "task_assignment".into(),
                payload: json!(task(n)),
                ..Default::default()
            };
            c.control_send(p).await.unwrap();
        }
    };
    send(p.client().await, 0..5).await;
    let mut got = Vec::new();
    for _ in 0..3 {
        got.push(guarded(inbox.recv()).await.unwrap());
    }
    send(p.client().await, 5..8).await;
    d.kill9();

    // While the daemon is down, a send is queued; it is written once the daemon is back.
    inbox.send(Message::new("w1", "w1", &task(8))).unwrap();
    let _d = p.serve();
    // Stored after the restart, before or after the inbox resubscribes: either way once.
    send(p.client().await, 9..12).await;
    guarded(inbox.flush()).await.unwrap();
    while got.len() < 12 {
        got.push(guarded(inbox.recv()).await.unwrap());
    }
    let subjects: Vec<String> = got.iter().map(|m| m.payload["task_id"].as_str().unwrap().to_string()).collect();
    let mut sorted = subjects.clone();
    sorted.sort_by_key(|s| s[1..].parse::<usize>().unwrap());
    assert_eq!(subjects.len(), 12);
    assert_eq!(sorted, (0..12).map(|n| format!("T{n}")).collect::<Vec<_>>(), "none lost, none repeated");
    let events: Vec<i64> = got.iter().map(|m| m.event_id.unwrap()).collect();
    assert!(events.windows(2).all(|w| w[0] < w[1]), "in event order: {events:?}");
    assert!(inbox.is_connected());
    assert_eq!(inbox.poll().unwrap(), None, "nothing more, nothing twice");
    inbox.close();
    assert_eq!(guarded(inbox.recv()).await, Err(coord_inbox::Closed));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_inbox_can_resume_from_a_saved_cursor() {
    let p = Project::new();
    let _d = p.serve();
    let first = DaemonInbox::open(opts(&p, "w1")).await.unwrap();
    first.send(Message::new("lead", "w1", &task(1))).unwrap();
    // Where to resume: the event of the last message handled.
    let cursor = guarded(first.recv()).await.unwrap().event_id.unwrap();
    drop(first);
    let c = p.client().await;
    let p2 = ControlSendParams {
        from: "lead".into(),
        to: Some("w1".into()),
        msg_type: "task_assignment".into(),
        payload: json!(task(2)),
        ..Default::default()
    };
    c.control_send(p2).await.unwrap();
    let again = DaemonInbox::open(DaemonInboxOptions { start: Start::After(cursor), ..opts(&p, "w1") }).await.unwrap();
    assert_eq!(guarded(again.recv()).await.unwrap().payload["task_id"], "T2");
}
