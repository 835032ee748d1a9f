//! Live sessions' figures (issue 33): the time from a committed message for a live worker
//! to its line on the session's input, the bridge's CPU while its live session sits idle,
//! and what session reuse saves on a two-task run of the real Claude Code against the
//! scripted model (model requests, the bytes of those requests, those bytes in tokens, the
//! tokens the model reported, and the run's time), each way.

use std::io::BufRead;
use std::time::{Duration, Instant};

use coord_proto::api::{InboxApiClient, OrchApiClient};
use coord_proto::types::*;
use coord_tests::mock_model::anthropic::{Anthropic, claude_env};
use coord_tests::mock_model::{MockModel, live::two_tasks_one_by_one};
use coord_tests::{Project, agent_cli, bin};

use crate::launch_bench::cpu_ticks;
use crate::orch_bench::{new_run, task};
use crate::{ms, percentile, report};

/// A live `command` session on run RV that copies every feed line to the fifo `out`; `n`
/// messages to its worker, one at a time, each timed from just before its send to its
/// line on the fifo (an upper bound on commit → session input); then the bridge's CPU
/// over `quiet` with the session idle.
pub async fn live(p: &Project, n: usize, quiet: Duration) {
    let c = p.client().await;
    new_run(&c, "RV").await;
    let mut t = task("RV", "T0".into(), vec![], TaskKind::Thread);
    t.assign_to = Some("w1".into());
    c.task_add(t).await.unwrap();
    let out = p.path().join("feed-out");
    assert!(std::process::Command::new("mkfifo").arg(&out).status().unwrap().success());
    let script = format!("while IFS= read -r line; do printf '%s\\n' \"$line\"; done > {}", out.display());
    let mut bridge = p.launch().args(["--run", "RV", "--command", &script, "--live", "--dispatch"]).spawn();
    // The reader: each line with the instant it came, to the timing loop.
    let (tx, rx) = std::sync::mpsc::channel::<(Instant, String)>();
    let reader = std::thread::spawn(move || {
        let f = std::io::BufReader::new(std::fs::File::open(&out).expect("the feed's copy"));
        for line in f.lines().map_while(Result::ok) {
            if tx.send((Instant::now(), line)).is_err() {
                break;
            }
        }
    });
    let recv = |what: &str| rx.recv_timeout(Duration::from_secs(120)).unwrap_or_else(|_| panic!("{what} never came"));
    assert!(recv("the task turn").1.contains("\"kind\":\"task\""));
    let mut lat = Vec::with_capacity(n);
    for i in 0..n {
        let summary = format!("bench {i}");
        let m = MessageInput { summary: summary.clone(), ..Default::default() };
        let t0 = Instant::now();
        c.send(SendParams { from: "lead".into(), to: "w1".into(), message: m, ..Default::default() }).await.unwrap();
        let (at, line) = recv("a mail turn");
        assert!(line.contains(&summary), "{line}");
        lat.push(at - t0);
    }
    lat.sort();
    report(
        &format!("committed message → live session's input ({n} mails)"),
        format!("p50 {}  p99 {}", ms(percentile(&lat, 0.5)), ms(percentile(&lat, 0.99))),
    );
    let before = cpu_ticks(bridge.id());
    tokio::time::sleep(quiet).await;
    let ticks = cpu_ticks(bridge.id()) - before;
    report(
        &format!("coord-launch CPU, one live session idle ({}s)", quiet.as_secs()),
        format!("{ticks} ticks (1 tick = 1/100 s)"),
    );
    // The cancel has the bridge stop the session (which ends the FIFO's copy), then it goes.
    let exited = EventFilter {
        run_id: Some("RV".into()),
        event_types: vec![EventType::LaunchExited],
        after_event: Some(c.server_info().last_event_id),
        ..Default::default()
    };
    let mut exited = c.subscribe(exited).await.unwrap();
    c.orch_cancel(CancelTaskParams { run_id: "RV".into(), task_id: None, reason: "bench over".into() }).await.unwrap();
    exited.next().await.unwrap().unwrap();
    let _ = bridge.kill();
    let _ = bridge.wait();
    drop(rx);
    let _ = reader.join();
}

