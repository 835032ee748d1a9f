//! The leader's everyday edits: `orch task edit`, `assign` and `remove`, `orch council
//! list`, council votes that are refused when they are not a valid choice, `dispatch
//! --json` giving the event to wait from, and `inbox watch --run` showing a run's task and
//! run events with their times.

use coord_tests::{Project, fails, finish};
use serde_json::Value;

fn orch(p: &Project, args: &[&str]) -> Value {
    p.orch().json_flag().args(args).run().ok().json()
}

fn thread_run(p: &Project) {
    orch(p, &["run", "create", "--goal", "g", "--id", "R1"]);
    for (id, deps) in [("T1", ""), ("T2", "T1")] {
        let mut args =
            vec!["task", "add", "--run", "R1", "--id", id, "--title", id, "--kind", "thread", "--assign-to", "w1"];
        if !deps.is_empty() {
            args.extend(["--depends-on", deps]);
        }
        orch(p, &args);
    }
}

#[test]
fn tasks_are_edited_assigned_and_removed_until_they_are_dispatched() {
    let p = Project::new();
    let _d = p.serve();
    thread_run(&p);
    let e = orch(
        &p,
        &[
            "task",
            "edit",
            "--run",
            "R1",
            "--task",
            "T2",
            "--title",
            "Better title",
            "--priority",
            "urgent",
            "--acceptance",
            "tests pass",
        ],
    );
    assert_eq!((e["task"]["title"].clone(), e["task"]["priority"].clone()), ("Better title".into(), "urgent".into()));
    let a = orch(&p, &["task", "assign", "--run", "R1", "--task", "T2", "--to", "w2"]);
    assert_eq!(a["task"]["assign_to"], "w2");
    p.orch().args(["task", "edit", "--run", "R1", "--task", "T2"]).run().code(30);
    // Dispatched: the text is the worker's now; the worker and limits can still change.
    orch(&p, &["dispatch", "--run", "R1", "--task", "T1"]);
    let v =
        p.orch().args(["--json", "task", "edit", "--run", "R1", "--task", "T1", "--title", "x"]).run().code(30).json();
    assert!(v["error"]["message"].as_str().unwrap().contains("dispatched"), "{v}");
    orch(&p, &["task", "edit", "--run", "R1", "--task", "T1", "--max-attempts", "5"]);
    let v = p.orch().args(["--json", "task", "remove", "--run", "R1", "--task", "T1"]).run().code(30).json();
    assert!(v["error"]["message"].as_str().unwrap().contains("cancel"), "{v}");
    // Removing T2's dependency-free sibling would be fine; removing T2 itself too.
    let r = orch(&p, &["task", "remove", "--run", "R1", "--task", "T2"]);
    assert_eq!(r["task_id"], "T2");
    p.orch().args(["task", "show", "--run", "R1", "--task", "T2"]).run().code(40);
    // A task whose dependency is removed may become ready.
    orch(&p, &["task", "add", "--run", "R1", "--id", "T3", "--title", "t3", "--kind", "thread"]);
    orch(&p, &["task", "add", "--run", "R1", "--id", "T4", "--title", "t4", "--kind", "thread", "--depends-on", "T3"]);
    let r = orch(&p, &["task", "remove", "--run", "R1", "--task", "T3"]);
    assert_eq!(r["dependents"], serde_json::json!(["T4"]));
    assert_eq!(orch(&p, &["task", "show", "--run", "R1", "--task", "T4"])["task"]["status"], "ready");
}

#[test]
fn dispatch_json_gives_the_event_to_wait_from_and_watch_run_shows_task_events() {
    let p = Project::new();
    let _d = p.serve();
    thread_run(&p);
    let watcher = p.inbox().args(["watch", "--run", "R1", "--after-event", "0", "--follow", "--count", "4"]).spawn();
    let d = orch(&p, &["dispatch", "--run", "R1", "--task", "T1"]);
    let cursor = d["event_id"].as_i64().unwrap();
    assert!(cursor > 0);
    let thread = d["dispatches"][0]["thread_id"].as_str().unwrap().to_string();
    // Nothing the worker does after the dispatch escapes a wait from its event id.
    p.inbox().args(["claim", "--agent", "w1", "--thread", &thread]).run().ok();
    p.inbox().args(["done", "--agent", "w1", "--thread", &thread, "--summary", "ok"]).run().ok();
    let w = p.orch().args(["--json", "wait", "--run", "R1", "--after-event", &cursor.to_string()]).run().ok().json();
    assert_eq!(w["event"]["event_type"], "task.done");
    let out = finish(watcher).ok().stdout;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 4, "{out}");
    assert!(lines[0].contains("run.created"), "{out}");
    assert!(lines.iter().filter(|l| l.contains("task.added")).count() == 2, "{out}");
    assert!(lines[0].starts_with("20") && lines[0].contains('T'), "each line starts with its time: {out}");
}

#[test]
fn council_list_and_votes_that_are_no_choice_are_refused() {
    let p = Project::new();
    let _d = p.serve();
    orch(&p, &["run", "create", "--goal", "review", "--id", "R1"]);
    let c = orch(&p, &["council", "start", "--run", "R1", "--topic", "API design", "--reviewers", "r1"]);
    let listed = orch(&p, &["council", "list", "--run", "R1"]);
    assert_eq!(listed["councils"][0]["council_id"], c["council_id"]);
    let brainstorm = c["members"][0]["brainstorm_thread_id"].as_str().unwrap().to_string();
    p.inbox().args(["claim", "--agent", "r1", "--thread", &brainstorm]).run().ok();
    let rec = r#"{"recommendations":[{"title":"Add rate limiting"}]}"#;
    p.inbox()
        .args(["done", "--agent", "r1", "--thread", &brainstorm, "--summary", "ideas", "--payload-json", rec])
        .run()
        .ok();
    let c = orch(&p, &["council", "status", "--run", "R1", "--council", "C1"]);
    let vote = c["members"][0]["vote_thread_id"].as_str().unwrap().to_string();
    p.inbox().args(["claim", "--agent", "r1", "--thread", &vote]).run().ok();
    for bad in [
        r#"{"votes":{"G1":"yes"}}"#,
        r#"{"votes":{"G1":"APPROVE"}}"#,
        r#"{"votes":{"G9":"approve"}}"#,
        r#"{"vote":"approve"}"#,
    ] {
        let args = ["done", "--agent", "r1", "--thread", &vote, "--summary", "votes", "--payload-json", bad];
        fails(&p, &args, 30, "invalid_input");
    }
    let ok = [
        "done",
        "--agent",
        "r1",
        "--thread",
        &vote,
        "--summary",
        "votes",
        "--payload-json",
        r#"{"votes":{"G1":"approve"}}"#,
    ];
    p.inbox().args(ok).run().ok();
    let report = orch(&p, &["council", "report", "--run", "R1", "--council", "C1"]);
    assert_eq!((report["phase"].clone(), report["groups"][0]["verdict"].clone()), ("done".into(), "approved".into()));
}
