//! What a worker's finish leaves behind, and what the lead is told next: artifact paths
//! stored relative to the repository with the attempt's branch and commit, agents that
//! work without registering listed, `orch wait` advice under `--auto-merge` and on
//! `run.done`, and `orch worktree prune` removing a finished run's merged integration
//! branch.

use coord_tests::{Project, git_in, ok, orch_wait};
use serde_json::Value;

fn repo() -> Project {
    let p = Project::new();
    git_in(p.path(), &["init", "-q", "-b", "main"]);
    git_in(p.path(), &["-c", "user.email=t@e", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "start"]);
    p
}

fn orch(p: &Project, args: &[&str]) -> Value {
    p.orch().json_flag().args(args).run().ok().json()
}

/// Run R1 (with `extra` flags) with one code task T1 for w1, dispatched and claimed: the
/// worktree, the thread and the dispatch's event id.
fn claimed(p: &Project, extra: &[&str]) -> (std::path::PathBuf, String, i64) {
    let mut create = vec!["run", "create", "--goal", "g", "--id", "R1"];
    create.extend_from_slice(extra);
    orch(p, &create);
    orch(p, &["task", "add", "--run", "R1", "--id", "T1", "--title", "T1", "--assign-to", "w1"]);
    let d = orch(p, &["dispatch", "--run", "R1", "--task", "T1"]);
    let wt = std::path::PathBuf::from(d["dispatches"][0]["worktree_path"].as_str().unwrap());
    let thread = d["dispatches"][0]["thread_id"].as_str().unwrap().to_string();
    ok(p, &["claim", "--agent", "w1", "--thread", &thread]);
    (wt, thread, d["event_id"].as_i64().unwrap())
}

fn commit(wt: &std::path::Path, file: &str) {
    std::fs::write(wt.join(file), "work\n").unwrap();
    git_in(wt, &["add", file]);
    git_in(wt, &["-c", "user.email=w@e", "-c", "user.name=w", "commit", "-q", "-m", file]);
}

#[test]
fn an_artifact_is_stored_relative_to_the_repository_with_the_attempts_branch_and_commit() {
    let p = repo();
    let (wt, thread, _) = claimed(&p, &[]);
    std::fs::create_dir(wt.join("out")).unwrap();
    commit(&wt, "out/report.md");
    let mut done = p.inbox().into_command();
    done.current_dir(wt.join("out")).args([
        "done",
        "--agent",
        "w1",
        "--thread",
        &thread,
        "--summary",
        "s",
        "--artifact",
        "report.md",
    ]);
    assert!(done.output().unwrap().status.success());
    let show = ok(&p, &["show", "--thread", &thread]);
    let artifact = &show["messages"].as_array().unwrap().last().unwrap()["artifacts"][0];
    assert_eq!(artifact["path"], "out/report.md", "{artifact}");
    assert_eq!(artifact["metadata_json"]["branch"], "orch/R1/T1/a1");
    assert_eq!(artifact["metadata_json"]["commit"], git_in(&wt, &["rev-parse", "HEAD"]).trim());
}

#[test]
fn agents_that_work_without_registering_are_listed_as_unregistered() {
    let p = Project::new();
    ok(&p, &["send", "--from", "lead", "--to", "w5", "--summary", "task"]);
    let list = p.inbox().args(["agent", "list"]).run().ok().stdout;
    let w5 = list.lines().find(|l| l.starts_with("w5 ")).unwrap_or_else(|| panic!("w5 is listed: {list}"));
    assert!(w5.contains("unregistered"), "{list}");
    let registered = ok(&p, &["agent", "list", "--registered"]);
    assert_eq!(registered["agents"].as_array().unwrap().len(), 0, "{registered}");
}

#[test]
fn under_auto_merge_orch_wait_does_not_advise_orch_merge_and_on_run_done_points_to_run_finish() {
    let p = repo();
    let (_, thread, cursor) = claimed(&p, &["--auto-merge"]);
    ok(&p, &["done", "--agent", "w1", "--thread", &thread, "--summary", "s"]);
    let wait = |after: i64| {
        let after = after.to_string();
        p.orch().args(["wait", "--run", "R1", "--after-event", &after, "--timeout-seconds", "30"]).run().ok().stdout
    };
    let text = wait(cursor);
    assert!(text.contains("task.done") && !text.contains("orch merge"), "{text}");
    assert!(text.contains("--auto-merge"), "{text}");
    let task_done = orch_wait(&p, "R1", cursor)["event"]["event_id"].as_i64().unwrap();
    let text = wait(task_done);
    assert!(text.contains("run.done") && text.contains("orch run finish --run R1"), "{text}");
}

#[test]
fn worktree_prune_after_run_finish_removes_the_runs_merged_integration_branch() {
    let p = repo();
    let (wt, thread, _) = claimed(&p, &[]);
    commit(&wt, "work.txt");
    ok(&p, &["done", "--agent", "w1", "--thread", &thread, "--summary", "s"]);
    orch(&p, &["merge", "--run", "R1"]);
    // Not yet in main: the integration branch stays.
    let early = orch(&p, &["worktree", "prune", "--run", "R1"]);
    assert_eq!(early["removed_branches"], serde_json::json!([]), "{early}");
    orch(&p, &["run", "finish", "--run", "R1"]);
    let pruned = orch(&p, &["worktree", "prune", "--run", "R1"]);
    assert_eq!(pruned["removed_branches"], serde_json::json!(["orch/R1/integration"]), "{pruned}");
    let branches = git_in(p.path(), &["branch", "--list", "orch/*"]);
    assert!(branches.trim().is_empty(), "{branches}");
    let text = p.orch().args(["worktree", "prune", "--run", "R1"]).run().ok().stdout;
    assert!(!text.contains("integration"), "listed once: {text}");
}
