//! Every documented exit code of `inbox`, with its JSON error envelope.

use coord_tests::{Project, thread_id};
use serde_json::Value;

fn error_code(v: &Value) -> &str {
    assert_eq!(v["ok"], false, "{v}");
    v["error"]["code"].as_str().unwrap()
}

#[test]
fn every_exit_code() {
    let p = Project::new();
    let _d = p.serve();
    let inbox = || p.inbox().json_flag();

    // 0: success.
    let sent = inbox().args(["send", "--from", "lead", "--to", "w1", "--summary", "task"]).run().ok().json();
    let thr = thread_id(&sent);

    // 10: no matching work; a wait that times out.
    let none = inbox().args(["fetch", "--agent", "idle-worker"]).run().code(10).json();
    assert_eq!(none["ok"], true);
    assert_eq!(none["threads"].as_array().unwrap().len(), 0);
    let timed_out = inbox()
        .args(["wait-reply", "--thread", &thr, "--after-event", "1", "--timeout-seconds", "1"])
        .run()
        .code(10)
        .json();
    assert_eq!(timed_out["woke"], false);
    assert_eq!(timed_out["next_event_id"], 1);
    assert_eq!(timed_out["message"], Value::Null);

    // 20: conflicts.
    inbox().args(["claim", "--agent", "w1", "--thread", &thr]).run().ok();
    let conflict = inbox().args(["claim", "--agent", "w2", "--thread", &thr]).run().code(20).json();
    assert_eq!(error_code(&conflict), "lease_conflict");
    assert_eq!(conflict["error"]["details"]["holder"], "w1");
    let renew = inbox().args(["renew", "--agent", "w2", "--thread", &thr]).run().code(20).json();
    assert_eq!(error_code(&renew), "not_lease_holder");
    let update = inbox().args(["update", "--agent", "w2", "--thread", &thr, "--summary", "x"]).run().code(20).json();
    assert_eq!(error_code(&update), "not_lease_holder");
    let done = inbox().args(["done", "--agent", "w2", "--thread", &thr, "--summary", "x"]).run().code(20).json();
    assert_eq!(error_code(&done), "not_lease_holder");

    // 30: invalid input or transition.
    let bad_json = inbox()
        .args(["update", "--agent", "w1", "--thread", &thr, "--summary", "x", "--payload-json", "{nope"])
        .run()
        .code(30)
        .json();
    assert_eq!(error_code(&bad_json), "invalid_args", "a bad value is a usage error");
    let not_object = inbox()
        .args(["update", "--agent", "w1", "--thread", &thr, "--summary", "x", "--payload-json", "[1]"])
        .run()
        .code(30)
        .json();
    assert_eq!(error_code(&not_object), "invalid_args");
    let bad_status = inbox()
        .args(["update", "--agent", "w1", "--thread", &thr, "--summary", "x", "--status", "done"])
        .run()
        .code(30)
        .json();
    assert_eq!(error_code(&bad_status), "invalid_input");
    let blank = inbox().args(["update", "--agent", "w1", "--thread", &thr, "--summary", "  "]).run().code(30).json();
    assert_eq!(error_code(&blank), "invalid_input");
    let limit = inbox().args(["fetch", "--agent", "w1", "--limit", "0"]).run().code(30).json();
    assert_eq!(error_code(&limit), "invalid_input");
    let lease =
        inbox().args(["renew", "--agent", "w1", "--thread", &thr, "--lease-seconds", "0"]).run().code(30).json();
    assert_eq!(error_code(&lease), "invalid_input");
    let kind = inbox()
        .args(["reply", "--from", "lead", "--thread", &thr, "--kind", "task", "--summary", "x"])
        .run()
        .code(30)
        .json();
    assert_eq!(error_code(&kind), "invalid_input");
    let usage = p.inbox().args(["claim", "--agent", "w1"]).run().code(30);
    assert!(usage.stderr.contains("--thread"), "{}", usage.stderr);
    inbox().args(["done", "--agent", "w1", "--thread", &thr, "--summary", "finished"]).run().ok();
    let again = inbox().args(["done", "--agent", "w1", "--thread", &thr, "--summary", "twice"]).run().code(30).json();
    assert_eq!(error_code(&again), "invalid_transition");
    let reclaim = inbox().args(["claim", "--agent", "w1", "--thread", &thr]).run().code(30).json();
    assert_eq!(error_code(&reclaim), "invalid_transition");

    // 40: not found.
    for args in [
        vec!["claim", "--agent", "w1", "--thread", "thr_missing"],
        vec!["show", "--thread", "thr_missing"],
        vec!["reply", "--from", "lead", "--thread", "thr_missing", "--summary", "x"],
        vec!["wait-reply", "--thread", "thr_missing", "--timeout-seconds", "1"],
        vec!["send", "--from", "lead", "--to", "w1", "--thread", "thr_missing", "--summary", "x"],
    ] {
        let out = inbox().args(&args).run().code(40).json();
        assert_eq!(error_code(&out), "not_found", "{args:?}");
    }

    // 50: storage or internal — here, no daemon and auto-start off.
    let fresh = Project::new();
    let down = fresh
        .inbox()
        .args(["--json", "--no-autostart", "send", "--from", "a", "--to", "b", "--summary", "x"])
        .run()
        .code(50)
        .json();
    assert_eq!(error_code(&down), "daemon_unavailable");
}

#[test]
fn errors_without_json_go_to_stderr_with_their_code() {
    let p = Project::new();
    let _d = p.serve();
    let out = p.inbox().args(["show", "--thread", "thr_nope"]).run().code(40);
    assert!(out.stdout.is_empty());
    assert!(out.stderr.contains("not_found") && out.stderr.contains("thr_nope"), "{}", out.stderr);
}
