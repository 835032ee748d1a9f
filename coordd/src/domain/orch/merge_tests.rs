//! Merge-state rules against SQLite in memory, without git: which tasks wait for a merge,
//! which may be merged, what a merge and a conflict record, and the resolution task.

use std::path::PathBuf;

use coord_proto::ErrorCode;
use coord_proto::types::*;

use super::*;
use crate::domain::orch::attempts::{Mode, Plan, Worktree};
use crate::domain::orch::plan;
use crate::ops;
use crate::store::sqlite::testing::Memory;

const INTEGRATION: &str = "orch/R1/integration";

fn add(m: &Memory, id: &str, deps: &[&str], kind: TaskKind) {
    let p = TaskAddParams {
        run_id: "R1".into(),
        task_id: id.into(),
        title: format!("task {id}"),
        depends_on: deps.iter().map(|d| d.to_string()).collect(),
        assign_to: Some("w".into()),
        kind: Some(kind),
        ..Default::default()
    };
    m.write(|tx, now| plan::add_task(tx, now, p)).unwrap();
}

/// Run R1: code task A, code task B after A, thread task C.
fn setup(m: &Memory) {
    let p = RunCreateParams { run_id: Some("R1".into()), goal: "g".into(), ..Default::default() };
    m.write(|tx, now| plan::create_run(tx, now, p)).unwrap();
    add(m, "A", &[], TaskKind::Code);
    add(m, "B", &["A"], TaskKind::Code);
    add(m, "C", &[], TaskKind::Thread);
}

fn integrate(m: &Memory) {
    let made = (Some("main".to_string()), "base0".to_string(), INTEGRATION.to_string());
    m.write(|tx, _| set_integration(tx, "R1", "/repo", made)).unwrap();
}

/// Dispatch attempt 1 of `task`, in a worktree on branch `orch/R1/<task>` when `branch`.
fn dispatch(m: &Memory, task: &str, branch: bool) -> String {
    let worktree = branch.then(|| Worktree {
        path: PathBuf::from(format!("/wt/{task}")),
        branch: format!("orch/R1/{task}"),
        base_rev: "base0".into(),
        base_branch: Some("main".into()),
    });
    let plan = Plan {
        task_id: task.into(),
        attempt: 1,
        worker: "w".into(),
        repo: branch.then(|| "/repo".into()),
        worktree,
        previous: None,
        host: None,
        feedback: None,
    };
    let d = m.write(|tx, now| ops::orch::record_attempts(tx, now, "R1", &[plan], Mode::Dispatch)).unwrap();
    d.dispatches[0].thread_id.clone()
}

fn finish(m: &Memory, thread: &str) {
    crate::domain::orch::tests::finish(m, thread, ThreadStatus::Done);
}

/// A and its branch done, its merge pending.
fn a_done(m: &Memory) {
    setup(m);
    integrate(m);
    let t = dispatch(m, "A", true);
    finish(m, &t);
}

fn task(m: &Memory, id: &str) -> Task {
    m.read(|tx, _| load_task(tx, "R1", id)).unwrap()
}

fn jobs_for(m: &Memory, task: Option<&str>) -> Result<Vec<Job>> {
    let p = MergeParams { run_id: "R1".into(), task_id: task.map(Into::into) };
    m.read(|tx, _| jobs(tx, &p))
}

fn outcome(task: &str, state: MergeState, commit: &str, conflicts: &[&str]) -> MergeOutcome {
    MergeOutcome {
        task_id: task.into(),
        state,
        branch: format!("orch/R1/{task}"),
        integration_branch: INTEGRATION.into(),
        commit: commit.into(),
        commits: 1,
        fast_forward: false,
        conflicts: conflicts.iter().map(|c| c.to_string()).collect(),
        resolution_task: None,
        uncommitted: vec![],
    }
}

fn conflict(m: &Memory, task: &str) -> (String, i64) {
    let job = jobs_for(m, Some(task)).unwrap().remove(0);
    let out = outcome(task, MergeState::Conflict, "base0", &["src/lib.rs", "README.md"]);
    m.write(|tx, now| record_conflict(tx, now, "R1", &job, &out)).unwrap()
}

