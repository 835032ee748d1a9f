//! Stacked tasks: each run gets an integration branch; a done code task is merged there
//! (`orch merge`, or `--auto-merge`), a task that depends on it starts from that branch,
//! a conflict is an actionable event with a resolution task, `orch run finish` merges the
//! run into its base branch, and no commit is ever lost on the way.

use coord_tests::{Project, finish, git_in, init_repo};
use serde_json::Value;

fn repo() -> Project {
    let p = Project::new();
    init_repo(&p);
    p
}

fn orch(p: &Project, args: &[&str]) -> Value {
    p.orch().json_flag().args(args).run().ok().json()
}

fn add(p: &Project, id: &str, deps: &str, worker: &str) {
    let mut args = vec!["task", "add", "--run", "R1", "--id", id, "--title", id, "--assign-to", worker];
    if !deps.is_empty() {
        args.extend(["--depends-on", deps]);
    }
    orch(p, &args);
}

fn task(p: &Project, id: &str) -> Value {
    orch(p, &["task", "show", "--run", "R1", "--task", id])
}

/// Dispatch `id` (ready), then its worker claims it, writes `file` in the worktree, commits
/// and finishes. Returns the worktree.
fn work(p: &Project, id: &str, file: &str, text: &str) -> std::path::PathBuf {
    let d = orch(p, &["dispatch", "--run", "R1", "--task", id]);
    let d = &d["dispatches"][0];
    let (wt, thread, worker) = (
        std::path::PathBuf::from(d["worktree_path"].as_str().unwrap()),
        d["thread_id"].as_str().unwrap().to_string(),
        d["assigned_to"].as_str().unwrap().to_string(),
    );
    p.inbox().args(["claim", "--agent", &worker, "--thread", &thread]).run().ok();
    std::fs::write(wt.join(file), text).unwrap();
    git_in(&wt, &["add", "-A"]);
    git_in(&wt, &["-c", "user.email=w@e", "-c", "user.name=w", "commit", "-q", "-m", id]);
    p.inbox().args(["done", "--agent", &worker, "--thread", &thread, "--summary", "done"]).run().ok();
    wt
}

#[test]
fn a_dependent_task_starts_from_its_dependencys_merged_work() {
    let p = repo();
    orch(&p, &["run", "create", "--goal", "g", "--id", "R1"]);
    add(&p, "T1", "", "w1");
    add(&p, "T2", "T1", "w2");
    let t1 = work(&p, "T1", "schema.sql", "create table t;\n");
    let t = task(&p, "T1");
    assert_eq!((t["task"]["status"].clone(), t["task"]["merge_state"].clone()), ("done".into(), "pending".into()));
    assert_eq!(task(&p, "T2")["task"]["status"], "pending", "T2 waits for T1's merge");
    let m = orch(&p, &["merge", "--run", "R1", "--task", "T1"]);
    assert_eq!(m["merged"][0]["state"], "merged");
    assert_eq!(m["merged"][0]["commits"], 1);
    assert_eq!(task(&p, "T2")["task"]["status"], "ready");
    assert_eq!(task(&p, "T1")["task"]["merge_commit"], m["merged"][0]["commit"]);
    // T2's worktree is branched from the integration branch: T1's schema is there.
    let d = orch(&p, &["dispatch", "--run", "R1", "--task", "T2"]);
    let t2 = std::path::PathBuf::from(d["dispatches"][0]["worktree_path"].as_str().unwrap());
    assert_eq!(std::fs::read_to_string(t2.join("schema.sql")).unwrap(), "create table t;\n");
    assert_eq!(task(&p, "T2")["attempts"][0]["base_branch"], "orch/R1/integration");
    // Merging twice is refused; the merged worktree may go, its commit is safe.
    p.orch().args(["merge", "--run", "R1", "--task", "T1"]).run().code(30);
    let pruned = orch(&p, &["worktree", "prune", "--run", "R1"]);
    assert_eq!(pruned["removed"][0]["task_id"], "T1", "{pruned}");
    assert!(!t1.exists());
    assert!(git_in(p.path(), &["log", "--format=%s", "orch/R1/integration"]).contains("T1"));
}

#[test]
fn auto_merge_merges_each_task_as_it_finishes() {
    let p = repo();
    orch(&p, &["run", "create", "--goal", "g", "--id", "R1", "--auto-merge"]);
    add(&p, "T1", "", "w1");
    add(&p, "T2", "T1", "w2");
    let cursor = orch(&p, &["dispatch", "--run", "R1", "--task", "T1"])["event_id"].to_string();
    // The dispatch's event id is where the leader's wait starts: nothing after it is missed.
    let waiter = p.orch().args(["--json", "wait", "--run", "R1", "--after-event", &cursor]).spawn();
    let thread = task(&p, "T1")["attempts"][0]["thread_id"].as_str().unwrap().to_string();
    p.inbox().args(["claim", "--agent", "w1", "--thread", &thread]).run().ok();
    p.inbox().args(["done", "--agent", "w1", "--thread", &thread, "--summary", "done"]).run().ok();
    let woke = finish(waiter).ok().json();
    assert_eq!(woke["event"]["event_type"], "task.done");
    // The next actionable event is T2 turning ready, after the automatic merge.
    let next = woke["next_event_id"].to_string();
    let ready = p.orch().args(["--json", "wait", "--run", "R1", "--after-event", &next]).run().ok().json();
    assert_eq!(
        (ready["event"]["event_type"].clone(), ready["event"]["task_id"].clone()),
        ("task.ready".into(), "T2".into())
    );
    assert_eq!(task(&p, "T1")["task"]["merge_state"], "merged");
}

