//! Waits are server-side subscriptions: `wait-reply` and `watch` through the CLI, and a
//! live wake through the client (subscribed before the reply is written), whose message
//! event names the copies it gave (`mail`).

use std::time::Duration;

use coord_proto::api::InboxApiClient;
use coord_proto::types::*;
use coord_tests::{Project, blocked_task, fails, finish, ok, thread_id};

#[tokio::test(flavor = "multi_thread")]
async fn a_subscribed_waiter_is_woken_by_the_reply() {
    let p = Project::new();
    let _d = p.serve();
    let c = p.client().await;
    let sent = c
        .send(SendParams {
            from: "lead".into(),
            to: "w1".into(),
            message: MessageInput { summary: "task".into(), ..Default::default() },
            ..Default::default()
        })
        .await
        .unwrap();
    let thr = sent.thread.thread_id.clone();
    let filter = EventFilter {
        thread_id: Some(thr.clone()),
        kinds: vec![MessageKind::Answer],
        ..Default::default() // no cursor: from now on
    };
    // The subscription call returns once the daemon has registered it, so the reply below
    // can only reach us live.
    let mut sub = c.subscribe(filter).await.unwrap();
    let other = p.client().await;
    let reply = other
        .reply(ReplyParams {
            from: "lead".into(),
            thread_id: thr.clone(),
            message: MessageInput { summary: "the answer".into(), ..Default::default() },
            ..Default::default()
        })
        .await
        .unwrap();
    let ev = tokio::time::timeout(Duration::from_secs(60), sub.next()).await.expect("woken").unwrap().unwrap();
    assert_eq!(ev.event_id, reply.event_id);
    assert_eq!(ev.event_type, EventType::ThreadReplied);
    let m = ev.message.expect("the event carries its message");
    assert_eq!(m.summary, "the answer");
    assert_eq!(m.kind, MessageKind::Answer);
}

#[test]
fn wait_reply_wakes_on_reply_and_ignores_other_kinds() {
    let p = Project::new();
    let _d = p.serve();
    let sent = p.inbox().args(["send", "--from", "lead", "--to", "w1", "--summary", "t", "--json"]).run().ok().json();
    let thr = thread_id(&sent);
    let cursor = sent["event_id"].to_string();
    let waiter = p.inbox().args(["wait-reply", "--thread", &thr, "--after-event", &cursor, "--json"]).spawn();
    // A progress note is not a reply; a control message is.
    p.inbox().args(["reply", "--from", "lead", "--thread", &thr, "--kind", "progress", "--summary", "fyi"]).run().ok();
    let control = p
        .inbox()
        .args(["reply", "--from", "lead", "--thread", &thr, "--kind", "control", "--summary", "stop", "--json"])
        .run()
        .ok()
        .json();
    let woke = finish(waiter).ok().json();
    assert_eq!(woke["message"]["kind"], "control");
    assert_eq!(woke["next_event_id"], control["event_id"]);

    // --after-message and --kinds select the same way.
    let mid = control["message"]["message_id"].as_str().unwrap().to_string();
    let waiter = p
        .inbox()
        .args(["wait-reply", "--thread", &thr, "--after-message", &mid, "--kinds", "progress", "--json"])
        .spawn();
    p.inbox()
        .args(["reply", "--from", "lead", "--thread", &thr, "--kind", "progress", "--summary", "later"])
        .run()
        .ok();
    let woke = finish(waiter).ok().json();
    assert_eq!(woke["message"]["summary"], "later");
}

