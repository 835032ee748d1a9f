//! The hooks of a one-shot lead session (`orch hook session-start|stop`), run as Claude Code
//! runs them (hook JSON on stdin, the answer on stdout) against the real daemon: the run's
//! state as the opening context, a stop blocked with a worker's question (handed over
//! once), blocked while workers work, and let go once the run is done.

use coord_tests::{Project, blocked_task, ok_as};
use serde_json::Value;

/// Run `orch hook EVENT --run R1 ARGS` with a hook's JSON on stdin; its answer, if any.
fn hook(p: &Project, event: &str, args: &[&str]) -> Option<Value> {
    let mut all = vec!["hook", event, "--run", "R1"];
    all.extend_from_slice(args);
    let out = p.orch().args(all).stdin(br#"{"hook_event_name":"Stop","stop_hook_active":false}"#).run().ok();
    let text = out.stdout.trim().to_string();
    (!text.is_empty()).then(|| serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}")))
}

fn reason(v: &Option<Value>) -> String {
    v.as_ref()
        .map(|v| {
            assert_eq!(v["decision"], "block", "{v}");
            v["reason"].as_str().unwrap().to_string()
        })
        .unwrap_or_else(|| panic!("the stop should be blocked"))
}

#[test]
fn session_start_gives_the_lead_the_run_state() {
    let p = Project::new();
    let _d = p.serve();
    blocked_task(&p, "wkr", "Which DB?");
    let v = hook(&p, "session-start", &[]).expect("a context");
    let text = v["hookSpecificOutput"]["additionalContext"].as_str().unwrap();
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "SessionStart");
    assert!(text.contains("You lead run R1") && text.contains("- T1 [blocked] @wkr: Schema"), "{text}");
    assert!(text.contains("question: Which DB?"), "{text}");
}

#[test]
fn stop_hands_over_a_question_once_then_waits_on_working_workers() {
    let p = Project::new();
    let _d = p.serve();
    p.orch().args(["run", "create", "--goal", "G", "--id", "R1"]).run().ok();
    hook(&p, "session-start", &[]);
    let (thread, _) = blocked_task_in_r1(&p);

    let first = reason(&hook(&p, "stop", &["--wait-seconds", "60"]));
    assert!(first.contains("task.blocked T1 by wkr") && first.contains("question: Which DB?"), "{first}");
    // Nothing new: the question is not handed over again, but the worker still works.
    let second = reason(&hook(&p, "stop", &["--wait-seconds", "0"]));
    assert!(!second.contains("Which DB?") && second.contains("working on T1 (blocked)"), "{second}");

    p.orch().args(["answer", "--run", "R1", "--task", "T1", "--summary", "SQLite"]).run().ok();
    ok_as(&p, "wkr", &["done", "--thread", &thread, "--summary", "schema in"]);
    assert_eq!(hook(&p, "stop", &["--wait-seconds", "0"]), None, "the run is done: the lead may stop");
}

#[test]
fn a_hook_without_a_daemon_says_nothing_and_succeeds() {
    let p = Project::new();
    assert_eq!(hook(&p, "stop", &["--wait-seconds", "0"]), None);
}

/// T1 (a thread task) in the existing run R1, dispatched to `wkr`, claimed and blocked.
fn blocked_task_in_r1(p: &Project) -> (String, i64) {
    let orch = |args: &[&str]| p.orch().args(args).json_flag().run().ok().json();
    orch(&["task", "add", "--run", "R1", "--id", "T1", "--title", "Schema", "--kind", "thread"]);
    let d = orch(&["dispatch", "--run", "R1", "--task", "T1", "--to", "wkr"]);
    let thread = d["dispatches"][0]["thread_id"].as_str().unwrap().to_string();
    ok_as(p, "wkr", &["claim", "--thread", &thread]);
    let b = ok_as(p, "wkr", &["update", "--thread", &thread, "--status", "blocked", "--summary", "Which DB?"]);
    (thread, b["event_id"].as_i64().unwrap())
}
