//! Several `coord-launch` bridges on one run (issue 34): one bridge per host beside each
//! daemon on one PostgreSQL database, or two bridges (two host names) on one daemon. Every
//! attempt gets exactly one session, a code task is launched only on the host that has its
//! worktree, no bridge stops another's session, both exit 0 when the run is done, and a
//! second bridge on the same run and host is refused, naming the first. Every wait is on
//! an event or a process's end.

#![allow(dead_code, reason = "the shared launch helpers: this suite uses some of them")]

#[path = "support/launch.rs"]
mod support;

use coord_client::{Client, ClientError};
use coord_proto::api::LaunchApiClient;
use coord_proto::types::*;
use coord_tests::{Out, Project, finish, init_repo, pid_alive};
use support::*;

/// A worker: a code task's session commits a file in its worktree; every session notes
/// its task in `ran` (one line per session that ran the worker) and finishes.
fn team_worker(ran: &std::path::Path) -> String {
    let work = format!(
        "echo \"$COORD_TASK\" >> '{}' && if [ -n \"$COORD_WORKTREE\" ]; then echo \"$COORD_TASK\" > \"$COORD_TASK.txt\" \
         && git add -A && git -c user.email=w@e -c user.name=w commit -q -m \"$COORD_TASK\"; fi",
        ran.display()
    );
    worker(&work)
}

/// Two projects on one PostgreSQL database, hosts `host-a` and `host-b`: two hosts of a
/// team (`None` without PostgreSQL).
fn two_hosts() -> Option<(Project, Project)> {
    let url = coord_tests::pg::shared()?.database();
    Some((Project::new().with_store(&url).on_host("host-a"), Project::new().with_store(&url).on_host("host-b")))
}

/// Run R1 (auto-merged) with 12 tasks: T1-T6 code, T7-T12 thread.
fn team_run(p: &Project) {
    orch(p, &["run", "create", "--goal", "g", "--id", "R1", "--auto-merge"]);
    for i in 1..=12 {
        let (t, kind) = (format!("T{i}"), if i <= 6 { "code" } else { "thread" });
        orch(p, &["task", "add", "--run", "R1", "--id", &t, "--title", &t, "--kind", kind, "--assign-to", "w1"]);
    }
}