#[test]
fn wait_reply_times_out_with_exit_10_and_a_resumable_cursor() {
    let p = Project::new();
    let _d = p.serve();
    let sent = p.inbox().args(["send", "--from", "lead", "--to", "w1", "--summary", "t", "--json"]).run().ok().json();
    let thr = thread_id(&sent);
    let out = p
        .inbox()
        .args(["wait-reply", "--thread", &thr, "--after-event", "1", "--timeout-seconds", "1", "--json"])
        .run()
        .code(10)
        .json();
    assert_eq!(out["ok"], true);
    assert_eq!(out["woke"], false);
    assert_eq!(out["next_event_id"], 1);
    let text = p.inbox().args(["wait-reply", "--thread", &thr, "--timeout-seconds", "1"]).run().code(10).stdout;
    assert!(text.contains("no reply"), "{text}");
}

#[test]
fn watch_returns_the_next_matching_activity() {
    let p = Project::new();
    let _d = p.serve();
    let first = p
        .inbox()
        .args(["send", "--from", "lead", "--to", "other", "--summary", "not for w1", "--json"])
        .run()
        .ok()
        .json();
    let cursor = first["event_id"].to_string();
    let watcher = p
        .inbox()
        .args([
            "--agent",
            "w1",
            "watch",
            "--after-event",
            &cursor,
            "--status",
            "pending,blocked",
            "--timeout-seconds",
            "600",
            "--json",
        ])
        .spawn();
    let sent =
        p.inbox().args(["send", "--from", "lead", "--to", "w1", "--summary", "for w1", "--json"]).run().ok().json();
    let got = finish(watcher).ok().json();
    assert_eq!(got["command"], "watch");
    assert_eq!(got["woke"], true);
    assert_eq!(got["event"]["event_type"], "thread.created");
    assert_eq!(got["event"]["thread_id"], sent["thread"]["thread_id"]);
    assert_eq!(got["next_event_id"], sent["event_id"]);

    // Nothing new for w1: a timeout, exit 10.
    let cursor = sent["event_id"].to_string();
    let idle = p
        .inbox()
        .args(["--agent", "w1", "watch", "--after-event", &cursor, "--timeout-seconds", "1", "--json"])
        .run()
        .code(10)
        .json();
    assert_eq!(idle["woke"], false);
}

#[test]
fn watch_follow_streams_every_matching_event_in_order() {
    let p = Project::new();
    let _d = p.serve();
    let thr = thread_id(
        &p.inbox().args(["send", "--from", "lead", "--to", "w1", "--summary", "t", "--json"]).run().ok().json(),
    );
    p.inbox().args(["claim", "--agent", "w1", "--thread", &thr]).run().ok();
    p.inbox().args(["update", "--agent", "w1", "--thread", &thr, "--status", "blocked", "--summary", "q"]).run().ok();
    // An agent's own actions are not news to it: the leader sees the worker's two events,
    // not its own send.
    let out = p
        .inbox()
        .args([
            "--agent",
            "lead",
            "watch",
            "--follow",
            "--count",
            "2",
            "--after-event",
            "0",
            "--thread",
            &thr,
            "--json",
        ])
        .run()
        .ok();
    let types: Vec<String> =
        out.json_lines().iter().map(|l| l["event"]["event_type"].as_str().unwrap().to_string()).collect();
    assert_eq!(types, ["thread.claimed", "thread.blocked"]);
    let own = p
        .inbox()
        .args(["--agent", "w1", "watch", "--after-event", "0", "--timeout-seconds", "600", "--json"])
        .run()
        .ok()
        .json();
    assert_eq!(own["event"]["event_type"], "thread.created", "w1 sees the leader's send, not its own claim");
}

/// Issue 20 item 2: a cursor past the latest event could never wake; the wait is refused
/// at once (exit 30) with the latest id, instead of hanging silently.
#[test]
fn wait_reply_on_a_cursor_past_the_latest_event_is_refused_naming_the_latest() {
    let p = Project::new();
    let _d = p.serve();
    let sent = p.inbox().args(["send", "--from", "lead", "--to", "w1", "--summary", "t", "--json"]).run().ok().json();
    let thr = thread_id(&sent);
    let latest = sent["event_id"].as_i64().unwrap();
    let future = (latest + 42).to_string();
    let wait = ["wait-reply", "--thread", &thr, "--after-event", &future, "--timeout-seconds", "5"];
    let v = fails(&p, &wait, 30, "cursor_ahead");
    assert_eq!(v["error"]["details"]["latest"], latest, "{v}");
    let text = p.inbox().args(wait).run().code(30).stderr;
    assert!(text.contains(&format!("latest event ({latest})")), "{text}");
}

