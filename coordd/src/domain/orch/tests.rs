//! orch rules against SQLite in memory: the graph, cycles, readiness, reconcile through
//! inbox changes, the run's status, auto-retry scheduling and council grouping.

use coord_proto::ErrorCode;
use coord_proto::types::*;

use super::attempts::{self, Mode, Plan};
use super::{council, model, plan, reconcile};
use crate::domain::credentials::Acting;
use crate::ops::{self, messages};
use crate::store::sqlite::testing::Memory;

fn add(id: &str, deps: &[&str]) -> TaskAddParams {
    TaskAddParams {
        run_id: "R1".into(),
        task_id: id.into(),
        title: format!("task {id}"),
        depends_on: deps.iter().map(|d| d.to_string()).collect(),
        assign_to: Some("w".into()),
        kind: Some(TaskKind::Thread),
        ..Default::default()
    }
}

fn run(m: &Memory, auto_retry: u32) {
    let p = RunCreateParams {
        run_id: Some("R1".into()),
        goal: "g".into(),
        auto_retry: Some(auto_retry),
        ..Default::default()
    };
    m.write(|tx, now| plan::create_run(tx, now, p)).unwrap();
}

fn setup(m: &Memory) {
    run(m, 0);
    for (id, deps) in [("T1", vec![]), ("T2", vec!["T1"]), ("T3", vec!["T1", "T2"])] {
        m.write(|tx, now| plan::add_task(tx, now, add(id, &deps))).unwrap();
    }
}

pub(super) fn plan_for(task: &str, attempt: u32) -> Vec<Plan> {
    vec![Plan {
        task_id: task.into(),
        attempt,
        worker: "w".into(),
        repo: None,
        worktree: None,
        previous: None,
        host: None,
        feedback: None,
    }]
}

/// Open attempt `attempt` of `task` in run R1 for worker `w` (no worktree); its thread.
pub(super) fn dispatch(m: &Memory, task: &str, attempt: u32, mode: Mode) -> String {
    let d = m.write(|tx, now| ops::orch::record_attempts(tx, now, "R1", &plan_for(task, attempt), mode)).unwrap();
    d.dispatches[0].thread_id.clone()
}

/// `w` claims `thread` and ends it with `status`.
pub(super) fn finish(m: &Memory, thread: &str, status: ThreadStatus) {
    let p = ClaimParams { agent: "w".into(), thread_id: thread.into(), lease_seconds: None };
    m.write(|tx, now| messages::claim(tx, now, p, &Acting::daemon())).unwrap();
    let p = FinishParams {
        agent: "w".into(),
        thread_id: thread.into(),
        message: MessageInput { summary: "r".into(), ..Default::default() },
        lease_token: None,
    };
    m.write(|tx, now| messages::finish(tx, now, p, status)).unwrap();
}

fn statuses(m: &Memory) -> Vec<(String, TaskStatus)> {
    m.read(|tx, _| tx.tasks().run_tasks("R1")).unwrap().into_iter().map(|t| (t.task_id, t.status)).collect()
}

fn run_status(m: &Memory) -> RunStatus {
    m.read(|tx, _| model::load_run(tx, "R1")).unwrap().status
}

#[test]
fn readiness_follows_dependencies_and_cycles_are_refused() {
    let m = Memory::new();
    setup(&m);
    let q = TaskListParams { run_id: "R1".into(), ..Default::default() };
    let ready = m.read(|tx, _| plan::ready(tx, &q)).unwrap().tasks;
    assert_eq!(ready.iter().map(|t| t.task_id.as_str()).collect::<Vec<_>>(), ["T1"]);
    let p = DepParams { run_id: "R1".into(), task_id: "T1".into(), on: "T3".into() };
    let e = m.write(|tx, now| plan::change_dep(tx, now, p, plan::DepChange::Add)).unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::InvalidInput));
    assert!(e.to_string().contains("cycle"), "{e}");
}

#[test]
fn a_finished_thread_finishes_its_task_and_releases_dependents() {
    let m = Memory::new();
    setup(&m);
    let thread = dispatch(&m, "T1", 1, Mode::Dispatch);
    assert_eq!(statuses(&m)[0].1, TaskStatus::Dispatched);
    finish(&m, &thread, ThreadStatus::Done);
    let want = [("T1", TaskStatus::Done), ("T2", TaskStatus::Ready), ("T3", TaskStatus::Pending)];
    assert_eq!(statuses(&m), want.map(|(t, s)| (t.to_string(), s)));
    let changed = m.write(|tx, now| reconcile::run(tx, now, "R1")).unwrap();
    assert!(changed.is_empty(), "reconcile finds nothing left to repair: {changed:?}");
}

