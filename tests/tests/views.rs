//! The dashboard's read models (`view.*`) through the socket: what each returns, on either
//! backend (`on_postgres.rs` runs this suite again on PostgreSQL).

use coord_tests::{Project, RawConn, blocked_task, ok};
use serde_json::{Value, json};

fn call(c: &mut RawConn, method: &str, params: Value) -> Value {
    let v = c.call(json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}));
    assert!(v.get("error").is_none(), "{method}: {v}");
    v["result"].clone()
}

fn send(p: &Project, from: &str, to: &str, summary: &str) -> Value {
    ok(p, &["send", "--from", from, "--to", to, "--summary", summary])
}

fn summaries(items: &Value) -> Vec<&str> {
    items.as_array().unwrap().iter().map(|i| i["summary"].as_str().unwrap()).collect()
}

#[test]
fn the_timeline_lists_mail_newest_first_narrowed_and_paged() {
    let p = Project::new();
    let d = p.serve();
    send(&p, "lead", "w1", "first");
    let second = send(&p, "lead", "w2", "second");
    send(&p, "w2", "lead", "third");
    let mut c = RawConn::connect(&d.socket);

    let all = call(&mut c, "view.timeline", json!({}));
    assert_eq!(summaries(&all["items"]), ["third", "second", "first"]);
    assert!(all["last_event_id"].as_i64().unwrap() >= 3, "{all}");
    assert_eq!(all["items"][2]["delivery"], "queued", "{all}");

    // An agent's timeline: mail to it and mail from it.
    let w2 = call(&mut c, "view.timeline", json!({"agent": "w2"}));
    assert_eq!(summaries(&w2["items"]), ["third", "second"]);
    let thread = second["thread"]["thread_id"].as_str().unwrap();
    let one = call(&mut c, "view.timeline", json!({"thread_id": thread}));
    assert_eq!(summaries(&one["items"]), ["second"]);

    // Paging back from an item's event.
    let first_page = call(&mut c, "view.timeline", json!({"limit": 2}));
    assert_eq!(summaries(&first_page["items"]), ["third", "second"]);
    let before = first_page["items"][1]["event_id"].clone();
    let next = call(&mut c, "view.timeline", json!({"limit": 2, "before_event": before}));
    assert_eq!(summaries(&next["items"]), ["first"]);
}

#[test]
fn the_timeline_shows_a_delivered_copy_as_delivered() {
    let p = Project::new();
    let d = p.serve();
    send(&p, "lead", "w1", "hello");
    ok(&p, &["check", "--agent", "w1"]);
    let mut c = RawConn::connect(&d.socket);
    let v = call(&mut c, "view.timeline", json!({"agent": "w1"}));
    assert_eq!(v["items"][0]["delivery"], "delivered", "{v}");
}

#[test]
fn the_agents_view_counts_pending_mail_and_held_threads() {
    let p = Project::new();
    let d = p.serve();
    let (thread, _) = blocked_task(&p, "w1", "Which schema?");
    p.inbox().args(["send", "--from", "lead", "--to", "w1", "--summary", "now", "--priority", "urgent"]).run().ok();
    let mut c = RawConn::connect(&d.socket);
    let v = call(&mut c, "view.agents", json!({}));
    let w1 = v["agents"].as_array().unwrap().iter().find(|a| a["agent"]["agent_id"] == "w1").cloned();
    let w1 = w1.unwrap_or_else(|| panic!("w1 in {v}"));
    assert_eq!(w1["threads"][0]["thread_id"], thread, "{w1}");
    assert_eq!(w1["threads"][0]["status"], "blocked", "{w1}");
    assert!(w1["urgent"].as_u64().unwrap() >= 1, "{w1}");
    assert!(w1["pending"].as_u64().unwrap() >= w1["urgent"].as_u64().unwrap(), "{w1}");
}

#[test]
fn the_run_view_names_the_worker_and_the_blocking_question() {
    let p = Project::new();
    let d = p.serve();
    let (thread, _) = blocked_task(&p, "w1", "Which schema?");
    let mut c = RawConn::connect(&d.socket);
    let v = call(&mut c, "view.run", json!({"run_id": "R1"}));
    let t = &v["tasks"][0];
    assert_eq!((t["worker"].as_str(), t["thread_id"].as_str()), (Some("w1"), Some(thread.as_str())), "{v}");
    assert_eq!(t["question"]["summary"], "Which schema?", "{v}");
    let unknown = c.call(json!({"jsonrpc": "2.0", "id": 2, "method": "view.run", "params": {"run_id": "nope"}}));
    assert_eq!(unknown["error"]["data"]["code"], "not_found", "{unknown}");
}

#[test]
fn the_agents_view_lists_a_failed_task_until_it_is_retried() {
    let p = Project::new();
    let d = p.serve();
    let orch = |args: &[&str]| p.orch().args(args).json_flag().run().ok().json();
    orch(&["run", "create", "--goal", "G", "--id", "R1"]);
    orch(&["task", "add", "--run", "R1", "--id", "T1", "--title", "Schema", "--kind", "thread"]);
    let dispatched = orch(&["dispatch", "--run", "R1", "--task", "T1", "--to", "wkr"]);
    let thr = dispatched["dispatches"][0]["thread_id"].as_str().unwrap().to_string();
    ok(&p, &["claim", "--agent", "wkr", "--thread", &thr]);
    ok(&p, &["fail", "--agent", "wkr", "--thread", &thr, "--summary", "tests do not build"]);
    let mut c = RawConn::connect(&d.socket);
    let failed_of = |c: &mut RawConn, agent: &str| {
        let v = call(c, "view.agents", json!({}));
        let a = v["agents"].as_array().unwrap().iter().find(|a| a["agent"]["agent_id"] == agent).cloned();
        a.unwrap_or_else(|| panic!("{agent} in {v}"))["failed_tasks"].clone()
    };
    let failed = failed_of(&mut c, "wkr");
    assert_eq!(failed.as_array().unwrap().len(), 1, "{failed}");
    assert_eq!(
        (&failed[0]["thread_id"], &failed[0]["run_id"], &failed[0]["task_id"], &failed[0]["status"]),
        (&json!(thr), &json!("R1"), &json!("T1"), &json!("failed"))
    );

    // Retried to another worker: the task no longer stands failed on wkr's attempt.
    orch(&["retry", "--run", "R1", "--task", "T1", "--to", "wkr-2"]);
    assert_eq!(failed_of(&mut c, "wkr"), json!([]));
}
