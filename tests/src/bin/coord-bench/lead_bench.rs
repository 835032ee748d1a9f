//! The lead's figures (issue 35): how long a worker's question takes to reach a live lead's
//! session (from the worker's `inbox.update --status blocked` call to the turn read from
//! the lead's stdin: the daemon's event, the bridge's subscription, the question looked up,
//! the turn written into the feed, the lead's `cat`), and a whole scripted team run
//! (`orch demo --team`: repository, lead, two workers, a question, two merges, the run
//! merged into main) end to end.

use std::io::BufRead;
use std::time::{Duration, Instant};

use coord_proto::api::{InboxApiClient, OrchApiClient};
use coord_proto::types::*;
use coord_tests::Project;

use crate::orch_bench::task;
use crate::{ms, percentile, report};

/// `n` questions, one per task, each timed from the blocked update to its turn in the lead.
pub async fn question_to_lead(p: &Project, n: usize) {
    std::fs::create_dir_all(p.path().join(".agents")).unwrap();
    let out = p.path().join("lead-out");
    assert!(std::process::Command::new("mkfifo").arg(&out).status().unwrap().success());
    let lead = format!("exec cat > '{}'", out.display());
    let max = (n + 1).to_string();
    let args = ["--lead", "command", "--goal", "bench", "--run", "RB", "--lead-command", &lead];
    let mut bridge = p
        .launch()
        .args(args)
        .args(["--command", "exec sleep 100000", "--max-sessions", &max, "--grace-seconds", "2", "--quiet"])
        .spawn();
    // The lead's stdout, line by line, each with the instant it was read.
    let (tx, rx) = std::sync::mpsc::channel::<(Instant, String)>();
    std::thread::spawn(move || {
        let f = std::fs::File::open(&out).expect("the lead's output");
        for line in std::io::BufReader::new(f).lines() {
            let Ok(line) = line else { break };
            if tx.send((Instant::now(), line)).is_err() {
                break;
            }
        }
    });
    let _first = rx.recv_timeout(Duration::from_secs(120)).expect("the lead's first turn");
    let c = p.client().await;
    let mut lat = Vec::with_capacity(n);
    for i in 0..n {
        let id = format!("T{i}");
        c.task_add(task("RB", id.clone(), vec![], TaskKind::Thread)).await.unwrap();
        let p = DispatchParams { run_id: "RB".into(), task_id: Some(id.clone()), ..Default::default() };
        let d = c.dispatch(p).await.unwrap();
        let thread = d.dispatches[0].thread_id.clone();
        c.claim(ClaimParams { agent: "w".into(), thread_id: thread.clone(), ..Default::default() }).await.unwrap();
        let ask = UpdateParams {
            agent: "w".into(),
            thread_id: thread,
            status: Some(ThreadStatus::Blocked),
            message: MessageInput { summary: format!("question {i}?"), ..Default::default() },
            ..Default::default()
        };
        let t0 = Instant::now();
        c.update(ask).await.unwrap();
        let needle = format!("task.blocked {id} ");
        loop {
            let (at, line) = rx.recv_timeout(Duration::from_secs(120)).expect("the question's turn");
            if line.contains(&needle) {
                assert!(line.contains(&format!("question: question {i}?")), "{line}");
                lat.push(at - t0);
                break;
            }
        }
    }
    lat.sort();
    report(
        &format!("question -> live lead's session turn ({n} questions)"),
        format!("p50 {}  p99 {}  max {}", ms(percentile(&lat, 0.5)), ms(percentile(&lat, 0.99)), ms(lat[n - 1])),
    );
    let _ = bridge.kill();
    let _ = bridge.wait();
}

/// `orch demo --team --stop` in a new directory, end to end.
pub fn team_run(p: &Project) {
    let dir = p.path().join("team");
    let t0 = Instant::now();
    let out = p.orch().args(["demo", "--team", "--stop", "--dir", &dir.display().to_string()]).run();
    let took = t0.elapsed();
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    report("scripted team run, orch demo --team end to end (2 tasks)", ms(took));
}