#[test]
fn a_dispatch_that_raced_another_is_refused_whole() {
    let m = Memory::new();
    setup(&m);
    dispatch(&m, "T1", 1, Mode::Dispatch);
    let e = m.write(|tx, now| ops::orch::record_attempts(tx, now, "R1", &plan_for("T1", 1), Mode::Dispatch));
    assert_eq!(e.unwrap_err().code(), Some(ErrorCode::LeaseConflict));
}

#[test]
fn retry_stops_at_max_attempts() {
    let m = Memory::new();
    setup(&m);
    let task = m.read(|tx, _| model::load_task(tx, "R1", "T1")).unwrap();
    let exhausted = Task { status: TaskStatus::Failed, attempt: 3, ..task };
    let e = attempts::check_mode(&exhausted, Mode::Retry).unwrap_err();
    assert!(e.to_string().contains("all 3"), "{e}");
}

#[test]
fn the_run_stays_failed_while_any_task_is_failed_and_cancel_never_passes_through_done() {
    let m = Memory::new();
    run(&m, 0);
    let mut threads = Vec::new();
    for id in ["A", "B"] {
        m.write(|tx, now| plan::add_task(tx, now, add(id, &[]))).unwrap();
        threads.push(dispatch(&m, id, 1, Mode::Dispatch));
    }
    for t in &threads {
        finish(&m, t, ThreadStatus::Failed);
    }
    assert_eq!(run_status(&m), RunStatus::Failed);
    dispatch(&m, "A", 2, Mode::Retry);
    assert_eq!(run_status(&m), RunStatus::Failed, "one of two failed tasks retried");
    dispatch(&m, "B", 2, Mode::Retry);
    assert_eq!(run_status(&m), RunStatus::Active);
    let p = CancelTaskParams { run_id: "R1".into(), task_id: None, reason: "stop".into() };
    m.write(|tx, now| ops::orch::cancel(tx, now, p, &crate::domain::credentials::Acting::daemon())).unwrap();
    let orch: Vec<EventType> =
        m.events().into_iter().filter(|e| e.run_id == "R1" && e.source == "orch").map(|e| e.event_type).collect();
    assert!(!orch.contains(&EventType::RunDone), "{orch:?}");
    assert_eq!(orch.last(), Some(&EventType::RunCancelled));
    assert!(statuses(&m).iter().all(|(_, s)| *s == TaskStatus::Cancelled));
}

#[test]
fn a_failure_schedules_an_automatic_retry_while_the_run_allows_one() {
    let m = Memory::new();
    run(&m, 1);
    m.write(|tx, now| plan::add_task(tx, now, add("A", &[]))).unwrap();
    let t = dispatch(&m, "A", 1, Mode::Dispatch);
    finish(&m, &t, ThreadStatus::Failed);
    let failed = m.events().into_iter().rfind(|e| e.event_type == EventType::TaskFailed).unwrap();
    assert_eq!(failed.payload_json["auto_retry"], true);
    assert_eq!(run_status(&m), RunStatus::Active, "a pending retry keeps the run active");
    assert_eq!(m.read(|tx, _| tx.tasks().tasks_retry_pending()).unwrap().len(), 1);
    let t = dispatch(&m, "A", 2, Mode::Retry);
    assert!(m.read(|tx, _| tx.tasks().tasks_retry_pending()).unwrap().is_empty(), "the retry clears the flag");
    finish(&m, &t, ThreadStatus::Failed);
    let failed = m.events().into_iter().rfind(|e| e.event_type == EventType::TaskFailed).unwrap();
    assert_eq!(failed.payload_json["auto_retry"], false, "one automatic retry only");
    assert_eq!(run_status(&m), RunStatus::Failed);
}

#[test]
fn long_texts_get_a_clear_error_and_long_titles_still_dispatch() {
    let m = Memory::new();
    setup(&m);
    let p = TaskAddParams { title: "x".repeat(5000), ..add("TX", &[]) };
    let e = m.write(|tx, now| plan::add_task(tx, now, p)).unwrap_err();
    assert!(e.to_string().contains("title is longer than 4000"), "{e}");
    let p = TaskAddParams { title: "y".repeat(3000), ..add("TY", &[]) };
    m.write(|tx, now| plan::add_task(tx, now, p)).unwrap();
    dispatch(&m, "TY", 1, Mode::Dispatch);
}

#[test]
fn a_council_of_more_reviewers_than_a_reply_holds_beside_its_groups_is_refused() {
    let m = Memory::new();
    run(&m, 0);
    let reviewers = (0..=council::MAX_REVIEWERS).map(|i| format!("r{i}")).collect();
    let p = CouncilStartParams { run_id: "R1".into(), topic: "api".into(), reviewers, ..Default::default() };
    let e = m.write(|tx, now| ops::orch::council_start(tx, now, p)).unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::InvalidInput));
    assert!(e.to_string().contains("at most 100 reviewers"), "{e}");
}

