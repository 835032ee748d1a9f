//! Reviewing a task's diff (issue 36): `orch diff` against the task's base or the
//! integration tip; comments on lines that `orch review request-changes` sends to the
//! worker as one message with `file:line` anchors (a done task goes back to its worker,
//! a live one gets it in its thread); a run that requires approval merges only what a
//! reviewer approved; a council's brief carries the diff.

use std::path::PathBuf;

use coord_tests::{Project, git_in, git_project};
use serde_json::Value;

fn orch(p: &Project, args: &[&str]) -> Value {
    p.orch().json_flag().args(args).run().ok().json()
}

fn add(p: &Project, id: &str) {
    orch(p, &["task", "add", "--run", "R1", "--id", id, "--title", id, "--assign-to", "w1"]);
}

/// Dispatch `id`; w1 claims it and commits `files` in its worktree; `done` finishes it.
/// Returns the thread.
fn work(p: &Project, id: &str, files: &[(&str, &str)], done: bool) -> String {
    let d = orch(p, &["dispatch", "--run", "R1", "--task", id]);
    let d = &d["dispatches"][0];
    let (wt, thread) =
        (PathBuf::from(d["worktree_path"].as_str().unwrap()), d["thread_id"].as_str().unwrap().to_string());
    p.inbox().args(["claim", "--agent", "w1", "--thread", &thread]).run().ok();
    commit(&wt, files);
    if done {
        p.inbox().args(["done", "--agent", "w1", "--thread", &thread, "--summary", "done"]).run().ok();
    }
    thread
}

fn commit(wt: &std::path::Path, files: &[(&str, &str)]) {
    for (f, text) in files {
        std::fs::write(wt.join(f), text).unwrap();
    }
    git_in(wt, &["add", "-A"]);
    git_in(wt, &["-c", "user.email=w@e", "-c", "user.name=w", "commit", "-q", "-m", "work"]);
}