/// Issue 20 item 2, on the other waits: `watch`, `orch wait` and a raw subscription.
#[tokio::test(flavor = "multi_thread")]
async fn every_wait_refuses_a_cursor_past_the_latest_event() {
    let p = Project::new();
    let _d = p.serve();
    let sent = p.inbox().args(["send", "--from", "lead", "--to", "w1", "--summary", "t", "--json"]).run().ok().json();
    let latest = sent["event_id"].as_i64().unwrap();
    let future = (latest + 1).to_string();
    let v = fails(&p, &["watch", "--after-event", &future, "--timeout-seconds", "5"], 30, "cursor_ahead");
    assert_eq!(v["error"]["details"]["latest"], latest, "{v}");
    p.orch().args(["run", "create", "--goal", "G", "--id", "R1"]).run().ok();
    let latest = latest + 1; // run.created
    let future = (latest + 1).to_string();
    let wait = ["wait", "--run", "R1", "--after-event", &future, "--timeout-seconds", "5", "--json"];
    let v = p.orch().args(wait).run().code(30).json();
    assert_eq!(v["error"]["code"], "cursor_ahead", "{v}");
    assert_eq!(v["error"]["details"]["latest"], latest, "{v}");
    let filter = EventFilter { after_event: Some(latest + 1), ..Default::default() };
    let Err(err) = p.client().await.subscribe(filter).await else {
        panic!("a cursor past the latest event is refused")
    };
    assert_eq!(err.code(), "cursor_ahead", "{err}");
    // The latest id itself is a valid cursor: it waits for what comes next.
    let filter = EventFilter { after_event: Some(latest), ..Default::default() };
    p.client().await.subscribe(filter).await.expect("a cursor at the latest event is fine");
}

