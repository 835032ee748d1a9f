//! Team-control figures: the embeddable inbox (MemoryInbox beside a plain tokio mpsc
//! channel in the same run, and DaemonInbox through the daemon), and the permission hook
//! as a session runs it (a gated call answered at once, and a call no rule gates).

use std::time::{Duration, Instant};

use coord_client::ConnectOptions;
use coord_inbox::{DaemonInbox, DaemonInboxOptions, Inbox, MemoryInbox, Message, SendError};
use coord_proto::api::ControlApiClient;
use coord_proto::types::*;
use coord_tests::Project;
use serde_json::json;
use tokio::sync::mpsc;

use crate::{ms, percentile, report};

fn messages(n: usize) -> Vec<Message> {
    (0..n).map(|i| Message::with_payload("a", "b", "bench", json!({ "n": i }))).collect()
}

fn summary(mut lat: Vec<Duration>) -> String {
    lat.sort();
    format!("p50 {}  p99 {}", us(percentile(&lat, 0.5)), us(percentile(&lat, 0.99)))
}

fn us(d: Duration) -> String {
    format!("{:.2} µs", d.as_secs_f64() * 1e6)
}

/// Latency: one message at a time from this task to a receiving task, which acks each
/// with the time it got it (the same harness for both channels, so only the channel
/// differs). Throughput: one producer retrying on Full, one consumer.
pub async fn memory(n: usize) {
    let (mut inbox_lat, mut mpsc_lat) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for round in 0..2 {
        let (ack_tx, mut ack_rx) = mpsc::unbounded_channel::<Instant>();
        let msgs = messages(n);
        if round == 0 {
            let inbox = MemoryInbox::new();
            let rx = inbox.clone();
            let consumer = tokio::spawn(async move {
                while rx.recv().await.is_ok() {
                    let _ = ack_tx.send(Instant::now());
                }
            });
            for m in msgs {
                let t0 = Instant::now();
                inbox.send(m).unwrap();
                inbox_lat.push(ack_rx.recv().await.unwrap() - t0);
            }
            inbox.close();
            consumer.await.unwrap();
        } else {
            let (tx, mut rx) = mpsc::channel::<Message>(256);
            let consumer = tokio::spawn(async move {
                while rx.recv().await.is_some() {
                    let _ = ack_tx.send(Instant::now());
                }
            });
            for m in msgs {
                let t0 = Instant::now();
                tx.try_send(m).unwrap();
                mpsc_lat.push(ack_rx.recv().await.unwrap() - t0);
            }
            drop(tx);
            consumer.await.unwrap();
        }
    }
    report(&format!("MemoryInbox send -> recv in another task ({n} msgs)"), summary(inbox_lat));
    report(&format!("tokio mpsc(256) send -> recv, same harness ({n} msgs)"), summary(mpsc_lat));

    // Throughput: a producer (yielding on Full) and a consumer task on one current-thread
    // runtime of its own, so the machine's load does not decide who runs; five rounds of
    // each, interleaved, and the median of each.
    let total = n * 20;
    let (mut inbox_rates, mut mpsc_rates) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        inbox_rates.push(on_one_thread(move || inbox_throughput(total)));
        mpsc_rates.push(on_one_thread(move || mpsc_throughput(total)));
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (i, m) = (median(inbox_rates), median(mpsc_rates));
    report(
        &format!("MemoryInbox throughput, 1 producer 1 consumer ({total} msgs)"),
        format!("{i:.0} msg/s (median of 5)"),
    );
    report(&format!("tokio mpsc(256) throughput, same harness ({total} msgs)"), format!("{m:.0} msg/s (median of 5)"));
}

/// Run a throughput round on a fresh current-thread runtime in its own thread.
fn on_one_thread<F, Fut>(round: F) -> f64
where
    F: FnOnce() -> Fut + Send + 'static,
    Fut: std::future::Future<Output = f64>,
{
    std::thread::spawn(move || tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(round()))
        .join()
        .unwrap()
}

async fn inbox_throughput(total: usize) -> f64 {
    let inbox = MemoryInbox::new();
    let rx = inbox.clone();
    let msgs = messages(total);
    let t0 = Instant::now();
    let consumer = tokio::spawn(async move { while rx.recv().await.is_ok() {} });
    for mut m in msgs {
        loop {
            match inbox.send(m) {
                Ok(()) => break,
                Err(SendError::Full { message, .. }) => {
                    m = *message;
                    tokio::task::yield_now().await;
                }
                Err(e) => panic!("{e}"),
            }
        }
    }
    inbox.close();
    consumer.await.unwrap();
    total as f64 / t0.elapsed().as_secs_f64()
}

