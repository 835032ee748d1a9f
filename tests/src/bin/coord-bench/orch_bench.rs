//! The orch figures of coord-bench: the ready queue on a large run, dispatch throughput
//! with and without worktrees, and the time from a worker's `done` to the leader's wait.

use std::sync::Arc;
use std::time::{Duration, Instant};

use coord_proto::api::{InboxApiClient, OrchApiClient};
use coord_proto::types::*;
use coord_tests::{Project, git_in};

use super::{ms, percentile, report};

pub(crate) fn task(run: &str, id: String, deps: Vec<String>, kind: TaskKind) -> TaskAddParams {
    TaskAddParams {
        run_id: run.into(),
        task_id: id.clone(),
        title: format!("task {id}"),
        depends_on: deps,
        assign_to: Some("w".into()),
        kind: Some(kind),
        ..Default::default()
    }
}

pub(crate) async fn new_run(c: &coord_client::Client, id: &str) {
    c.run_create(RunCreateParams { run_id: Some(id.into()), goal: "bench".into(), ..Default::default() })
        .await
        .unwrap();
}

/// `orch.ready` on a run of `n` tasks: half ready, half pending behind T0.
pub async fn ready_queue(p: &Project, n: usize) {
    let c = Arc::new(p.client().await);
    new_run(&c, "RQ").await;
    c.task_add(task("RQ", "T0".into(), vec![], TaskKind::Thread)).await.unwrap();
    let t0 = Instant::now();
    let workers = 16;
    let tasks: Vec<_> = (0..workers)
        .map(|w| {
            let c = c.clone();
            tokio::spawn(async move {
                for i in (1..n).filter(|i| i % workers == w) {
                    let deps = if i >= n / 2 { vec!["T0".to_string()] } else { vec![] };
                    c.task_add(task("RQ", format!("T{i}"), deps, TaskKind::Thread)).await.unwrap();
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    let build = t0.elapsed();
    let mut lat = Vec::new();
    for _ in 0..200 {
        let t = Instant::now();
        let r = c.ready(TaskListParams { run_id: "RQ".into(), ..Default::default() }).await.unwrap();
        lat.push(t.elapsed());
        assert_eq!(r.tasks.len(), 50);
    }
    lat.sort();
    report(
        &format!("orch ready (top 50) on a run of {n} tasks, {} ready", n / 2),
        format!(
            "p50 {}  p99 {}  (adding the tasks: {:.0}/s)",
            ms(percentile(&lat, 0.5)),
            ms(percentile(&lat, 0.99)),
            n as f64 / build.as_secs_f64()
        ),
    );
}

/// `orch.dispatch --all-ready`: thread tasks (no worktree), then code tasks with worktrees.
pub async fn dispatch(p: &Project, n: usize, with_worktrees: usize) {
    let c = p.client().await;
    new_run(&c, "RD").await;
    for i in 0..n {
        c.task_add(task("RD", format!("T{i}"), vec![], TaskKind::Thread)).await.unwrap();
    }
    let t0 = Instant::now();
    let r = c.dispatch(DispatchParams { run_id: "RD".into(), all_ready: true, ..Default::default() }).await.unwrap();
    let secs = t0.elapsed().as_secs_f64();
    assert_eq!(r.dispatches.len(), n);
    report(&format!("dispatch without worktrees ({n} tasks in one call)"), format!("{:.0} tasks/s", n as f64 / secs));

    let repo = p.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    git_in(&repo, &["init", "-q", "-b", "main"]);
    for i in 0..20 {
        std::fs::write(repo.join(format!("file{i}.txt")), "some content\n".repeat(50)).unwrap();
    }
    git_in(&repo, &["add", "."]);
    git_in(&repo, &["-c", "user.email=b@e", "-c", "user.name=b", "commit", "-q", "-m", "init"]);
    new_run(&c, "RW").await;
    for i in 0..with_worktrees {
        c.task_add(task("RW", format!("T{i}"), vec![], TaskKind::Code)).await.unwrap();
    }
    let t0 = Instant::now();
    let r = c
        .dispatch(DispatchParams {
            run_id: "RW".into(),
            all_ready: true,
            repo: Some(repo.display().to_string()),
            ..Default::default()
        })
        .await
        .unwrap();
    let secs = t0.elapsed().as_secs_f64();
    assert_eq!(r.dispatches.len(), with_worktrees);
    report(
        &format!("dispatch with git worktrees ({with_worktrees} tasks, 20-file repo)"),
        format!(
            "{:.0} tasks/s ({} per worktree)",
            with_worktrees as f64 / secs,
            ms(Duration::from_secs_f64(secs / with_worktrees as f64))
        ),
    );
}

/// A worker's `done` until the leader's `orch wait` subscription has the `task.done`.
pub async fn done_to_wait(p: &Project, n: usize) {
    let leader = p.client().await;
    let worker = p.client().await;
    new_run(&leader, "RW8").await;
    for i in 0..n {
        leader.task_add(task("RW8", format!("T{i}"), vec![], TaskKind::Thread)).await.unwrap();
    }
    let d =
        leader.dispatch(DispatchParams { run_id: "RW8".into(), all_ready: true, ..Default::default() }).await.unwrap();
    let filter = EventFilter {
        run_id: Some("RW8".into()),
        event_types: vec![EventType::TaskDone, EventType::RunDone],
        ..Default::default()
    };
    let mut sub = leader.subscribe(filter).await.unwrap();
    let mut lat = Vec::with_capacity(n);
    for disp in &d.dispatches {
        worker
            .claim(ClaimParams { agent: "w".into(), thread_id: disp.thread_id.clone(), lease_seconds: None })
            .await
            .unwrap();
        let fin = FinishParams {
            agent: "w".into(),
            thread_id: disp.thread_id.clone(),
            message: MessageInput { summary: "done".into(), ..Default::default() },
            lease_token: None,
        };
        let t0 = Instant::now();
        let woke = async {
            let ev = sub.next().await.unwrap().unwrap();
            assert_eq!(ev.event_type, EventType::TaskDone);
            t0.elapsed()
        };
        let (r, dt) = tokio::join!(worker.done(fin), woke);
        r.unwrap();
        lat.push(dt);
    }
    lat.sort();
    report(
        &format!("worker done -> leader's orch wait woken ({n} tasks)"),
        format!("p50 {}  p99 {}", ms(percentile(&lat, 0.5)), ms(percentile(&lat, 0.99))),
    );
}