#[test]
fn a_done_code_task_with_a_branch_waits_for_its_merge_and_holds_back_its_dependents() {
    let m = Memory::new();
    a_done(&m);
    let a = task(&m, "A");
    assert_eq!((a.status, a.merge_state, a.merge_commit), (TaskStatus::Done, Some(MergeState::Pending), None));
    assert_eq!(task(&m, "B").status, TaskStatus::Pending, "B starts only from a tree that holds A's work");
    let done = m.events().into_iter().rfind(|e| e.event_type == EventType::TaskDone).unwrap();
    assert_eq!(done.payload_json["merge"], "pending");
    assert_eq!(done.payload_json["branch"], "orch/R1/A");
}

#[test]
fn a_task_without_a_branch_or_a_run_without_an_integration_branch_has_nothing_to_merge() {
    let m = Memory::new();
    setup(&m);
    let a = dispatch(&m, "A", true);
    finish(&m, &a);
    assert_eq!(task(&m, "A").merge_state, None, "no integration branch yet");
    assert_eq!(task(&m, "B").status, TaskStatus::Ready, "so nothing holds B back");
    integrate(&m);
    let c = dispatch(&m, "C", false);
    finish(&m, &c);
    assert_eq!(task(&m, "C").merge_state, None, "no branch");
    for t in ["A", "C"] {
        let e = jobs_for(&m, Some(t)).unwrap_err();
        assert_eq!(e.code(), Some(ErrorCode::InvalidTransition));
        assert!(e.to_string().contains("no branch to merge"), "{e}");
    }
    assert!(jobs_for(&m, None).unwrap().is_empty());
}

#[test]
fn only_done_tasks_are_merged_and_merging_all_takes_every_pending_one() {
    let m = Memory::new();
    a_done(&m);
    dispatch(&m, "C", false);
    for t in ["B", "C"] {
        let e = jobs_for(&m, Some(t)).unwrap_err();
        assert_eq!(e.code(), Some(ErrorCode::InvalidTransition));
        assert!(e.to_string().contains("only done tasks are merged"), "{e}");
    }
    let all = jobs_for(&m, None).unwrap();
    assert_eq!(all.len(), 1);
    let job = &all[0];
    assert_eq!((job.task_id.as_str(), job.branch.as_str()), ("A", "orch/R1/A"));
    assert_eq!((job.repo.as_str(), job.integration_branch.as_str()), ("/repo", INTEGRATION));
    assert_eq!((job.worktree.as_deref(), job.worker.as_str()), (Some("/wt/A"), "w"));
    assert_eq!(job.resolves_branch, None);
    assert_eq!(jobs_for(&m, Some("A")).unwrap()[0].task_id, "A");
}

#[test]
fn a_recorded_merge_marks_the_task_merged_and_releases_its_dependents() {
    let m = Memory::new();
    a_done(&m);
    let out = outcome("A", MergeState::Merged, "c1", &[]);
    let id = m.write(|tx, now| record_merged(tx, now, "R1", &out, None)).unwrap();
    let merged = m.events().into_iter().find(|e| e.event_id == id).unwrap();
    assert_eq!((merged.event_type, merged.task_id.as_str()), (EventType::TaskMerged, "A"));
    let a = task(&m, "A");
    assert_eq!((a.merge_state, a.merge_commit.as_deref()), (Some(MergeState::Merged), Some("c1")));
    assert_eq!(task(&m, "B").status, TaskStatus::Ready);
    let e = jobs_for(&m, Some("A")).unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::InvalidTransition));
    assert!(e.to_string().contains("merged already (c1)"), "{e}");
    assert!(jobs_for(&m, None).unwrap().is_empty());
}

#[test]
fn a_conflict_opens_one_ready_resolution_task_for_the_same_worker() {
    let m = Memory::new();
    a_done(&m);
    let (resolution, event_id) = conflict(&m, "A");
    assert_eq!(resolution, "A-merge");
    assert_eq!(task(&m, "A").merge_state, Some(MergeState::Conflict));
    assert_eq!(task(&m, "B").status, TaskStatus::Pending, "a conflicted task still holds back its dependents");
    let r = task(&m, "A-merge");
    assert_eq!((r.status, r.kind, r.priority, r.attempt), (TaskStatus::Ready, TaskKind::Code, Priority::High, 0));
    assert_eq!((r.assign_to.as_deref(), r.resolves.as_deref()), (Some("w"), Some("A")));
    assert!(r.body.contains("- src/lib.rs\n- README.md"), "{}", r.body);
    assert!(r.body.contains("git merge orch/R1/A"), "{}", r.body);
    let e = m.events().into_iter().find(|e| e.event_id == event_id).unwrap();
    assert_eq!(e.event_type, EventType::TaskMergeConflict);
    assert_eq!(e.payload_json["resolution_task"], "A-merge");
    assert!(e.summary.contains("2 file(s)"), "{}", e.summary);
    assert_eq!(jobs_for(&m, Some("A")).unwrap()[0].task_id, "A", "a conflicted task may be merged again");
    assert_eq!(conflict(&m, "A").0, "A-merge", "a second conflict reuses the open resolution task");
    assert_eq!(m.read(|tx, _| tx.tasks().run_tasks("R1")).unwrap().len(), 4);
}