/// A daemon with the workers `wkr-1` and `wkr-2` registered, and a client.
async fn two_workers() -> (Project, coord_tests::Daemon, coord_client::Client) {
    use coord_proto::api::AgentsApiClient;
    let p = Project::new();
    let d = p.serve();
    let c = p.client().await;
    for agent in ["wkr-2", "wkr-1"] {
        c.agent_register(RegisterParams { agent_id: agent.into(), role: "worker".into(), ..Default::default() })
            .await
            .unwrap();
    }
    (p, d, c)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_live_message_event_names_its_copies_and_events_list_does_not() {
    use coord_proto::api::EventsApiClient;
    let (_p, _d, c) = two_workers().await;
    let mut sub =
        c.subscribe(EventFilter { event_types: vec![EventType::ThreadCreated], ..Default::default() }).await.unwrap();
    let sent = c
        .send(SendParams {
            from: "lead".into(),
            to: BROADCAST.into(),
            priority: Some(Priority::Urgent),
            expires_in_seconds: Some(600),
            message: MessageInput { summary: "all hands".into(), ..Default::default() },
            ..Default::default()
        })
        .await
        .unwrap();
    let ev = tokio::time::timeout(Duration::from_secs(60), sub.next()).await.expect("live").unwrap().unwrap();
    assert_eq!(ev.event_id, sent.event_id);
    let mail = ev.mail.expect("a live message event names its copies");
    let mut recipients = mail.recipients.clone();
    recipients.sort();
    assert_eq!(recipients, ["wkr-1", "wkr-2"], "every registered agent but the sender");
    assert_eq!(mail.priority, Priority::Urgent);
    assert!(mail.expires_at.is_some_and(|t| t > sent.message.created_at));

    let listed = c.events_list(EventsListParams { limit: Some(10), ..Default::default() }).await.unwrap();
    let stored = listed.events.iter().find(|e| e.event_id == sent.event_id).expect("the stored event");
    assert_eq!(stored.mail, None, "events.list does not carry the note");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_replayed_message_event_names_the_same_copies_as_the_live_one() {
    let (p, _d, c) = two_workers().await;
    let start = c.newest_event().await.unwrap();
    let created = vec![EventType::ThreadCreated];
    let mut live = c.subscribe(EventFilter { event_types: created.clone(), ..Default::default() }).await.unwrap();
    let sends = [
        (BROADCAST, Some(Priority::Urgent), Some(600)),
        ("wkr-1", None, None),
        ("wkr-2", Some(Priority::Low), Some(60)),
    ];
    let mut lived = Vec::new();
    for (to, priority, expires_in_seconds) in sends {
        let message = MessageInput { summary: format!("to {to}"), ..Default::default() };
        let p = SendParams {
            from: "lead".into(),
            to: to.into(),
            priority,
            expires_in_seconds,
            message,
            ..Default::default()
        };
        c.send(p).await.unwrap();
        let ev = tokio::time::timeout(Duration::from_secs(60), live.next()).await.expect("live").unwrap().unwrap();
        assert!(ev.mail.is_some(), "a live message event names its copies");
        lived.push(ev);
    }

    let filter = EventFilter { after_event: Some(start), event_types: created, ..Default::default() };
    let mut replay = p.client().await.subscribe(filter).await.unwrap();
    for ev in &lived {
        let again =
            tokio::time::timeout(Duration::from_secs(60), replay.next()).await.expect("replayed").unwrap().unwrap();
        assert_eq!((again.event_id, &again.mail), (ev.event_id, &ev.mail), "replayed as it went live");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_batched_subscription_carries_the_events_ready_together_in_one_notification() {
    use coord_proto::api::EventsApiClient;
    let p = Project::new();
    let _d = p.serve();
    let c = p.client().await;
    let send = |i: usize| SendParams {
        from: "lead".into(),
        to: "w1".into(),
        message: MessageInput { summary: format!("m{i}"), ..Default::default() },
        ..Default::default()
    };
    let start = c.newest_event().await.unwrap();
    let mut ids = Vec::new();
    for i in 0..30 {
        ids.push(c.send(send(i)).await.unwrap().event_id);
    }
    let filter = EventFilter { after_event: Some(start), ..Default::default() };
    let mut sub = c.subscribe_event_batches(filter).await.unwrap();
    let first = tokio::time::timeout(Duration::from_secs(60), sub.next()).await.expect("replayed").unwrap().unwrap();
    let got: Vec<i64> = first.iter().map(|e| e.event_id).collect();
    assert_eq!(got, ids, "the stored events in one notification, in order");
    assert!(first.iter().all(|e| e.mail.is_some()), "each with its copies");

    let live = c.send(send(30)).await.unwrap();
    let next = tokio::time::timeout(Duration::from_secs(60), sub.next()).await.expect("live").unwrap().unwrap();
    assert_eq!(next.iter().map(|e| e.event_id).collect::<Vec<_>>(), [live.event_id]);
}

/// Issue 31 item 1: the worker asks, the lead answers at once, and only then does the
/// worker start its wait, with no cursor (what a launched session's prompt says). The wait
/// starts after the worker's own latest message, so it returns the answer.
#[test]
fn wait_reply_without_a_cursor_sees_an_answer_given_before_it_started() {
    let p = Project::new();
    let _d = p.serve();
    let (thr, _) = blocked_task(&p, "w1", "Which auth?");
    let answer =
        p.orch().args(["answer", "--run", "R1", "--task", "T1", "--summary", "email"]).json_flag().run().ok().json();
    // Later events, in the thread and elsewhere, move the newest event past the answer.
    ok(&p, &["reply", "--from", "lead", "--thread", &thr, "--kind", "progress", "--summary", "fyi"]);
    ok(&p, &["send", "--from", "lead", "--to", "w2", "--summary", "elsewhere"]);
    let woke = p
        .inbox()
        .args(["--agent", "w1", "wait-reply", "--thread", &thr, "--timeout-seconds", "60", "--json"])
        .run()
        .ok()
        .json();
    assert_eq!(woke["message"]["summary"], "email", "{woke}");
    assert_eq!(woke["next_event_id"], answer["event_id"], "{woke}");
}

/// Without a cursor, the wait is for a reply to the caller's *latest* message: an answer to
/// an earlier question does not count, and an agent that wrote nothing in the thread gets
/// the thread's first reply.
#[test]
fn wait_reply_without_a_cursor_waits_after_the_callers_latest_message() {
    let p = Project::new();
    let _d = p.serve();
    let (thr, _) = blocked_task(&p, "w1", "First question?");
    p.orch().args(["answer", "--run", "R1", "--task", "T1", "--summary", "first answer"]).run().ok();
    ok(&p, &["update", "--agent", "w1", "--thread", &thr, "--status", "blocked", "--summary", "Second question?"]);
    let waiter =
        p.inbox().args(["--agent", "w1", "wait-reply", "--thread", &thr, "--timeout-seconds", "60", "--json"]).spawn();
    let second = p
        .orch()
        .args(["answer", "--run", "R1", "--task", "T1", "--summary", "second answer"])
        .json_flag()
        .run()
        .ok()
        .json();
    let woke = finish(waiter).ok().json();
    assert_eq!(woke["message"]["summary"], "second answer", "{woke}");
    assert_eq!(woke["next_event_id"], second["event_id"]);
    // Someone who never wrote in the thread: its first reply.
    let other = p
        .inbox()
        .args(["--agent", "w9", "wait-reply", "--thread", &thr, "--timeout-seconds", "60", "--json"])
        .run()
        .ok()
        .json();
    assert_eq!(other["message"]["summary"], "first answer", "{other}");
}

/// Issue 31 item 1: a wait with no cursor and no agent cannot know whose reply it waits
/// for, so it starts at the newest event; when it times out it says where it started and
/// how to see a reply given before (it used to name that start as if resuming from it
/// could find the reply).
#[test]
fn a_cursorless_wait_without_an_agent_says_where_it_started_and_how_to_see_earlier_replies() {
    let p = Project::new();
    let _d = p.serve();
    let (thr, _) = blocked_task(&p, "w1", "Which auth?");
    p.orch().args(["answer", "--run", "R1", "--task", "T1", "--summary", "email"]).run().ok();
    let mut c = coord_tests::RawConn::connect(&p.paths().socket);
    let hello = c.call(serde_json::json!({"jsonrpc":"2.0","id":1,"method":"system.hello"}));
    let newest = hello["result"]["last_event_id"].as_i64().unwrap();
    let text = p.inbox().args(["wait-reply", "--thread", &thr, "--timeout-seconds", "1"]).run().code(10).stdout;
    assert!(text.contains(&format!("started at event {newest}")), "{text}");
    assert!(text.contains("--agent"), "{text}");
}

/// `after_latest_from` on the wire: the daemon resolves it; it needs a thread.
#[test]
fn after_latest_from_needs_a_thread() {
    let p = Project::new();
    let _d = p.serve();
    ok(&p, &["send", "--from", "lead", "--to", "w1", "--summary", "t"]);
    let mut c = coord_tests::RawConn::connect(&p.paths().socket);
    let r =
        c.call(serde_json::json!({"jsonrpc":"2.0","id":1,"method":"events.list","params":{"after_latest_from":"w1"}}));
    assert_eq!(r["error"]["data"]["code"], "invalid_input", "{r}");
}