/// What one way of running the two tasks cost the scripted model.
struct Cost {
    requests: usize,
    turn_requests: usize,
    bytes: usize,
    /// The request bodies in `cl100k_base` tokens: what the model was sent, estimated.
    sent_tokens: usize,
    /// What the scripted model reported (a fixed figure per reply: it counts requests).
    tokens: u64,
    processes: usize,
    /// The bridge's run, from its start to its end.
    secs: f64,
}

/// T1 then T2 (depending on T1), both w1's, one by one, with the real Claude Code and the
/// bridge's `flag` (`--live` or `--reuse-sessions`).
fn two_tasks(program: &std::path::Path, flag: &str) -> Cost {
    let p = Project::new();
    let agents = p.paths().db.parent().expect("the database's directory").to_path_buf();
    std::fs::create_dir_all(&agents).unwrap();
    let toml = format!("[defaults]\nclient = \"claude\"\nprogram = \"{}\"\n", program.display());
    std::fs::write(agents.join("launch.toml"), toml).unwrap();
    let orch = |args: &[&str]| p.orch().json_flag().args(args).run().ok();
    orch(&["run", "create", "--goal", "g", "--id", "R1"]);
    orch(&["task", "add", "--run", "R1", "--id", "T1", "--title", "T1", "--kind", "thread", "--assign-to", "w1"]);
    let t2 = ["task", "add", "--run", "R1", "--id", "T2", "--title", "T2", "--kind", "thread", "--assign-to", "w1"];
    orch(&[&t2[..], &["--depends-on", "T1"]].concat());
    let home = tempfile::Builder::new().prefix("agent-home").tempdir().unwrap();
    let mock = MockModel::start(Anthropic, two_tasks_one_by_one(&bin("inbox"), "w1", p.path()));
    let mut run = p.launch().args(["--run", "R1", "--dispatch", "--until-done", flag]);
    for (k, v) in claude_env(&mock, home.path()) {
        run = run.env(&k, &v);
    }
    let t0 = Instant::now();
    let out = run.run();
    let secs = t0.elapsed().as_secs_f64();
    assert_eq!(out.code, 0, "{flag}: {}\n{}", out.stderr, mock.transcript());
    let sessions = p.orch().json_flag().args(["status", "--run", "R1"]).run().ok().json()["sessions"].clone();
    let mut pids: Vec<i64> = sessions.as_array().unwrap().iter().filter_map(|s| s["pid"].as_i64()).collect();
    pids.dedup();
    let all = mock.requests();
    let cl100k = tiktoken_rs::cl100k_base().expect("cl100k_base");
    Cost {
        requests: all.len(),
        turn_requests: mock.turn_requests().len(),
        bytes: all.iter().map(|r| r.body.to_string().len()).sum(),
        sent_tokens: all.iter().map(|r| cl100k.encode_ordinary(&r.body.to_string()).len()).sum(),
        tokens: mock.reported_usage().all_input() + mock.reported_usage().output,
        processes: pids.len(),
        secs,
    }
}

/// Session reuse against a fresh live session per task, on the same two-task run.
pub fn reuse() {
    let Some(program) = agent_cli("claude") else {
        report("session reuse (two tasks, Claude Code)", "not measured: no claude CLI".into());
        return;
    };
    let fresh = two_tasks(&program, "--live");
    let reused = two_tasks(&program, "--reuse-sessions");
    for (what, c) in [("a fresh live session per task", &fresh), ("--reuse-sessions", &reused)] {
        report(
            &format!("two tasks, Claude Code, {what}"),
            format!(
                "{} process(es), {} model requests ({} main-loop), {} KB / {} cl100k tokens sent, {} tokens reported, {:.1} s",
                c.processes,
                c.requests,
                c.turn_requests,
                c.bytes / 1024,
                c.sent_tokens,
                c.tokens,
                c.secs
            ),
        );
    }
    report(
        "saved by reuse",
        format!(
            "{} process start(s), {} model requests ({} main-loop), {} KB / {} cl100k tokens sent, {} tokens reported, {:.1} s",
            fresh.processes as i64 - reused.processes as i64,
            fresh.requests as i64 - reused.requests as i64,
            fresh.turn_requests as i64 - reused.turn_requests as i64,
            (fresh.bytes as i64 - reused.bytes as i64) / 1024,
            fresh.sent_tokens as i64 - reused.sent_tokens as i64,
            fresh.tokens as i64 - reused.tokens as i64,
            fresh.secs - reused.secs
        ),
    );
}