#[test]
fn a_merge_conflict_is_an_actionable_event_and_a_task_that_resolves_it() {
    let p = repo();
    orch(&p, &["run", "create", "--goal", "g", "--id", "R1"]);
    add(&p, "T1", "", "w1");
    add(&p, "T2", "", "w2");
    add(&p, "T3", "T2", "w3");
    let cursor = orch(&p, &["dispatch", "--run", "R1", "--all-ready"])["event_id"].to_string();
    // Both change the same line of README.md, from the same base.
    for (t, who, text) in [("T1", "w1", "hello from T1\n"), ("T2", "w2", "hello from T2\n")] {
        let a = &task(&p, t)["attempts"][0];
        let (wt, thread) = (
            std::path::PathBuf::from(a["worktree_path"].as_str().unwrap()),
            a["thread_id"].as_str().unwrap().to_string(),
        );
        p.inbox().args(["claim", "--agent", who, "--thread", &thread]).run().ok();
        std::fs::write(wt.join("README.md"), text).unwrap();
        git_in(&wt, &["-c", "user.email=w@e", "-c", "user.name=w", "commit", "-q", "-am", t]);
        p.inbox().args(["done", "--agent", who, "--thread", &thread, "--summary", "done"]).run().ok();
    }
    let out = p.orch().args(["--json", "merge", "--run", "R1"]).run().code(20).json();
    let merged = out["merged"].as_array().unwrap();
    assert_eq!((merged[0]["state"].clone(), merged[1]["state"].clone()), ("merged".into(), "conflict".into()));
    assert_eq!(merged[1]["conflicts"], serde_json::json!(["README.md"]));
    assert_eq!(merged[1]["resolution_task"], "T2-merge");
    // The leader's wait returns the conflict, with the files and the task that resolves it.
    let mut after = cursor;
    let conflict = loop {
        let w = p.orch().args(["--json", "wait", "--run", "R1", "--after-event", &after]).run().ok().json();
        if w["event"]["event_type"] == "task.merge_conflict" {
            break w;
        }
        after = w["next_event_id"].to_string();
    };
    assert_eq!(conflict["event"]["task_id"], "T2");
    assert_eq!(conflict["event"]["payload_json"]["resolution_task"], "T2-merge");
    let r = task(&p, "T2-merge");
    assert_eq!((r["task"]["status"].clone(), r["task"]["assign_to"].clone()), ("ready".into(), "w2".into()));
    assert_eq!(task(&p, "T3")["task"]["status"], "pending", "T3 waits for T2's work");
    // The resolution: merge T2's branch into a worktree of the integration branch.
    let d = orch(&p, &["dispatch", "--run", "R1", "--task", "T2-merge"]);
    let wt = std::path::PathBuf::from(d["dispatches"][0]["worktree_path"].as_str().unwrap());
    let thread = d["dispatches"][0]["thread_id"].as_str().unwrap().to_string();
    p.inbox().args(["claim", "--agent", "w2", "--thread", &thread]).run().ok();
    let _ = std::process::Command::new("git").current_dir(&wt).args(["merge", "-q", "orch/R1/T2/a1"]).output();
    std::fs::write(wt.join("README.md"), "hello from T1 and T2\n").unwrap();
    git_in(&wt, &["add", "README.md"]);
    git_in(&wt, &["-c", "user.email=w@e", "-c", "user.name=w", "commit", "-q", "--no-edit"]);
    p.inbox().args(["done", "--agent", "w2", "--thread", &thread, "--summary", "resolved"]).run().ok();
    let m = orch(&p, &["merge", "--run", "R1"]);
    assert_eq!(m["merged"][0]["task_id"], "T2-merge");
    assert_eq!(task(&p, "T2")["task"]["merge_state"], "merged", "resolving it merged T2's work");
    assert_eq!(task(&p, "T3")["task"]["status"], "ready");
    let readme = git_in(p.path(), &["show", "orch/R1/integration:README.md"]);
    assert_eq!(readme, "hello from T1 and T2\n");
}

#[test]
fn run_finish_merges_the_run_into_main_and_refuses_what_would_lose_work() {
    let p = repo();
    orch(&p, &["run", "create", "--goal", "g", "--id", "R1", "--auto-merge"]);
    add(&p, "T1", "", "w1");
    add(&p, "T2", "", "w2");
    work(&p, "T1", "one.txt", "1\n");
    // A live task refuses the finish.
    orch(&p, &["dispatch", "--run", "R1", "--task", "T2"]);
    let e = p.orch().args(["--json", "run", "finish", "--run", "R1"]).run().code(30).json();
    assert!(e["error"]["message"].as_str().unwrap().contains("T2"), "{e}");
    orch(&p, &["cancel", "--run", "R1", "--task", "T2", "--reason", "later"]);
    // A local change in main that the merge would overwrite refuses it, and nothing moves.
    let before = git_in(p.path(), &["rev-parse", "main"]);
    p.write("one.txt", "mine\n");
    let e = p.orch().args(["--json", "run", "finish", "--run", "R1"]).run().code(30).json();
    assert!(e["error"]["message"].as_str().unwrap().contains("checked out"), "{e}");
    assert_eq!(git_in(p.path(), &["rev-parse", "main"]), before);
    assert_eq!(std::fs::read_to_string(p.path().join("one.txt")).unwrap(), "mine\n");
    std::fs::remove_file(p.path().join("one.txt")).unwrap();
    let f = orch(&p, &["run", "finish", "--run", "R1"]);
    assert_eq!((f["into"].clone(), f["fast_forward"].clone()), ("main".into(), true.into()));
    assert_eq!(std::fs::read_to_string(p.path().join("one.txt")).unwrap(), "1\n", "main's checkout follows");
    assert!(git_in(p.path(), &["status", "--porcelain"]).is_empty());
    assert!(git_in(p.path(), &["log", "--format=%s", "main"]).contains("T1"));
}