/// What a finished team run must show: one session per task, each exited 0 (none killed),
/// each code task launched on `code_host`; the worker ran once per task; both bridges
/// exited 0 and neither warned of the other's dispatch race.
async fn one_session_per_task(c: &Client, ran: &std::path::Path, code_host: &str, bridges: [Out; 2]) {
    for b in &bridges {
        assert_eq!(b.code, 0, "a bridge: {}", b.stderr);
        assert!(!b.stderr.contains("changed while dispatching"), "{}", b.stderr);
    }
    let list = sessions(c).await;
    assert_eq!(list.len(), 12, "one session per attempt: {list:#?}");
    let mut tasks: Vec<&str> = list.iter().map(|s| s.task_id.as_str()).collect();
    tasks.sort();
    tasks.dedup();
    assert_eq!(tasks.len(), 12, "{list:#?}");
    for s in &list {
        assert_eq!((s.state, s.exit_code, s.signal), (SessionState::Exited, Some(0), None), "{s:#?}");
        if s.task_id.trim_start_matches('T').parse::<u32>().unwrap() <= 6 {
            assert_eq!(s.host, code_host, "a code task runs on its worktree's host: {s:#?}");
        }
    }
    let mut lines: Vec<String> = std::fs::read_to_string(ran).unwrap().lines().map(String::from).collect();
    lines.sort();
    assert_eq!(lines.len(), 12, "each worker ran once: {lines:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn two_daemons_on_one_database_with_a_bridge_each_give_one_session_per_task() {
    let Some((a, b)) = two_hosts() else { return };
    init_repo(&a);
    let (_da, _db) = (a.serve(), b.serve());
    team_run(&a);
    let ran = a.path().join("ran");
    // A dispatches (its repository makes the worktrees); B starts what is B's to start.
    let on_b = bridge(&b, &team_worker(&ran), &["--until-done"]);
    let on_a = bridge(&a, &team_worker(&ran), &["--dispatch", "--until-done"]);
    let outs = [finish(on_a), finish(on_b)];
    assert_eq!(orch(&b, &["status", "--run", "R1"])["run"]["status"], "done");
    one_session_per_task(&a.client().await, &ran, "host-a", outs).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn two_bridges_dispatching_on_one_daemon_give_one_session_per_task_and_no_race_warning() {
    let p = Project::new().on_host("host-a");
    init_repo(&p);
    let _d = p.serve();
    team_run(&p);
    let ran = p.path().join("ran");
    let first = bridge(&p, &team_worker(&ran), &["--dispatch", "--until-done"]);
    let second = bridge(&p, &team_worker(&ran), &["--dispatch", "--until-done", "--host", "host-b"]);
    let outs = [finish(first), finish(second)];
    one_session_per_task(&p.client().await, &ran, "host-a", outs).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_second_bridge_on_the_same_run_and_host_is_refused_naming_the_first() {
    let p = Project::new().on_host("host-a");
    let _d = p.serve();
    thread_run(&p, &[], &["T1"]);
    let gate = gate(&p);
    let c = p.client().await;
    let first = bridge(
        &p,
        &format!("{UP} && read x < '{}' && {}", gate.display(), worker("true")),
        &["--dispatch", "--until-done"],
    );
    next_event(&c, 0, &[EventType::TaskInProgress]).await;
    let second = finish(bridge(&p, &worker("true"), &["--until-done"]));
    assert_eq!(second.code, 5, "{}", second.stderr);
    let pid = first.id().to_string();
    assert!(
        second.stderr.contains(&format!("pid {pid}")) && second.stderr.contains("host host-a"),
        "{}",
        second.stderr
    );
    std::fs::write(&gate, "go\n").unwrap();
    let first = finish(first);
    assert_eq!(first.code, 0, "the first goes on undisturbed: {}", first.stderr);
    assert_eq!(sessions(&c).await.len(), 1);
}

/// The thread of R1's only attempt of `task`.
async fn attempt_thread(c: &Client, task: &str) -> String {
    let e = next_event(c, 0, &[EventType::TaskDispatched]).await;
    assert_eq!(e.task_id, task);
    e.thread_id
}

fn start_params(thread: &str, session: &str) -> SessionStartParams {
    SessionStartParams {
        run_id: "R1".into(),
        task_id: "T1".into(),
        thread_id: thread.into(),
        client: "command".into(),
        pid: i64::from(std::process::id()),
        launcher: "test".into(),
        cwd: "/tmp".into(),
        log_path: "/tmp/log".into(),
        session_id: Some(session.into()),
        ..Default::default()
    }
}

/// Racing `launch.sessionStart`s for one attempt, `n` through each client: exactly one
/// is recorded, every other is refused with `session_running`, naming the winner.
async fn exactly_one_start(clients: &[&Client], thread: &str) {
    let mut calls = Vec::new();
    for (i, c) in clients.iter().enumerate() {
        for j in 0..4 {
            let _ = (i, j);
            let p = start_params(thread, &coord_client::ids::new_id("ses"));
            calls.push(async move { c.session_start(p).await.map_err(ClientError::from) });
        }
    }
    let mut won = Vec::new();
    for r in futures::future::join_all(calls).await {
        match r {
            Ok(s) => won.push(s.session_id),
            Err(e) => {
                assert_eq!(e.code(), "session_running", "{e}");
                assert!(e.to_string().contains("already has a running session"), "{e}");
            }
        }
    }
    assert_eq!(won.len(), 1, "one session per attempt: {won:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn racing_session_starts_for_one_attempt_record_one_on_sqlite() {
    let p = Project::new();
    let _d = p.serve();
    thread_run(&p, &[], &["T1"]);
    orch(&p, &["dispatch", "--run", "R1", "--task", "T1"]);
    let c = p.client().await;
    let thread = attempt_thread(&c, "T1").await;
    exactly_one_start(&[&c, &c], &thread).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn racing_session_starts_for_one_attempt_through_two_daemons_record_one_on_postgres() {
    let Some((a, b)) = two_hosts() else { return };
    let (_da, _db) = (a.serve(), b.serve());
    thread_run(&a, &[], &["T1"]);
    orch(&a, &["dispatch", "--run", "R1", "--task", "T1"]);
    let (ca, cb) = (a.client().await, b.client().await);
    let thread = attempt_thread(&ca, "T1").await;
    exactly_one_start(&[&ca, &cb], &thread).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sessions_end_spares_another_process_of_its_thread() {
    let p = Project::new();
    let _d = p.serve();
    thread_run(&p, &[], &["T1"]);
    let gate = gate(&p);
    let c = p.client().await;
    let b = bridge(
        &p,
        &format!("{UP} && read x < '{}' && {}", gate.display(), worker("true")),
        &["--dispatch", "--until-done"],
    );
    let up = next_event(&c, 0, &[EventType::TaskInProgress]).await;
    // Another bridge's session of the same thread would carry the same COORD_THREAD.
    let mut other = std::process::Command::new("sleep")
        .arg("300")
        .env("COORD_THREAD", &up.thread_id)
        .env("COORD_AGENT", "w1")
        .spawn()
        .unwrap();
    std::fs::write(&gate, "go\n").unwrap();
    assert_eq!(finish(b).code, 0);
    let alive = pid_alive(i64::from(other.id()));
    other.kill().unwrap();
    other.wait().unwrap();
    assert!(alive, "the session's end killed a process of another session of its thread");
}

/// Issue 34, defect 3: a bridge started code tasks of another host, whose worktrees it does
/// not have. Two daemons on one database; A makes the worktrees of two code tasks (T1, T2)
/// and dispatches a thread task (T3) after them. B's bridge, alone, launches T3 only: it has
/// passed over T1 and T2 by the time T3's session has ended (it meets them first). A's
/// bridge then launches T1 and T2, and both bridges exit 0 when the run is done.
#[tokio::test(flavor = "multi_thread")]
async fn code_tasks_are_launched_only_by_the_bridge_of_their_worktrees_host() {
    let Some((a, b)) = two_hosts() else { return };
    init_repo(&a);
    let (_da, _db) = (a.serve(), b.serve());
    orch(&a, &["run", "create", "--goal", "g", "--id", "R1", "--auto-merge"]);
    for (t, kind) in [("T1", "code"), ("T2", "code"), ("T3", "thread")] {
        orch(&a, &["task", "add", "--run", "R1", "--id", t, "--title", t, "--kind", kind, "--assign-to", "w1"]);
        orch(&a, &["dispatch", "--run", "R1", "--task", t]);
    }
    let ran = a.path().join("ran");
    let cb = b.client().await;
    let on_b = bridge(&b, &team_worker(&ran), &["--until-done"]);
    let mut after = 0;
    let t3 = within("T3's session's end", async {
        loop {
            let e = next_event(&cb, after, &[EventType::LaunchExited]).await;
            if e.task_id == "T3" {
                break e;
            }
            after = e.event_id;
        }
    })
    .await;
    let on_a = bridge(&a, &team_worker(&ran), &["--until-done"]);
    let outs = [finish(on_a), finish(on_b)];
    for o in &outs {
        assert_eq!(o.code, 0, "a bridge: {}", o.stderr);
    }
    let list = sessions(&cb).await;
    let hosts: Vec<(&str, &str)> = list.iter().map(|s| (s.task_id.as_str(), s.host.as_str())).collect();
    assert_eq!(hosts.len(), 3, "one session per attempt: {list:#?}");
    for (task, host) in &hosts {
        let want = if *task == "T3" { "host-b" } else { "host-a" };
        assert_eq!(*host, want, "{task} was launched on {host} (T3's end was event {}): {list:#?}", t3.event_id);
    }
}
