//! orch end to end: a real git repository in a temporary directory, the real daemon, and
//! the real `orch` and `inbox` binaries.

use coord_tests::{Project, finish, git_in};
use serde_json::Value;

/// A project that is also a git repository with one commit on `main`.
fn repo() -> Project {
    let p = Project::new();
    git(&p, &["init", "-q", "-b", "main"]);
    git(&p, &["config", "user.email", "t@example.com"]);
    git(&p, &["config", "user.name", "Test"]);
    p.write("README.md", "hello\n");
    git(&p, &["add", "README.md"]);
    git(&p, &["commit", "-q", "-m", "init"]);
    p
}

fn git(p: &Project, args: &[&str]) -> String {
    git_in(p.path(), args)
}

fn orch(p: &Project, args: &[&str]) -> Value {
    p.orch().json_flag().args(args).run().ok().json()
}

/// R1: T1 <- T2 <- T3 (T3 also on T1), T1 and T2 code tasks for `backend`.
fn three_tasks(p: &Project, extra: &[&str]) {
    let mut args = vec!["run", "create", "--goal", "Blog MVP", "--id", "R1"];
    args.extend_from_slice(extra);
    orch(p, &args);
    orch(
        p,
        &[
            "task",
            "add",
            "--run",
            "R1",
            "--id",
            "T1",
            "--title",
            "Schema",
            "--assign-to",
            "backend",
            "--acceptance",
            "tables exist",
        ],
    );
    orch(
        p,
        &[
            "task",
            "add",
            "--run",
            "R1",
            "--id",
            "T2",
            "--title",
            "Post CRUD",
            "--depends-on",
            "T1",
            "--assign-to",
            "backend",
        ],
    );
    orch(
        p,
        &[
            "task",
            "add",
            "--run",
            "R1",
            "--id",
            "T3",
            "--title",
            "Admin UI",
            "--depends-on",
            "T1,T2",
            "--kind",
            "thread",
            "--assign-to",
            "frontend",
        ],
    );
}

fn task(p: &Project, id: &str) -> Value {
    orch(p, &["task", "show", "--run", "R1", "--task", id])
}

fn current_thread(p: &Project, id: &str) -> String {
    let t = task(p, id);
    let attempts = t["attempts"].as_array().unwrap();
    attempts.last().unwrap()["thread_id"].as_str().unwrap().to_string()
}

fn last_event(p: &Project) -> String {
    p.coordd().args(["status", "--json"]).run().ok().json()["last_event_id"].to_string()
}

