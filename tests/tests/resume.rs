//! Waits survive their daemon: a client stream, `inbox wait-reply`, `inbox watch --follow`
//! and `orch wait` reconnect after the daemon is killed, stopped or restarted, and resume
//! after the last event they delivered, with no missed and no repeated event. A scripted
//! daemon stand-in shows that a subscription the daemon ends on its own (with a final
//! notification that is not an event) is resumed from the client's cursor.

use std::io::{BufRead, BufReader};
use std::process::Child;
use std::time::Duration;

use coord_client::Client;
use coord_proto::api::InboxApiClient;
use coord_proto::types::*;
use coord_tests::{Project, finish, ok, thread_id};
use serde_json::{Value, json};

/// Only matters when something is broken.
const LIMIT: Duration = Duration::from_secs(120);

fn send_params(thread: Option<&str>, summary: &str) -> SendParams {
    SendParams {
        from: "lead".into(),
        to: "w1".into(),
        thread_id: thread.map(str::to_string),
        message: MessageInput { summary: summary.into(), ..Default::default() },
        ..Default::default()
    }
}

/// A thread lead sent w1, and the event id to wait after.
fn task_thread(p: &Project) -> (String, String) {
    let sent = ok(p, &["send", "--from", "lead", "--to", "w1", "--summary", "task"]);
    (thread_id(&sent), sent["event_id"].to_string())
}

/// Wait until a spawned command says on stderr that it is waiting (it has subscribed).
fn await_waiting(child: &mut Child) -> BufReader<std::process::ChildStderr> {
    let mut err = BufReader::new(child.stderr.take().expect("stderr piped"));
    let mut line = String::new();
    loop {
        line.clear();
        assert!(err.read_line(&mut line).expect("read stderr") > 0, "exited before waiting");
        if line.contains("waiting for") {
            return err;
        }
    }
}

