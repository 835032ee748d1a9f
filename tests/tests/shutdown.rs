//! Shutdown requests end to end (issue 20 items 3 and 4): a request carries the run and
//! task of the thread its target holds, `orch status` lists it and `orch wait` wakes on it
//! and on its answer; approving it (through a Claude Code hook) blocks the task with
//! "worker stopped", releases the lease and tells the lead the worker went idle for
//! `shutdown`. A request expires, and stops only the session of its task.

use coord_tests::{Project, claude_hook as hook, fails, ok_as, orch_wait, wait_until};
use serde_json::json;

/// Run R1 with thread tasks T1 and T2, T1 dispatched to `worker` and claimed; the thread
/// and the claim's event id.
fn working(p: &Project, worker: &str) -> (String, i64) {
    let orch = |args: &[&str]| p.orch().args(args).json_flag().run().ok().json();
    orch(&["run", "create", "--goal", "G", "--id", "R1", "--created-by", "lead"]);
    orch(&["task", "add", "--run", "R1", "--id", "T1", "--title", "Schema", "--kind", "thread"]);
    orch(&["task", "add", "--run", "R1", "--id", "T2", "--title", "Docs", "--kind", "thread"]);
    let d = orch(&["dispatch", "--run", "R1", "--task", "T1", "--to", worker]);
    let thr = d["dispatches"][0]["thread_id"].as_str().expect("thread_id").to_string();
    let claimed = ok_as(p, worker, &["claim", "--thread", &thr]);
    (thr, claimed["event_id"].as_i64().expect("event_id"))
}

fn task_status(p: &Project, task: &str) -> String {
    let v = p.orch().args(["task", "show", "--run", "R1", "--task", task, "--json"]).run().ok().json();
    v["task"]["status"].as_str().expect("task status").to_string()
}

#[test]
fn a_shutdown_carries_the_workers_run_and_task_and_orch_status_lists_it() {
    let p = Project::new();
    let _d = p.serve();
    working(&p, "w1");
    let sent = ok_as(&p, "lead", &["shutdown", "--to", "w1", "--reason", "run finished"]);
    assert_eq!((sent["thread"]["run_id"].clone(), sent["thread"]["task_id"].clone()), (json!("R1"), json!("T1")));
    let status = p.orch().args(["status", "--run", "R1", "--json"]).run().ok().json();
    let open = status["open_requests"].as_array().expect("open_requests");
    assert_eq!(open.len(), 1, "{status}");
    assert_eq!((open[0]["type"].clone(), open[0]["task_id"].clone()), (json!("shutdown_request"), json!("T1")));
}

#[test]
fn orch_wait_wakes_on_a_shutdown_request_and_on_its_answer() {
    let p = Project::new();
    let _d = p.serve();
    let (_, cursor) = working(&p, "w1");
    ok_as(&p, "lead", &["shutdown", "--to", "w1"]);
    let v = orch_wait(&p, "R1", cursor);
    assert_eq!(v["event"]["message"]["type"], "shutdown_request", "{v}");
    let cursor = v["next_event_id"].as_i64().unwrap();
    hook(&p, "w1", "T1", "post-tool-use").expect("the session is stopped");
    let v = orch_wait(&p, "R1", cursor);
    assert_eq!(v["event"]["message"]["type"], "shutdown_approved", "{v}");
}

#[test]
fn an_approved_shutdown_blocks_the_task_releases_the_lease_and_tells_the_lead() {
    let p = Project::new();
    let _d = p.serve();
    let (thr, _) = working(&p, "w1");
    ok_as(&p, "lead", &["shutdown", "--to", "w1"]);
    let stop = hook(&p, "w1", "T1", "post-tool-use").expect("the session is stopped");
    assert_eq!(stop["continue"], false, "{stop}");
    let shown = ok_as(&p, "lead", &["show", "--thread", &thr]);
    assert_eq!(shown["thread"]["status"], "blocked", "{shown}");
    assert_eq!(shown["thread"]["lease"]["active"], false, "{shown}");
    let last = shown["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["summary"], "worker stopped", "{last}");
    assert_eq!(task_status(&p, "T1"), "blocked");
    // Another worker may take the thread at once, without waiting for the lease to run out.
    ok_as(&p, "w2", &["claim", "--thread", &thr]);
    let idle = ok_as(&p, "lead", &["check"]);
    let notice = idle["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["kind"] == "control" && m["from_agent"] == "w1")
        .unwrap_or_else(|| panic!("an idle notification: {idle}"))
        .clone();
    assert_eq!((notice["summary"].clone(), notice["task_id"].clone()), (json!("w1 is idle (shutdown)"), json!("T1")));
}

#[test]
fn a_shutdown_aimed_at_a_task_does_not_stop_a_session_of_another_task() {
    let p = Project::new();
    let _d = p.serve();
    working(&p, "w1");
    ok_as(&p, "lead", &["shutdown", "--to", "w1"]);
    let other = hook(&p, "w1", "T2", "session-start");
    assert!(other.as_ref().is_none_or(|v| v.get("continue").is_none()), "T2's session goes on: {other:?}");
    let mine = hook(&p, "w1", "T1", "session-start").expect("T1's session stops");
    assert_eq!(mine["continue"], false, "{mine}");
}

#[test]
fn an_expired_shutdown_never_stops_a_later_session() {
    let p = Project::new();
    let _d = p.serve();
    let sent = ok_as(&p, "lead", &["shutdown", "--to", "w1", "--expires-in", "1"]);
    let expires_at = sent["message"]["payload_json"]["expires_at"].as_str().expect("expires_at").to_string();
    let request = sent["request_id"].as_str().unwrap().to_string();
    wait_until(&expires_at);
    let next = hook(&p, "w1", "T9", "session-start");
    assert!(next.as_ref().is_none_or(|v| v.get("continue").is_none()), "the next session goes on: {next:?}");
    let open = p.inbox().args(["--agent", "w1", "requests", "--json"]).run().code(10).json();
    assert_eq!(open["requests"], json!([]), "no open request left: {open}");
    let all = ok_as(&p, "w1", &["requests", "--to", "w1", "--all"]);
    assert_eq!(all["requests"][0]["status"], "expired", "{all}");
    let approve = json!({"request_id": request}).to_string();
    fails(
        &p,
        &["--agent", "w1", "control", "--type", "shutdown_approved", "--payload", &approve],
        30,
        "invalid_transition",
    );
}

#[test]
fn a_shutdown_request_expires_after_five_minutes_by_default() {
    let p = Project::new();
    let _d = p.serve();
    let sent = ok_as(&p, "lead", &["shutdown", "--to", "w1"]);
    let created = humantime::parse_rfc3339(sent["message"]["created_at"].as_str().unwrap()).unwrap();
    let expires = humantime::parse_rfc3339(sent["message"]["payload_json"]["expires_at"].as_str().unwrap()).unwrap();
    assert_eq!(expires.duration_since(created).unwrap().as_secs(), 300);
}