#[test]
fn a_task_graph_with_a_ready_queue_and_a_refused_cycle() {
    let p = repo();
    let _d = p.serve();
    three_tasks(&p, &[]);
    let ready = orch(&p, &["ready", "--run", "R1"]);
    let ids: Vec<&str> = ready["tasks"].as_array().unwrap().iter().map(|t| t["task_id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["T1"]);
    let cycle =
        p.orch().args(["--json", "dep", "add", "--run", "R1", "--task", "T1", "--on", "T3"]).run().code(30).json();
    assert_eq!(cycle["error"]["code"], "invalid_input");
    assert!(cycle["error"]["message"].as_str().unwrap().contains("cycle"), "{cycle}");
    let self_dep = p.orch().args(["dep", "add", "--run", "R1", "--task", "T2", "--on", "T2"]).run().code(30);
    assert!(self_dep.stderr.contains("itself"));
    // Priority beats age in the ready queue.
    orch(
        &p,
        &["task", "add", "--run", "R1", "--id", "T0", "--title", "Urgent", "--priority", "high", "--kind", "thread"],
    );
    let ready = orch(&p, &["ready", "--run", "R1"]);
    let ids: Vec<&str> = ready["tasks"].as_array().unwrap().iter().map(|t| t["task_id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["T0", "T1"]);
    // A task cancelled before dispatch cannot be retried past its dependencies.
    orch(&p, &["cancel", "--run", "R1", "--task", "T3", "--reason", "later"]);
    let early = p.orch().args(["--json", "retry", "--run", "R1", "--task", "T3"]).run().code(30).json();
    assert!(early["error"]["message"].as_str().unwrap().contains("depends on"), "{early}");
    // Removing a dependency can make a task ready.
    orch(&p, &["dep", "remove", "--run", "R1", "--task", "T2", "--on", "T1"]);
    assert_eq!(task(&p, "T2")["task"]["status"], "ready");
    let status = p.orch().args(["status", "--run", "R1"]).run().ok().stdout;
    let t3 = status.lines().find(|l| l.contains(" T3 ")).unwrap_or_else(|| panic!("no T3 line:\n{status}"));
    // Drawn under its first dependency (T1), the other named after it.
    assert!(t3.contains("cancelled") && t3.contains("<- also T2") && t3.contains("└─"), "{t3}");
    p.orch().args(["ready", "--run", "nope"]).run().code(40);
}

#[test]
fn dispatch_makes_a_registered_worktree_and_a_worker_finishing_wakes_wait() {
    let p = repo();
    let _d = p.serve();
    three_tasks(&p, &[]);
    let d = orch(&p, &["dispatch", "--run", "R1", "--all-ready"]);
    let d1 = &d["dispatches"][0];
    assert_eq!(d["dispatches"].as_array().unwrap().len(), 1);
    assert_eq!(d1["task_id"], "T1");
    assert_eq!(d1["attempt"], 1);
    assert_eq!(d1["assigned_to"], "backend");
    assert_eq!(d1["branch"], "orch/R1/T1/a1");
    let path = d1["worktree_path"].as_str().unwrap().to_string();
    assert!(path.ends_with(".agents/worktrees/R1/T1-a1"), "{path}");
    // The worktree got the session hooks, bound to the worker and its task.
    let settings = std::fs::read_to_string(format!("{path}/.claude/settings.local.json")).unwrap();
    assert!(settings.contains("--agent backend hook claude stop --task T1"), "{settings}");
    assert!(settings.contains(r#""enabledMcpjsonServers""#), "orch's worktrees approve the MCP server: {settings}");
    assert!(std::fs::read_to_string(format!("{path}/CLAUDE.md")).unwrap().contains("check your inbox"));
    let mcp: Value = serde_json::from_str(&std::fs::read_to_string(format!("{path}/.mcp.json")).unwrap()).unwrap();
    let args = mcp["mcpServers"]["coordd"]["args"].to_string();
    assert!(args.ends_with(r#""--agent","backend","mcp","--task","T1"]"#), "{mcp}");
    let list = git(&p, &["worktree", "list", "--porcelain"]);
    assert!(list.contains(&format!("worktree {path}")), "{list}");
    assert!(list.contains("branch refs/heads/orch/R1/T1/a1"), "{list}");
    // The worker sees the handoff in its inbox, with the worktree in the payload.
    let thread = d1["thread_id"].as_str().unwrap().to_string();
    let show = p.inbox().args(["show", "--thread", &thread, "--json"]).run().ok().json();
    let payload = &show["messages"][0]["payload_json"];
    assert_eq!(payload["worktree_path"], path.as_str());
    assert_eq!(payload["acceptance"], "tables exist");
    assert_eq!(show["thread"]["run_id"], "R1");
    assert_eq!(show["thread"]["task_id"], "T1");
    assert_eq!(task(&p, "T1")["task"]["status"], "dispatched");

    let cursor = last_event(&p);
    let waiter = p.orch().args(["--json", "wait", "--run", "R1", "--after-event", &cursor]).spawn();
    p.inbox().args(["claim", "--agent", "backend", "--thread", &thread]).run().ok();
    assert_eq!(task(&p, "T1")["task"]["status"], "in_progress");
    p.inbox().args(["done", "--agent", "backend", "--thread", &thread, "--summary", "schema ready"]).run().ok();
    let woke = finish(waiter).ok().json();
    assert_eq!(woke["woke"], true);
    assert_eq!(woke["event"]["event_type"], "task.done");
    assert_eq!(woke["event"]["task_id"], "T1");
    assert_eq!(woke["event"]["payload_json"]["merge"], "pending");
    // T2 starts from T1's work: it waits until T1 is merged into the integration branch.
    p.orch().args(["ready", "--run", "R1"]).run().code(10);
    let merged = orch(&p, &["merge", "--run", "R1"]);
    assert_eq!(merged["merged"][0]["task_id"], "T1");
    assert_eq!(merged["merged"][0]["commits"], 0, "T1 committed nothing: nothing to merge");
    let ready = orch(&p, &["ready", "--run", "R1"]);
    assert_eq!(ready["tasks"][0]["task_id"], "T2", "the dependent task turned ready");
    // A timeout when nothing is actionable.
    let cursor = last_event(&p);
    let idle = p
        .orch()
        .args(["--json", "wait", "--run", "R1", "--after-event", &cursor, "--timeout-seconds", "1"])
        .run()
        .code(10)
        .json();
    assert_eq!(idle["woke"], false);
}

#[test]
fn a_block_is_answered_through_orch_and_wakes_the_worker() {
    let p = repo();
    let _d = p.serve();
    three_tasks(&p, &[]);
    orch(&p, &["dispatch", "--run", "R1", "--task", "T1", "--no-worktree"]);
    let thread = current_thread(&p, "T1");
    p.inbox().args(["claim", "--agent", "backend", "--thread", &thread]).run().ok();
    let blocked = p
        .inbox()
        .args([
            "update",
            "--agent",
            "backend",
            "--thread",
            &thread,
            "--status",
            "blocked",
            "--summary",
            "Which DB?",
            "--json",
        ])
        .run()
        .ok()
        .json();
    let after = blocked["event_id"].to_string();
    let b = orch(&p, &["blocked", "--run", "R1"]);
    assert_eq!(b["blocked"][0]["task"]["task_id"], "T1");
    assert_eq!(b["blocked"][0]["question"]["summary"], "Which DB?");
    let worker_wait = p.inbox().args(["wait-reply", "--thread", &thread, "--after-event", &after, "--json"]).spawn();
    let ans = orch(&p, &["answer", "--run", "R1", "--task", "T1", "--summary", "SQLite", "--body", "keep it simple"]);
    assert_eq!(ans["message"]["kind"], "answer");
    let woke = finish(worker_wait).ok().json();
    assert_eq!(woke["message"]["summary"], "SQLite");
    assert_eq!(task(&p, "T1")["task"]["status"], "in_progress", "the answer resumed the task");
    p.orch().args(["blocked", "--run", "R1"]).run().code(10);
}

#[test]
fn a_failure_then_a_retry_in_a_fresh_worktree() {
    let p = repo();
    let _d = p.serve();
    three_tasks(&p, &[]);
    orch(&p, &["dispatch", "--run", "R1", "--task", "T1"]);
    let first = current_thread(&p, "T1");
    p.inbox().args(["claim", "--agent", "backend", "--thread", &first]).run().ok();
    p.inbox().args(["fail", "--agent", "backend", "--thread", &first, "--summary", "migration broke"]).run().ok();
    let t = task(&p, "T1");
    assert_eq!(t["task"]["status"], "failed");
    assert_eq!(orch(&p, &["run", "show", "--run", "R1"])["run"]["status"], "failed");
    let r = orch(&p, &["retry", "--run", "R1", "--task", "T1"]);
    let d = &r["dispatches"][0];
    assert_eq!(d["attempt"], 2);
    assert_ne!(d["thread_id"], first.as_str());
    assert!(d["worktree_path"].as_str().unwrap().ends_with("T1-a2"));
    let t = task(&p, "T1");
    let attempts = t["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 2);
    assert_eq!(attempts[0]["status"], "failed");
    assert!(std::path::Path::new(attempts[0]["worktree_path"].as_str().unwrap()).is_dir(), "the old worktree is kept");
    assert_eq!(attempts[1]["previous_thread_id"], first.as_str());
    assert_eq!(
        attempts[1]["base_branch"], "orch/R1/integration",
        "a retry keeps the base branch (the run's integration branch) for prune's merge check"
    );
    assert_eq!(attempts[1]["base_rev"], attempts[0]["base_rev"], "and the same base revision");
    assert_eq!(orch(&p, &["run", "show", "--run", "R1"])["run"]["status"], "active");
    // Retrying a task that is not failed is refused.
    p.orch().args(["retry", "--run", "R1", "--task", "T1"]).run().code(30);
}

#[test]
fn retries_stop_at_max_attempts_and_auto_retry_reopens_by_itself() {
    let p = repo();
    let _d = p.serve();
    orch(&p, &["run", "create", "--goal", "g", "--id", "R1", "--auto-retry", "1"]);
    orch(
        &p,
        &[
            "task",
            "add",
            "--run",
            "R1",
            "--id",
            "T1",
            "--title",
            "t",
            "--kind",
            "thread",
            "--assign-to",
            "w",
            "--max-attempts",
            "2",
        ],
    );
    orch(&p, &["dispatch", "--run", "R1", "--all-ready"]);
    let first = current_thread(&p, "T1");
    let cursor = last_event(&p);
    let watch =
        p.inbox().args(["--agent", "w", "watch", "--after-event", &cursor, "--status", "pending", "--json"]).spawn();
    p.inbox().args(["claim", "--agent", "w", "--thread", &first]).run().ok();
    p.inbox().args(["fail", "--agent", "w", "--thread", &first, "--summary", "flaky"]).run().ok();
    // The automatic retry hands the worker a new thread.
    let new = finish(watch).ok().json();
    assert_eq!(new["event"]["event_type"], "thread.created");
    let second = new["event"]["thread_id"].as_str().unwrap().to_string();
    assert_ne!(second, first);
    assert_eq!(task(&p, "T1")["task"]["attempt"], 2);
    p.inbox().args(["claim", "--agent", "w", "--thread", &second]).run().ok();
    p.inbox().args(["fail", "--agent", "w", "--thread", &second, "--summary", "still flaky"]).run().ok();
    let refused = p.orch().args(["--json", "retry", "--run", "R1", "--task", "T1"]).run().code(30).json();
    assert!(refused["error"]["message"].as_str().unwrap().contains("all 2"), "{refused}");
}

#[test]
fn reassign_moves_the_task_with_its_history() {
    let p = repo();
    let _d = p.serve();
    three_tasks(&p, &[]);
    orch(&p, &["dispatch", "--run", "R1", "--task", "T1", "--no-worktree"]);
    let old = current_thread(&p, "T1");
    p.inbox().args(["claim", "--agent", "backend", "--thread", &old]).run().ok();
    p.inbox().args(["update", "--agent", "backend", "--thread", &old, "--summary", "half the tables"]).run().ok();
    let r = orch(&p, &["reassign", "--run", "R1", "--task", "T1", "--to", "senior"]);
    let d = &r["dispatches"][0];
    assert_eq!(d["assigned_to"], "senior");
    assert_eq!(d["attempt"], 2);
    let new = d["thread_id"].as_str().unwrap();
    let shown = p.inbox().args(["show", "--thread", new, "--json"]).run().ok().json();
    let payload = &shown["messages"][0]["payload_json"];
    assert_eq!(payload["previous_thread_id"], old.as_str());
    let history: Vec<&str> =
        payload["history"].as_array().unwrap().iter().map(|h| h["summary"].as_str().unwrap()).collect();
    assert!(history.contains(&"half the tables"), "{history:?}");
    let old_thread = p.inbox().args(["show", "--thread", &old, "--json"]).run().ok().json();
    assert_eq!(old_thread["thread"]["status"], "cancelled");
    let t = task(&p, "T1");
    assert_eq!(t["task"]["status"], "dispatched");
    assert_eq!(t["attempts"][0]["status"], "cancelled");
    // The old worker's late update is refused; the new one works.
    p.inbox().args(["update", "--agent", "backend", "--thread", &old, "--summary", "late"]).run().code(30);
    p.inbox().args(["claim", "--agent", "senior", "--thread", new]).run().ok();
    assert_eq!(task(&p, "T1")["task"]["status"], "in_progress");
}

#[test]
fn strict_mode_refuses_a_dirty_repository_and_a_bad_base() {
    let p = repo();
    let _d = p.serve();
    three_tasks(&p, &[]);
    p.write("README.md", "changed\n");
    let dirty = p.orch().args(["--json", "dispatch", "--run", "R1", "--task", "T1", "--strict"]).run().code(30).json();
    assert!(dirty["error"]["message"].as_str().unwrap().contains("uncommitted"), "{dirty}");
    let bad = p
        .orch()
        .args(["--json", "dispatch", "--run", "R1", "--task", "T1", "--base", "no-such-rev"])
        .run()
        .code(30)
        .json();
    assert!(bad["error"]["message"].as_str().unwrap().contains("not a commit"), "{bad}");
    assert_eq!(task(&p, "T1")["task"]["status"], "ready", "nothing was dispatched");
    assert!(!git(&p, &["worktree", "list"]).contains("T1-a1"));
    // Without --strict the same dirty repository is fine.
    orch(&p, &["dispatch", "--run", "R1", "--task", "T1"]);
}

#[test]
fn prune_keeps_unmerged_work_and_live_attempts() {
    let p = repo();
    let _d = p.serve();
    orch(&p, &["run", "create", "--goal", "g", "--id", "R1"]);
    for id in ["A", "B", "C"] {
        orch(&p, &["task", "add", "--run", "R1", "--id", id, "--title", id, "--assign-to", "w"]);
    }
    let d = orch(&p, &["dispatch", "--run", "R1", "--all-ready"]);
    let path = |i: usize| std::path::PathBuf::from(d["dispatches"][i]["worktree_path"].as_str().unwrap());
    // A: finished with an unmerged commit. B: finished with no commit. C: still live.
    std::fs::write(path(0).join("work.txt"), "work\n").unwrap();
    git_in(&path(0), &["add", "work.txt"]);
    git_in(&path(0), &["-c", "user.email=t@e", "-c", "user.name=t", "commit", "-q", "-m", "work"]);
    for i in 0..2 {
        let thread = d["dispatches"][i]["thread_id"].as_str().unwrap();
        p.inbox().args(["claim", "--agent", "w", "--thread", thread]).run().ok();
        p.inbox().args(["done", "--agent", "w", "--thread", thread, "--summary", "ok"]).run().ok();
    }
    let pruned = orch(&p, &["worktree", "prune", "--run", "R1"]);
    let removed: Vec<&str> =
        pruned["removed"].as_array().unwrap().iter().map(|w| w["task_id"].as_str().unwrap()).collect();
    let kept: Vec<(&str, &str)> = pruned["kept"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| (w["task_id"].as_str().unwrap(), w["note"].as_str().unwrap()))
        .collect();
    assert_eq!(removed, ["B"], "{pruned}");
    assert_eq!(kept.len(), 2, "{kept:?}");
    assert!(kept.iter().any(|(t, n)| *t == "A" && n.contains("not merged")), "{kept:?}");
    assert!(kept.iter().any(|(t, n)| *t == "C" && n.contains("live")), "{kept:?}");
    assert!(path(0).is_dir() && !path(1).exists() && path(2).is_dir());
    let text = p.orch().args(["worktree", "prune", "--run", "R1"]).run().ok().stdout;
    assert!(text.contains("kept:") && text.contains("not merged"), "{text}");
    // Work committed on a detached HEAD in a worktree counts too.
    orch(&p, &["task", "add", "--run", "R1", "--id", "D", "--title", "detached", "--assign-to", "w"]);
    let dd = orch(&p, &["dispatch", "--run", "R1", "--task", "D"]);
    let dpath = std::path::PathBuf::from(dd["dispatches"][0]["worktree_path"].as_str().unwrap());
    git_in(&dpath, &["checkout", "-q", "--detach"]);
    std::fs::write(dpath.join("loose.txt"), "loose\n").unwrap();
    git_in(&dpath, &["add", "loose.txt"]);
    git_in(&dpath, &["-c", "user.email=t@e", "-c", "user.name=t", "commit", "-q", "-m", "detached work"]);
    let dthread = dd["dispatches"][0]["thread_id"].as_str().unwrap();
    p.inbox().args(["claim", "--agent", "w", "--thread", dthread]).run().ok();
    p.inbox().args(["done", "--agent", "w", "--thread", dthread, "--summary", "ok"]).run().ok();
    let pruned = orch(&p, &["worktree", "prune", "--run", "R1"]);
    assert!(pruned["kept"].as_array().unwrap().iter().any(|w| w["task_id"] == "D"), "{pruned}");
    assert!(dpath.is_dir(), "detached commits are never deleted without --force");
    // Once merged into main, A's worktree can go.
    git(&p, &["merge", "-q", "--ff-only", "orch/R1/A/a1"]);
    let pruned = orch(&p, &["worktree", "prune", "--run", "R1"]);
    assert_eq!(pruned["removed"][0]["task_id"], "A");
    assert!(!path(0).exists());
    assert!(!git(&p, &["branch"]).contains("orch/R1/A/a1"));
}

#[test]
fn a_stale_branch_is_replaced_but_a_branch_with_work_is_refused() {
    let p = repo();
    let _d = p.serve();
    three_tasks(&p, &[]);
    // Left over by a dispatch that crashed before recording its attempt: no work on it.
    git(&p, &["branch", "orch/R1/T1/a1"]);
    let d = orch(&p, &["dispatch", "--run", "R1", "--task", "T1"]);
    assert_eq!(d["dispatches"][0]["branch"], "orch/R1/T1/a1");
    // A branch with commits of its own is never taken over.
    orch(&p, &["task", "add", "--run", "R1", "--id", "T9", "--title", "x", "--assign-to", "w"]);
    git(&p, &["checkout", "-q", "-b", "orch/R1/T9/a1"]);
    p.write("mine.txt", "mine\n");
    git(&p, &["add", "mine.txt"]);
    git(&p, &["commit", "-q", "-m", "someone's work"]);
    git(&p, &["checkout", "-q", "main"]);
    let refused = p.orch().args(["--json", "dispatch", "--run", "R1", "--task", "T9"]).run().code(30).json();
    assert!(refused["error"]["message"].as_str().unwrap().contains("commits of its own"), "{refused}");
}

#[test]
fn a_worker_inside_its_worktree_talks_to_the_project_daemon() {
    let p = repo();
    // The repository tracks a file under .agents/, so every worktree has a .agents/ too.
    std::fs::create_dir_all(p.path().join(".agents")).unwrap();
    p.write(".agents/agent-notes.md", "notes\n");
    git(&p, &["add", "-f", ".agents/agent-notes.md"]);
    git(&p, &["commit", "-q", "-m", "agent notes"]);
    let _d = p.serve();
    three_tasks(&p, &[]);
    let d = orch(&p, &["dispatch", "--run", "R1", "--task", "T1"]);
    let wt = std::path::PathBuf::from(d["dispatches"][0]["worktree_path"].as_str().unwrap());
    assert!(wt.join(".agents/agent-notes.md").is_file());
    let thread = d["dispatches"][0]["thread_id"].as_str().unwrap();
    let out = std::process::Command::new(coord_tests::bin("inbox"))
        .current_dir(&wt)
        .env("COORD_NO_AUTOSTART", "1")
        .env_remove("COORD_DB")
        .args(["--json", "claim", "--agent", "backend", "--thread", thread])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
    assert!(!wt.join(".agents/coord.db").exists(), "no second database inside the worktree");
}

#[test]
fn a_full_council_round_with_three_reviewers() {
    let p = repo();
    let _d = p.serve();
    orch(&p, &["run", "create", "--goal", "review", "--id", "R1"]);
    let c = orch(&p, &["council", "start", "--run", "R1", "--topic", "API design"]);
    assert_eq!(c["council_id"], "C1");
    assert_eq!(c["phase"], "brainstorm");
    let members = c["members"].as_array().unwrap().clone();
    assert_eq!(members.len(), 3);
    let recs = [
        r#"{"recommendations":[{"title":"Add rate limiting","detail":"per token"},{"title":"Version the API","detail":"v1 prefix"}]}"#,
        r#"{"recommendations":[{"title":"add  rate-limiting!","detail":"429s"}]}"#,
        r#"{"recommendations":[{"title":"Pagination","detail":"cursors","group":"paging"}]}"#,
    ];
    let cursor = last_event(&p);
    for (m, rec) in members.iter().zip(recs) {
        let reviewer = m["reviewer"].as_str().unwrap();
        let thread = m["brainstorm_thread_id"].as_str().unwrap();
        p.inbox().args(["claim", "--agent", reviewer, "--thread", thread]).run().ok();
        p.inbox()
            .args(["done", "--agent", reviewer, "--thread", thread, "--summary", "ideas", "--payload-json", rec])
            .run()
            .ok();
    }
    let voting = p.orch().args(["--json", "wait", "--run", "R1", "--after-event", &cursor]).run().ok().json();
    assert_eq!(voting["event"]["event_type"], "council.voting");
    let c = orch(&p, &["council", "status", "--run", "R1", "--council", "C1"]);
    assert_eq!(c["phase"], "voting");
    let groups: Vec<(&str, &str)> = c["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| (g["group_id"].as_str().unwrap(), g["title"].as_str().unwrap()))
        .collect();
    assert_eq!(groups, [("G1", "Add rate limiting"), ("G2", "Version the API"), ("G3", "Pagination")]);
    let votes = [
        r#"{"votes":{"G1":"approve","G2":"reject","G3":"approve"}}"#,
        r#"{"votes":{"G1":"approve","G2":"reject","G3":"abstain"}}"#,
        r#"{"votes":{"G1":"reject","G2":"approve"}}"#,
    ];
    for (m, vote) in c["members"].as_array().unwrap().iter().zip(votes) {
        let reviewer = m["reviewer"].as_str().unwrap();
        let thread = m["vote_thread_id"].as_str().unwrap();
        let shown = p.inbox().args(["show", "--thread", thread, "--json"]).run().ok().json();
        assert_eq!(shown["messages"][0]["payload_json"]["groups"].as_array().unwrap().len(), 3);
        p.inbox().args(["claim", "--agent", reviewer, "--thread", thread]).run().ok();
        p.inbox()
            .args(["done", "--agent", reviewer, "--thread", thread, "--summary", "votes", "--payload-json", vote])
            .run()
            .ok();
    }
    let report = orch(&p, &["council", "report", "--run", "R1", "--council", "C1"]);
    assert_eq!(report["phase"], "done");
    let g = &report["groups"];
    assert_eq!(
        (g[0]["approve"].as_u64(), g[0]["reject"].as_u64(), g[0]["verdict"].as_str()),
        (Some(2), Some(1), Some("approved"))
    );
    assert_eq!(g[0]["proposed_by"], serde_json::json!(["reviewer-1", "reviewer-2"]));
    assert_eq!((g[1]["reject"].as_u64(), g[1]["verdict"].as_str()), (Some(2), Some("rejected")));
    assert_eq!(
        (g[2]["approve"].as_u64(), g[2]["abstain"].as_u64(), g[2]["verdict"].as_str()),
        (Some(1), Some(2), Some("no_majority"))
    );
    let text = p.orch().args(["council", "report", "--run", "R1", "--council", "C1"]).run().ok().stdout;
    assert!(text.contains("G1 Add rate limiting: approved (approve 2, reject 1, abstain 0)"), "{text}");
    assert!(text.contains("proposed by reviewer-1, reviewer-2"), "{text}");
}

#[test]
fn an_expired_lease_and_cancellation_reach_the_leader() {
    let p = repo();
    let _d = p.serve();
    three_tasks(&p, &[]);
    orch(&p, &["dispatch", "--run", "R1", "--task", "T1", "--no-worktree"]);
    let thread = current_thread(&p, "T1");
    let cursor = last_event(&p);
    p.inbox().args(["claim", "--agent", "backend", "--thread", &thread, "--lease-seconds", "1"]).run().ok();
    let expired = p.orch().args(["--json", "wait", "--run", "R1", "--after-event", &cursor]).run().ok().json();
    assert_eq!(expired["event"]["event_type"], "lease.expired");
    assert_eq!(expired["event"]["thread_id"], thread.as_str());
    let v = orch(&p, &["cancel", "--run", "R1", "--reason", "scope changed"]);
    assert_eq!(v["run"]["status"], "cancelled");
    assert!(v["tasks"].as_array().unwrap().iter().all(|t| t["status"] == "cancelled"), "{v}");
    let th = p.inbox().args(["show", "--thread", &thread, "--json"]).run().ok().json();
    assert_eq!(th["thread"]["status"], "cancelled");
    p.orch().args(["dispatch", "--run", "R1", "--all-ready"]).run().code(30);
}