/// Wait until the daemon serves at least `n` subscriptions (`coordd status`).
fn await_subscribers(p: &Project, n: u64) {
    let t0 = std::time::Instant::now();
    while p.coordd().args(["status", "--json"]).run().json()["subscriptions"].as_u64().unwrap_or(0) < n {
        assert!(t0.elapsed() < LIMIT, "no subscriber appeared");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn rest(mut err: BufReader<std::process::ChildStderr>) -> String {
    let mut s = String::new();
    let _ = std::io::Read::read_to_string(&mut err, &mut s);
    s
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_stream_resumes_across_kill_9_without_missing_or_repeating() {
    let p = Project::new();
    let d = p.serve();
    let c = p.client().await;
    let first = c.send(send_params(None, "first")).await.unwrap();
    let thr = first.thread.thread_id.clone();
    let filter = EventFilter { thread_id: Some(thr.clone()), after_event: Some(first.event_id), ..Default::default() };
    let mut sub = c.subscribe(filter).await.unwrap();
    let a = c.send(send_params(Some(&thr), "a")).await.unwrap();
    let got = tokio::time::timeout(LIMIT, sub.next()).await.unwrap().unwrap().unwrap();
    assert_eq!(got.event_id, a.event_id);
    // Written and acknowledged, then the daemon dies at once: the stream may or may not
    // have received it live.
    let x = c.send(send_params(Some(&thr), "x")).await.unwrap();
    d.kill9();
    let _d2 = p.serve();
    let c2 = p.client().await;
    let y = c2.send(send_params(Some(&thr), "y")).await.unwrap();
    let mut ids = Vec::new();
    while ids.last() != Some(&y.event_id) {
        let ev = tokio::time::timeout(LIMIT, sub.next()).await.expect("resumed").unwrap().unwrap();
        ids.push(ev.event_id);
    }
    assert_eq!(ids, [x.event_id, y.event_id], "x once (live or replayed), then y");
    assert_eq!(sub.cursor(), Some(y.event_id));
}

#[test]
fn wait_reply_survives_a_kill_9_and_autostarts_the_daemon_again() {
    let p = Project::new();
    let d = p.serve();
    let (thr, cursor) = task_thread(&p);
    let mut waiter = p.inbox().args(["wait-reply", "--thread", &thr, "--after-event", &cursor]).spawn();
    let err = await_waiting(&mut waiter);
    d.kill9();
    // The reply's own call may start the daemon, or the waiter's reconnection may: one
    // daemon either way, and the waiter gets the reply once.
    p.inbox().args(["reply", "--from", "lead", "--thread", &thr, "--summary", "the answer"]).run().ok();
    let out = finish(waiter).ok();
    assert!(out.stdout.contains("the answer"), "{}", out.stdout);
    assert_eq!(out.stdout.matches("the answer").count(), 1, "{}", out.stdout);
    let notes = rest(err);
    assert!(notes.contains("reconnect"), "the wait says it reconnects: {notes}");
}

#[test]
fn wait_reply_json_waits_quietly_and_resumes_after_coordd_stop() {
    let p = Project::new();
    let (thr, cursor) = task_thread(&p);
    let waiter = p.inbox().args(["wait-reply", "--thread", &thr, "--after-event", &cursor, "--json"]).spawn();
    await_subscribers(&p, 1);
    // Not a reply: the waiter keeps waiting.
    let note = ok(&p, &["reply", "--from", "lead", "--thread", &thr, "--kind", "progress", "--summary", "fyi"]);
    p.coordd().args(["stop"]).run().ok();
    let reply = ok(&p, &["reply", "--from", "lead", "--thread", &thr, "--summary", "go"]);
    let out = finish(waiter).ok();
    let v = out.json();
    assert_eq!(v["woke"], true);
    assert_eq!(v["message"]["summary"], "go");
    assert_eq!(v["next_event_id"], reply["event_id"]);
    assert!(note["event_id"].as_i64() < reply["event_id"].as_i64());
    assert!(!out.stderr.contains("waiting for"), "nothing on stderr under --json: {}", out.stderr);
}

#[test]
fn coordd_stop_sticks_while_a_watch_waits_for_the_daemon_to_come_back() {
    let p = Project::new();
    let d = p.serve();
    let (thr, cursor) = task_thread(&p);
    // Any daemon the watcher would start leaves this mark (and fails).
    let mark = p.path().join("started-by-the-watcher");
    let fake = p.write("fake-coordd", &format!("#!/bin/sh\ntouch '{}'\nexit 1\n", mark.display()));
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let mut watcher = p
        .inbox()
        .args(["watch", "--thread", &thr, "--after-event", &cursor, "--follow", "--count", "1"])
        .env("COORDD_BIN", &fake.display().to_string())
        .spawn();
    let mut err = await_waiting(&mut watcher);
    d.signal("TERM");
    let mut line = String::new();
    while !line.contains("come back") {
        line.clear();
        assert!(err.read_line(&mut line).unwrap() > 0, "the watcher ended instead of waiting");
    }
    assert!(line.contains("never starts one"), "{line}");
    let _d2 = p.serve();
    ok(&p, &["reply", "--from", "lead", "--thread", &thr, "--kind", "progress", "--summary", "back"]);
    let out = finish(watcher).ok();
    assert!(out.stdout.contains("back"), "{}", out.stdout);
    assert!(!mark.exists(), "the watcher tried to start a daemon");
}

#[test]
fn watch_follow_delivers_each_event_once_across_a_restart() {
    let p = Project::new();
    let d = p.serve();
    let (thr, cursor) = task_thread(&p);
    let watcher = p
        .inbox()
        .args(["watch", "--thread", &thr, "--after-event", &cursor, "--follow", "--count", "4", "--json"])
        .env("COORD_NO_AUTOSTART", "1")
        .spawn();
    let reply = |s: &str| ok(&p, &["reply", "--from", "lead", "--thread", &thr, "--kind", "progress", "--summary", s]);
    let before = [reply("one"), reply("two")];
    d.signal("TERM");
    // Back by hand (the watcher may not start it): events written before it reconnects
    // come from the replay.
    let _d2 = p.serve();
    let after = [reply("three"), reply("four")];
    let out = finish(watcher).ok();
    let got: Vec<Value> = out.json_lines().iter().map(|l| l["event"]["event_id"].clone()).collect();
    let want: Vec<Value> = before.iter().chain(after.iter()).map(|v| v["event_id"].clone()).collect();
    assert_eq!(got, want);
}

#[test]
fn orch_wait_survives_a_restart() {
    let p = Project::new();
    let d = p.serve();
    let orch = |args: &[&str]| p.orch().args(args).json_flag().run().ok().json();
    orch(&["run", "create", "--goal", "g", "--id", "R1"]);
    orch(&["task", "add", "--run", "R1", "--id", "T1", "--title", "t", "--kind", "thread", "--assign-to", "w1"]);
    let disp = orch(&["dispatch", "--run", "R1", "--task", "T1"]);
    let thread = disp["dispatches"][0]["thread_id"].as_str().unwrap().to_string();
    let cursor = disp["event_id"].to_string();
    let mut waiter = p.orch().args(["wait", "--run", "R1", "--after-event", &cursor]).spawn();
    let err = await_waiting(&mut waiter);
    d.signal("TERM");
    p.inbox().args(["claim", "--agent", "w1", "--thread", &thread]).run().ok();
    p.inbox().args(["done", "--agent", "w1", "--thread", &thread, "--summary", "did it"]).run().ok();
    let out = finish(waiter).ok();
    assert!(out.stdout.contains("task.done"), "{}", out.stdout);
    assert!(rest(err).contains("reconnected"));
}

/// A stand-in daemon on a socket: it answers the handshake, and its subscriptions follow
/// a script: the first sends one event, then ends with a final notification that carries
/// a cursor (as a daemon cutting a slow subscriber loose does); the second, which must ask
/// for events after that first event, sends one more event and ends with a JSON-RPC
/// subscription error; the third sends the last event.
async fn scripted_daemon(listener: tokio::net::UnixListener, seen: tokio::sync::mpsc::UnboundedSender<Value>) {
    let subs = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    loop {
        let (stream, _) = listener.accept().await.unwrap();
        tokio::spawn(scripted_connection(stream, subs.clone(), seen.clone()));
    }
}

/// One connection of the stand-in daemon (see [`scripted_daemon`]).
async fn scripted_connection(
    stream: tokio::net::UnixStream,
    subs: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    seen: tokio::sync::mpsc::UnboundedSender<Value>,
) {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let event = |id: i64| {
        json!({"event_id": id, "event_type": "message.sent", "source": "inbox", "run_id": "", "task_id": "",
               "thread_id": "thr_1", "actor": "lead", "assigned_to": "w1", "created_by": "lead",
               "thread_status": "pending", "task_status": null, "message_id": null, "summary": format!("event {id}"),
               "payload_json": {}, "created_at": "2026-11-23T00:00:00.000Z", "message": null})
    };
    let (r, mut w) = stream.into_split();
    let mut lines = tokio::io::BufReader::new(r).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let req: Value = serde_json::from_str(&line).unwrap();
        let id = req["id"].clone();
        let mut out = Vec::new();
        match req["method"].as_str().unwrap_or_default() {
            "system.hello" => out.push(json!({"jsonrpc": "2.0", "id": id, "result": {
                "server": "coordd", "version": "test", "protocol_version": coord_proto::PROTOCOL_VERSION,
                "pid": 1, "socket": "", "db": "", "started_at": "", "uptime_ms": 0, "last_event_id": 0,
                "schema_version": 0, "methods": []}})),
            "events.subscribe" => {
                let n = subs.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
                let _ = seen.send(req["params"][0].clone());
                let sid = format!("s{n}");
                out.push(json!({"jsonrpc": "2.0", "id": id, "result": sid}));
                let notif = |result: Value| json!({"jsonrpc": "2.0", "method": "events.event", "params": {"subscription": sid, "result": result}});
                match n {
                    1 => {
                        out.push(notif(event(5)));
                        out.push(notif(json!({"closed": "over its memory budget", "cursor": 5})));
                    }
                    2 => {
                        out.push(notif(event(6)));
                        out.push(json!({"jsonrpc": "2.0", "method": "events.event",
                                        "params": {"subscription": sid, "error": "cut loose"}}));
                    }
                    _ => out.push(notif(event(7))),
                }
            }
            _ => out.push(json!({"jsonrpc": "2.0", "id": id, "result": true})),
        }
        for m in out {
            if w.write_all(format!("{m}\n").as_bytes()).await.is_err() {
                return;
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_subscription_the_daemon_ends_is_resumed_from_the_cursor_and_its_last_word_is_no_event() {
    let dir = tempfile::Builder::new().prefix("coord-").tempdir_in("/tmp").unwrap();
    let sock = dir.path().join("s.sock");
    let listener = tokio::net::UnixListener::bind(&sock).unwrap();
    let (tx, mut seen) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(scripted_daemon(listener, tx));
    let c = Client::connect_socket(&sock).await.unwrap();
    let mut sub = c.subscribe(EventFilter { after_event: Some(4), ..Default::default() }).await.unwrap();
    let mut ids = Vec::new();
    for _ in 0..3 {
        let ev = tokio::time::timeout(LIMIT, sub.next()).await.expect("an event").unwrap().unwrap();
        ids.push(ev.event_id);
    }
    assert_eq!(ids, [5, 6, 7], "every event once, and neither final notification as an event");
    let cursors: Vec<Value> = (0..3).map(|_| seen.try_recv().unwrap()["after_event"].clone()).collect();
    assert_eq!(cursors, [json!(4), json!(5), json!(6)], "each subscription resumed after the last event delivered");
}
