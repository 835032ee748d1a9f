//! The merge queue's own overhead per merge (issue 36), on a run whose code tasks all left
//! the same base and each add a file (so every merge after the first makes a merge
//! commit): the time from a worker's `done` reply to the task's `task.merged`.
//!
//! - Without a verify command: the daemon takes the candidate through the queue and
//!   merges it itself.
//! - With the verify command `true`, through `orch merge-queue`: the candidate queued, the
//!   verifier woken by the event, `orch.queueNext` (the merge built in memory, the scratch
//!   worktree checked out at it), the command run, `orch.queueReport` (the compare-and-swap
//!   move, the merge recorded). The command's own time (`sh -c true`, measured alone) is
//!   taken off: what is left is the queue's overhead.

use std::time::{Duration, Instant};

use coord_proto::api::{InboxApiClient, OrchApiClient};
use coord_proto::types::*;
use coord_tests::{Project, git_in, init_repo};

use crate::orch_bench::task;
use crate::{ms, percentile, report};

/// `n` code tasks of run `run` dispatched, each with one commit of its own file; their
/// dispatches.
async fn prepared(p: &Project, c: &coord_client::Client, run: &str, n: usize, verify: Option<&str>) -> Vec<Dispatch> {
    let create = RunCreateParams {
        run_id: Some(run.into()),
        goal: "merge queue bench".into(),
        auto_merge: true,
        verify: verify.map(str::to_string),
        ..Default::default()
    };
    c.run_create(create).await.unwrap();
    for i in 0..n {
        c.task_add(task(run, format!("T{i}"), vec![], TaskKind::Code)).await.unwrap();
    }
    let repo = Some(p.path().display().to_string());
    let all = DispatchParams { run_id: run.into(), all_ready: true, repo, ..Default::default() };
    let d = c.dispatch(all).await.unwrap().dispatches;
    for (i, disp) in d.iter().enumerate() {
        let wt = std::path::PathBuf::from(disp.worktree_path.as_deref().unwrap());
        std::fs::write(wt.join(format!("file{i}.txt")), format!("{i}\n")).unwrap();
        git_in(&wt, &["add", "-A"]);
        git_in(&wt, &["-c", "user.email=b@e", "-c", "user.name=b", "commit", "-q", "-m", "work"]);
        c.claim(ClaimParams { agent: "w".into(), thread_id: disp.thread_id.clone(), lease_seconds: None })
            .await
            .unwrap();
    }
    d
}

/// Each task finished in turn, timed from its `done` reply to its `task.merged`.
async fn done_to_merged(c: &coord_client::Client, run: &str, d: &[Dispatch]) -> Vec<Duration> {
    let filter =
        EventFilter { run_id: Some(run.into()), event_types: vec![EventType::TaskMerged], ..Default::default() };
    let mut merged = c.subscribe(filter).await.unwrap();
    let mut lat = Vec::with_capacity(d.len());
    for disp in d {
        let fin = FinishParams {
            agent: "w".into(),
            thread_id: disp.thread_id.clone(),
            message: MessageInput { summary: "done".into(), ..Default::default() },
            lease_token: None,
        };
        c.done(fin).await.unwrap();
        let t0 = Instant::now();
        let ev = merged.next().await.unwrap().unwrap();
        lat.push(t0.elapsed());
        assert_eq!(ev.task_id, disp.task_id);
    }
    lat.sort();
    lat
}

/// `sh -c true`'s own time, p50 of `n` runs.
fn verify_alone(n: usize) -> Duration {
    let mut t: Vec<Duration> = (0..n)
        .map(|_| {
            let t0 = Instant::now();
            assert!(std::process::Command::new("sh").args(["-c", "true"]).status().unwrap().success());
            t0.elapsed()
        })
        .collect();
    t.sort();
    percentile(&t, 0.5)
}

/// Both measures, `n` merges each.
pub async fn run(p: &Project, n: usize) {
    init_repo(p);
    let c = p.client().await;
    let d = prepared(p, &c, "RQ1", n, None).await;
    let lat = done_to_merged(&c, "RQ1", &d).await;
    report(
        &format!("merge queue, no verify: done -> merged ({n} merges)"),
        format!("p50 {}  p99 {}", ms(percentile(&lat, 0.5)), ms(percentile(&lat, 0.99))),
    );
    let d = prepared(p, &c, "RQ2", n, Some("true")).await;
    let mut verifier = p.orch().args(["merge-queue", "--run", "RQ2"]).spawn();
    let lat = done_to_merged(&c, "RQ2", &d).await;
    let own = verify_alone(n);
    let (p50, p99) = (percentile(&lat, 0.5), percentile(&lat, 0.99));
    report(
        &format!("merge queue, verify `true`: done -> merged ({n} merges)"),
        format!("p50 {}  p99 {}", ms(p50), ms(p99)),
    );
    report(
        "  less `sh -c true` alone (p50): the queue's overhead",
        format!("{} (p50 {}  p99 {})", ms(own), ms(p50.saturating_sub(own)), ms(p99.saturating_sub(own))),
    );
    let _ = verifier.kill();
    let _ = verifier.wait();
}