fn paths(d: &Value) -> Vec<(String, String)> {
    d["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["path"].as_str().unwrap().into(), f["status"].as_str().unwrap().into()))
        .collect()
}

#[test]
fn orch_diff_shows_the_attempt_against_its_base_and_against_the_integration_tip() {
    let p = git_project();
    orch(&p, &["run", "create", "--goal", "g", "--id", "R1"]);
    add(&p, "T1");
    add(&p, "T2");
    // Both leave the same base; T1 lands first.
    work(&p, "T2", &[("README.md", "hello\nfrom T2\n"), ("two.txt", "2\n")], false);
    work(&p, "T1", &[("one.txt", "1\n")], true);
    orch(&p, &["merge", "--run", "R1", "--task", "T1"]);
    let d = orch(&p, &["diff", "--run", "R1", "--task", "T2"]);
    assert_eq!(paths(&d), [("README.md".into(), "modified".into()), ("two.txt".into(), "added".into())], "{d}");
    let added = &d["files"][1]["hunks"][0]["lines"][0];
    assert_eq!(
        (added["origin"].clone(), added["new_line"].clone(), added["text"].clone()),
        ("+".into(), 1.into(), "2".into())
    );
    assert_eq!(d["files"][0]["additions"], 1);
    // Against the integration tip, T1's file (merged there, not in T2's branch) shows too.
    let i = orch(&p, &["diff", "--run", "R1", "--task", "T2", "--against", "integration"]);
    assert!(paths(&i).contains(&("one.txt".into(), "deleted".into())), "{i}");
    let text = p.orch().args(["diff", "--run", "R1", "--task", "T2", "--path", "two.txt"]).run().ok().stdout;
    assert!(text.contains("added two.txt  +1 -0") && text.contains("\n+2\n"), "{text}");
}

#[test]
fn a_run_that_requires_approval_merges_only_what_a_reviewer_approved() {
    let p = git_project();
    orch(&p, &["run", "create", "--goal", "g", "--id", "R1", "--auto-merge", "--require-approval"]);
    add(&p, "T1");
    work(&p, "T1", &[("one.txt", "1\n")], true);
    let e = p.orch().json_flag().args(["merge", "--run", "R1", "--task", "T1"]).run().code(30).json();
    assert!(e["error"]["message"].as_str().unwrap().contains("approval"), "{e}");
    let s = orch(&p, &["status", "--run", "R1"]);
    assert_eq!(s["tasks"][0]["candidate"]["state"], "review", "{s}");
    let v = orch(&p, &["review", "approve", "--run", "R1", "--task", "T1", "--summary", "looks good"]);
    assert_eq!(v["candidate"]["approved_by"], "leader", "{v}");
    // Approved under automatic merge (and no verify command): the daemon merges it.
    let cursor = v["event_id"].as_i64().unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let c = rt.block_on(p.client());
    rt.block_on(coord_tests::next_run_event(&c, "R1", cursor - 1, &[coord_proto::types::EventType::TaskMerged]));
    assert_eq!(orch(&p, &["task", "show", "--run", "R1", "--task", "T1"])["task"]["merge_state"], "merged");
}

#[test]
fn request_changes_sends_the_comments_to_the_worker_with_their_file_line_anchors() {
    let p = git_project();
    orch(&p, &["run", "create", "--goal", "g", "--id", "R1", "--require-approval"]);
    add(&p, "T1");
    work(&p, "T1", &[("two.txt", "a\nb\n")], true);
    let comment = |file: &str, line: &str, body: &str| {
        orch(&p, &["review", "comment", "--run", "R1", "--task", "T1", "--file", file, "--line", line, "--body", body])
    };
    comment("two.txt", "2", "b should be c");
    comment("two.txt", "1", "and a needs a test");
    let v = orch(&p, &["review", "request-changes", "--run", "R1", "--task", "T1", "--summary", "two fixes"]);
    assert_eq!(v["comments"].as_array().unwrap().len(), 2, "{v}");
    assert_eq!((v["returned"]["attempt"].clone(), v["returned"]["assigned_to"].clone()), (2.into(), "w1".into()));
    // One message, in the new attempt's thread, with the anchors; the work carries over.
    let thread = v["returned"]["thread_id"].as_str().unwrap();
    let shown = p.inbox().json_flag().args(["show", "--thread", thread]).run().ok().json();
    let body = shown["messages"][0]["body"].as_str().unwrap();
    assert!(body.contains("- two.txt:2: b should be c\n- two.txt:1: and a needs a test"), "{body}");
    assert_eq!(shown["messages"][0]["message_id"], v["message_id"]);
    let wt = PathBuf::from(v["returned"]["worktree_path"].as_str().unwrap());
    assert_eq!(std::fs::read_to_string(wt.join("two.txt")).unwrap(), "a\nb\n");
    let d = orch(&p, &["diff", "--run", "R1", "--task", "T1", "--attempt", "1"]);
    assert!(d["comments"].as_array().unwrap().iter().all(|c| c["sent_in"] == v["message_id"]), "{d}");
    // Nothing left to send.
    p.orch().args(["review", "request-changes", "--run", "R1", "--task", "T1"]).run().code(30);
}

#[test]
fn request_changes_on_a_live_task_is_a_message_in_its_thread() {
    let p = git_project();
    orch(&p, &["run", "create", "--goal", "g", "--id", "R1"]);
    add(&p, "T1");
    let thread = work(&p, "T1", &[("two.txt", "a\n")], false);
    orch(
        &p,
        &["review", "comment", "--run", "R1", "--task", "T1", "--file", "two.txt", "--line", "1", "--body", "say why"],
    );
    let v = orch(&p, &["review", "request-changes", "--run", "R1", "--task", "T1"]);
    assert!(v["returned"].is_null(), "{v}");
    let reply = p
        .inbox()
        .json_flag()
        .args(["wait-reply", "--agent", "w1", "--thread", &thread, "--after-event", "0"])
        .run()
        .ok()
        .json();
    let m = &reply["message"];
    assert_eq!((m["from_agent"].clone(), m["to_agent"].clone()), ("leader".into(), "w1".into()), "{reply}");
    assert!(m["body"].as_str().unwrap().contains("- two.txt:1: say why"), "{reply}");
}

#[test]
fn a_councils_brief_carries_the_diff_it_reviews() {
    let p = git_project();
    orch(&p, &["run", "create", "--goal", "g", "--id", "R1"]);
    add(&p, "T1");
    work(&p, "T1", &[("two.txt", "the change\n")], true);
    let c = orch(
        &p,
        &["council", "start", "--run", "R1", "--topic", "merge T1?", "--review-task", "T1", "--reviewers", "r1"],
    );
    assert!(c["body"].as_str().unwrap().contains("orch diff --run R1 --task T1"), "{c}");
    assert!(c["body"].as_str().unwrap().contains("+the change"), "{c}");
}