async fn mpsc_throughput(total: usize) -> f64 {
    let (tx, mut rx) = mpsc::channel::<Message>(256);
    let msgs = messages(total);
    let t0 = Instant::now();
    let consumer = tokio::spawn(async move { while rx.recv().await.is_some() {} });
    for mut m in msgs {
        loop {
            match tx.try_send(m) {
                Ok(()) => break,
                Err(mpsc::error::TrySendError::Full(back)) => {
                    m = back;
                    tokio::task::yield_now().await;
                }
                Err(e) => panic!("{e}"),
            }
        }
    }
    drop(tx);
    consumer.await.unwrap();
    total as f64 / t0.elapsed().as_secs_f64()
}

/// A DaemonInbox sending to its own agent: send -> written by the outbox -> committed ->
/// pushed to the feed's subscription -> recv.
pub async fn daemon(p: &Project, n: usize) {
    let mut connect = ConnectOptions::for_dir(None, p.path());
    connect.autostart = false;
    let inbox = DaemonInbox::open(DaemonInboxOptions::new(connect, "bench-inbox")).await.unwrap();
    let mut lat = Vec::with_capacity(n);
    for i in 0..n {
        let t0 = Instant::now();
        inbox.send(Message::with_payload("bench-lead", "", "bench", json!({ "n": i }))).unwrap();
        inbox.recv().await.unwrap();
        lat.push(t0.elapsed());
    }
    lat.sort();
    report(
        &format!("DaemonInbox send -> recv through the daemon ({n} msgs)"),
        format!("p50 {}  p99 {}", ms(percentile(&lat, 0.5)), ms(percentile(&lat, 0.99))),
    );
}

/// The permission hook as Claude Code runs it: a gated call with an approver that answers
/// each request the moment it arrives (its own subscription and connection), and a call
/// no rule gates.
pub async fn permission(p: &Project, runs: usize) {
    for args in [vec!["policy", "lead", "bench-lead"], vec!["policy", "gate", "Bash(git push*)"]] {
        let out = p.inbox().args(["--agent", "bench-lead"]).args(args).run();
        assert_eq!(out.code, 0, "{out:?}");
    }
    let approver = p.client().await;
    let filter = EventFilter {
        to: Some("bench-lead".into()),
        message_types: vec!["permission_request".into()],
        after_event: Some(approver.server_info().last_event_id),
        ..Default::default()
    };
    let mut sub = approver.subscribe(filter).await.unwrap();
    let answering = tokio::spawn(async move {
        while let Ok(Some(e)) = sub.next_within(None).await {
            let m = e.message.unwrap();
            let answer = ControlSendParams {
                from: "bench-lead".into(),
                msg_type: "permission_response".into(),
                payload: json!({"request_id": m.payload_json["request_id"], "approved": true}),
                ..Default::default()
            };
            approver.control_send(answer).await.unwrap();
        }
    });
    let input = |cmd: &str| {
        json!({"session_id": "s1", "transcript_path": "/tmp/t.jsonl", "cwd": "/tmp", "hook_event_name": "PreToolUse",
            "tool_name": "Bash", "tool_input": {"command": cmd}, "tool_use_id": "toolu_1"})
        .to_string()
    };
    let args = ["--agent", "bench-worker", "hook", "claude", "pre-tool-use"];
    // Whole processes, run from this (blocking) thread while the approver answers on another.
    let time = |stdin: String, decided: bool| {
        tokio::task::block_in_place(|| {
            let mut lat = Vec::with_capacity(runs);
            for _ in 0..runs {
                let run = p.inbox().args(args).stdin(stdin.as_bytes());
                let t0 = Instant::now();
                let out = run.run();
                lat.push(t0.elapsed());
                assert_eq!(out.stdout.contains("\"allow\""), decided, "{out:?}");
            }
            lat.sort();
            format!("p50 {}  p99 {}", ms(percentile(&lat, 0.5)), ms(percentile(&lat, 0.99)))
        })
    };
    report(&format!("permission round trip, hook start -> decision ({runs} runs)"), time(input("git push"), true));
    report(&format!("gated hook, non-gated tool, whole process ({runs} runs)"), time(input("git status"), false));
    answering.abort();
}