#[test]
fn a_resolution_task_takes_the_next_free_name() {
    let m = Memory::new();
    a_done(&m);
    add(&m, "A-merge", &[], TaskKind::Thread);
    let (resolution, _) = conflict(&m, "A");
    assert_eq!(resolution, "A-merge2");
    assert_eq!(task(&m, "A-merge2").resolves.as_deref(), Some("A"));
    assert_eq!(task(&m, "A-merge").resolves, None);
}

#[test]
fn merging_the_resolution_task_settles_the_conflicted_task_and_releases_its_dependents() {
    let m = Memory::new();
    a_done(&m);
    let (resolution, _) = conflict(&m, "A");
    let t = dispatch(&m, &resolution, true);
    finish(&m, &t);
    assert_eq!(task(&m, &resolution).merge_state, Some(MergeState::Pending));
    let job = jobs_for(&m, None).unwrap().remove(0);
    assert_eq!(job.task_id, resolution, "the conflicted task is not pending, only its resolution");
    assert_eq!(job.resolves_branch.as_deref(), Some("orch/R1/A"));
    let out = outcome(&resolution, MergeState::Merged, "c2", &[]);
    m.write(|tx, now| record_merged(tx, now, "R1", &out, Some(true))).unwrap();
    let a = task(&m, "A");
    assert_eq!((a.merge_state, a.merge_commit.as_deref()), (Some(MergeState::Merged), Some("c2")));
    let settled = m.events().into_iter().rfind(|e| e.event_type == EventType::TaskMerged && e.task_id == "A").unwrap();
    assert_eq!(settled.payload_json["resolved_by"], "A-merge");
    assert_eq!(settled.payload_json["branch_in_integration"], true);
    assert_eq!(task(&m, "B").status, TaskStatus::Ready);
}

#[test]
fn finishing_a_run_needs_an_integration_branch_and_no_running_task() {
    let m = Memory::new();
    setup(&m);
    let p = RunFinishParams { run_id: "R1".into(), into: None };
    let e = m.read(|tx, _| finish_plan(tx, &p)).unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::InvalidInput));
    integrate(&m);
    let a = dispatch(&m, "A", true);
    let e = m.read(|tx, _| finish_plan(tx, &p)).unwrap_err();
    assert_eq!(e.code(), Some(ErrorCode::InvalidTransition));
    assert!(e.to_string().contains("task(s) A still running"), "{e}");
    finish(&m, &a);
    let (run, into) = m.read(|tx, _| finish_plan(tx, &p)).unwrap();
    assert_eq!((run.run_id.as_str(), into.as_str()), ("R1", "main"), "the base branch by default");
    let p = RunFinishParams { into: Some("release".into()), ..p };
    assert_eq!(m.read(|tx, _| finish_plan(tx, &p)).unwrap().1, "release");
}

#[test]
fn a_run_is_not_done_while_a_done_tasks_merge_is_pending() {
    let m = Memory::new();
    let p = RunCreateParams { run_id: Some("R1".into()), goal: "g".into(), ..Default::default() };
    m.write(|tx, now| plan::create_run(tx, now, p)).unwrap();
    add(&m, "A", &[], TaskKind::Code);
    integrate(&m);
    let t = dispatch(&m, "A", true);
    finish(&m, &t);
    let run = |m: &Memory| m.read(|tx, _| load_run(tx, "R1")).unwrap().status;
    assert_eq!(run(&m), RunStatus::Active, "its only task is done but not merged");
    assert!(!m.events().iter().any(|e| e.event_type == EventType::RunDone));
    let out = outcome("A", MergeState::Merged, "c1", &[]);
    m.write(|tx, now| record_merged(tx, now, "R1", &out, None)).unwrap();
    assert_eq!(run(&m), RunStatus::Done, "merged, the run is done");
}