#[test]
fn a_council_votes_after_every_reviewer_brainstormed() {
    let m = Memory::new();
    run(&m, 0);
    let p = CouncilStartParams {
        run_id: "R1".into(),
        topic: "api".into(),
        reviewers: vec!["a".into(), "b".into()],
        ..Default::default()
    };
    let c = m.write(|tx, now| ops::orch::council_start(tx, now, p)).unwrap();
    let recs = |title: &str| serde_json::json!({"recommendations": [{"title": title, "detail": "d"}]});
    for (member, title) in c.members.iter().zip(["Add caching!", "add  caching"]) {
        let p = ClaimParams {
            agent: member.reviewer.clone(),
            thread_id: member.brainstorm_thread_id.clone(),
            lease_seconds: None,
        };
        m.write(|tx, now| messages::claim(tx, now, p, &Acting::daemon())).unwrap();
        let p = FinishParams {
            agent: member.reviewer.clone(),
            thread_id: member.brainstorm_thread_id.clone(),
            message: MessageInput { summary: "ideas".into(), payload_json: Some(recs(title)), ..Default::default() },
            lease_token: None,
        };
        m.write(|tx, now| messages::finish(tx, now, p, ThreadStatus::Done)).unwrap();
    }
    let shown = m.read(|tx, _| council::show(tx, "R1", &c.council_id)).unwrap();
    assert_eq!(shown.phase, CouncilPhase::Voting);
    assert_eq!(shown.groups.len(), 1, "the same recommendation, normalised");
    assert_eq!(shown.groups[0].proposed_by, ["a", "b"]);
    assert!(shown.members.iter().all(|m| m.vote_thread_id.is_some()));
}

#[test]
fn titles_normalise_for_grouping() {
    assert_eq!(council::normalize("Add  Rate-limiting!"), "add rate limiting");
    assert_eq!(council::normalize("add rate limiting"), "add rate limiting");
}

fn session_start(thread: &str, task: &str) -> SessionStartParams {
    SessionStartParams {
        run_id: "R1".into(),
        task_id: task.into(),
        thread_id: thread.into(),
        client: "command".into(),
        pid: 4242,
        launcher: "coord-launch:R1".into(),
        cwd: "/tmp/w".into(),
        log_path: "/tmp/w.log".into(),
        ..Default::default()
    }
}

#[test]
fn a_launched_session_that_ends_without_done_fails_its_attempt_once() {
    use crate::domain::launch;
    let m = Memory::new();
    setup(&m);
    let thr = dispatch(&m, "T1", 1, Mode::Dispatch);
    // Only an attempt of the named task may get a session.
    let err = m.write(|tx, now| launch::start(tx, now, session_start(&thr, "T2"), "h")).unwrap_err();
    assert_eq!(err.code(), Some(ErrorCode::NotFound));
    let (s, _) = m.write(|tx, now| launch::start(tx, now, session_start(&thr, "T1"), "h")).unwrap();
    assert_eq!((s.state, s.agent.as_str(), s.attempt), (SessionState::Running, "w", 1));
    let exit = SessionExitParams {
        session_id: s.session_id.clone(),
        exit_code: Some(3),
        log_tail: Some("x".repeat(launch::MAX_LOG_TAIL + 10)),
        fail_attempt: true,
        ..Default::default()
    };
    let r = m.write(|tx, now| ops::launch::exit(tx, now, exit.clone(), &Acting::daemon())).unwrap();
    assert!(r.failed_attempt);
    assert_eq!(r.session.log_tail.as_ref().map(|t| t.len()), Some(launch::MAX_LOG_TAIL));
    assert_eq!(statuses(&m)[0], ("T1".into(), TaskStatus::Failed));
    let again = m.write(|tx, now| ops::launch::exit(tx, now, exit.clone(), &Acting::daemon())).unwrap_err();
    assert_eq!(again.code(), Some(ErrorCode::SessionEnded));
}

#[test]
fn a_session_whose_thread_finished_leaves_the_attempt_alone() {
    use crate::domain::launch;
    let m = Memory::new();
    setup(&m);
    let thr = dispatch(&m, "T1", 1, Mode::Dispatch);
    let (s, _) = m.write(|tx, now| launch::start(tx, now, session_start(&thr, "T1"), "h")).unwrap();
    finish(&m, &thr, ThreadStatus::Done);
    let exit =
        SessionExitParams { session_id: s.session_id, exit_code: Some(0), fail_attempt: true, ..Default::default() };
    let r = m.write(|tx, now| ops::launch::exit(tx, now, exit.clone(), &Acting::daemon())).unwrap();
    assert!(!r.failed_attempt);
    assert_eq!(statuses(&m)[0], ("T1".into(), TaskStatus::Done));
}
