//! Replies are bounded by bytes as well as by count (protocol §1.7): every list and read
//! method with large (1 MiB) items stops before its reply passes `MAX_REPLY_BYTES`, says
//! where to go on (`truncated`, `next_after`), and following the cursor returns every item
//! exactly once; the CLIs follow it, so users see everything. On the wire, through the
//! real daemon. (`events.list`'s own test is in protocol_doc.rs.)
#![cfg(unix)]

use std::io::BufRead;

use coord_proto::MAX_REPLY_BYTES;
use coord_tests::{Project, RawConn, ok};
use serde_json::{Value, json};

/// Items of this size: 20 of them are more than one reply may hold.
const BIG: usize = 1024 * 1024;
const ITEMS: usize = 20;

/// Call and return the result with the reply line's length, failing on an error.
fn call(c: &mut RawConn, method: &str, params: Value) -> (Value, usize) {
    c.send_line(json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string().as_bytes());
    let mut line = String::new();
    assert!(c.r.read_line(&mut line).unwrap() > 0, "connection closed");
    let r: Value = serde_json::from_str(&line).unwrap();
    assert!(r["result"].is_object(), "{method}: {:.300}", line);
    (r["result"].clone(), line.len())
}

/// Every page of a bounded list: each reply within the bound and non-empty, `truncated`
/// exactly when there is a `next_after`, each next page asked for with `cursor` set to
/// it. The items in order, and how many pages.
fn pages(c: &mut RawConn, method: &str, params: Value, list: &str, cursor: &str) -> (Vec<Value>, usize) {
    let (mut items, mut p, mut n) = (Vec::new(), params, 0);
    loop {
        let (r, size) = call(c, method, p.clone());
        n += 1;
        assert!(size <= MAX_REPLY_BYTES, "{method}: a reply of {size} bytes");
        let page = r[list].as_array().unwrap();
        assert!(!page.is_empty(), "{method}: an empty page");
        items.extend(page.iter().cloned());
        if r["truncated"] != true {
            assert_eq!(r["next_after"], Value::Null, "{method}: a cursor on the last page");
            return (items, n);
        }
        assert!(!r["next_after"].is_null(), "{method}: truncated with no cursor");
        p[cursor] = r["next_after"].clone();
    }
}

/// A thread from the lead to `w` of `ITEMS` messages of `BIG` bytes; its id.
fn thread_of_big_messages(c: &mut RawConn) -> String {
    let body = "x".repeat(BIG);
    let (sent, _) = call(c, "inbox.send", json!({"from": "lead", "to": "w", "summary": "m0", "body": body}));
    let thread = sent["thread"]["thread_id"].as_str().unwrap().to_string();
    for i in 1..ITEMS {
        let p = json!({"from": "lead", "to": "w", "thread_id": thread, "kind": "progress", "summary": format!("m{i}"), "body": body});
        call(c, "inbox.reply", p);
    }
    thread
}

fn summaries(items: &[Value]) -> Vec<String> {
    items.iter().map(|i| i["summary"].as_str().unwrap().to_string()).collect()
}

fn in_order(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("m{i}")).collect()
}

fn newest_first(n: usize) -> Vec<String> {
    in_order(n).into_iter().rev().collect()
}

#[test]
fn inbox_show_pages_a_thread_of_large_messages() {
    let p = Project::new();
    let d = p.serve();
    let mut c = RawConn::connect(&d.socket);
    let thread = thread_of_big_messages(&mut c);
    let (messages, n) = pages(&mut c, "inbox.show", json!({"thread_id": thread}), "messages", "after_event");
    assert_eq!(summaries(&messages), in_order(ITEMS), "every message once, in order");
    assert!(n >= 2, "20 MiB of messages in one reply");
}

#[test]
fn inbox_show_on_the_command_line_prints_every_message() {
    let p = Project::new();
    let d = p.serve();
    let thread = thread_of_big_messages(&mut RawConn::connect(&d.socket));
    let shown = ok(&p, &["show", "--thread", &thread]);
    assert_eq!(summaries(shown["messages"].as_array().unwrap()), in_order(ITEMS));
    assert_eq!(shown["truncated"], false);
}

#[test]
fn mail_list_pages_backwards_through_large_mail() {
    let p = Project::new();
    let d = p.serve();
    let mut c = RawConn::connect(&d.socket);
    thread_of_big_messages(&mut c);
    let (mail, n) = pages(&mut c, "mail.list", json!({"agent": "w", "limit": 500}), "mail", "before_event");
    assert_eq!(summaries(&mail), newest_first(ITEMS), "every copy once, newest first");
    assert!(n >= 2);
}

#[test]
fn inbox_mail_on_the_command_line_lists_every_copy() {
    let p = Project::new();
    let d = p.serve();
    thread_of_big_messages(&mut RawConn::connect(&d.socket));
    let mail = ok(&p, &["mail", "--agent", "w", "--limit", "500"]);
    assert_eq!(mail["mail"].as_array().unwrap().len(), ITEMS);
}

#[test]
fn view_timeline_pages_backwards_through_large_mail() {
    let p = Project::new();
    let d = p.serve();
    let mut c = RawConn::connect(&d.socket);
    thread_of_big_messages(&mut c);
    let (items, n) = pages(&mut c, "view.timeline", json!({"limit": 1000}), "items", "before_event");
    assert_eq!(summaries(&items), newest_first(ITEMS));
    assert!(n >= 2);
}

/// Run R1 with `ITEMS` tasks T0… whose bodies are `BIG` bytes.
fn run_of_big_tasks(c: &mut RawConn) {
    call(c, "orch.runCreate", json!({"run_id": "R1", "goal": "big"}));
    let body = "y".repeat(BIG);
    for i in 0..ITEMS {
        let p = json!({"run_id": "R1", "task_id": format!("T{i}"), "title": format!("m{i}"), "body": body, "kind": "thread"});
        call(c, "orch.taskAdd", p);
    }
}

fn titles(tasks: &[Value]) -> Vec<String> {
    tasks.iter().map(|t| t["title"].as_str().unwrap().to_string()).collect()
}

#[test]
fn orch_task_list_pages_large_tasks() {
    let p = Project::new();
    let d = p.serve();
    let mut c = RawConn::connect(&d.socket);
    run_of_big_tasks(&mut c);
    let (tasks, n) = pages(&mut c, "orch.taskList", json!({"run_id": "R1"}), "tasks", "after");
    assert_eq!(titles(&tasks), in_order(ITEMS));
    assert!(n >= 2);
}

#[test]
fn orch_run_show_stops_early_and_task_list_goes_on_from_its_cursor() {
    let p = Project::new();
    let d = p.serve();
    let mut c = RawConn::connect(&d.socket);
    run_of_big_tasks(&mut c);
    let (view, size) = call(&mut c, "orch.runShow", json!({"run_id": "R1"}));
    assert!(size <= MAX_REPLY_BYTES);
    assert_eq!(view["truncated"], true);
    let mut tasks = view["tasks"].as_array().unwrap().clone();
    let rest = json!({"run_id": "R1", "after": view["next_after"]});
    tasks.extend(pages(&mut c, "orch.taskList", rest, "tasks", "after").0);
    assert_eq!(titles(&tasks), in_order(ITEMS));
}

#[test]
fn orch_task_list_on_the_command_line_lists_every_task() {
    let p = Project::new();
    let d = p.serve();
    run_of_big_tasks(&mut RawConn::connect(&d.socket));
    let listed = p.orch().json_flag().args(["task", "list", "--run", "R1"]).run().ok().json();
    assert_eq!(titles(listed["tasks"].as_array().unwrap()), in_order(ITEMS));
    let shown = p.orch().json_flag().args(["run", "show", "--run", "R1"]).run().ok().json();
    assert_eq!(titles(shown["tasks"].as_array().unwrap()), in_order(ITEMS), "run show completes its tasks");
}

#[test]
fn control_requests_page_large_requests() {
    let p = Project::new();
    let d = p.serve();
    let mut c = RawConn::connect(&d.socket);
    let plan = "z".repeat(BIG);
    for i in 0..ITEMS {
        let payload = json!({"request_id": format!("plan-{i}"), "plan": plan});
        let p = json!({"from": "w", "to": "lead", "type": "plan_approval_request", "summary": format!("m{i}"), "payload": payload});
        call(&mut c, "control.send", p);
    }
    let (requests, n) = pages(&mut c, "control.requests", json!({"limit": 1000}), "requests", "after");
    assert_eq!(summaries(&requests), in_order(ITEMS), "open requests, oldest first, each once");
    assert!(n >= 2);
}

#[test]
fn a_message_larger_than_the_bound_comes_alone_and_whole() {
    let p = Project::new();
    let d = p.serve();
    let mut c = RawConn::connect(&d.socket);
    // As large as a request may carry: with the reply's other fields it passes the bound.
    let huge = "h".repeat(MAX_REPLY_BYTES - 8 * 1024);
    let (sent, _) = call(&mut c, "inbox.send", json!({"from": "lead", "to": "w", "summary": "m0", "body": huge}));
    let thread = sent["thread"]["thread_id"].as_str().unwrap().to_string();
    call(&mut c, "inbox.reply", json!({"from": "lead", "thread_id": thread, "kind": "progress", "summary": "m1"}));
    let (first, _) = call(&mut c, "inbox.show", json!({"thread_id": thread}));
    let alone = first["messages"].as_array().unwrap();
    assert_eq!(alone.len(), 1, "the large message comes alone");
    assert_eq!(alone[0]["body"].as_str().unwrap().len(), huge.len(), "and whole");
    assert_eq!(first["truncated"], true);
    let (rest, _) = call(&mut c, "inbox.show", json!({"thread_id": thread, "after_event": first["next_after"]}));
    assert_eq!(summaries(rest["messages"].as_array().unwrap()), ["m1"]);
    assert_eq!(rest["truncated"], false);
}

#[test]
fn mail_check_delivers_what_fits_and_the_rest_on_the_next_check() {
    let p = Project::new();
    let d = p.serve();
    let mut c = RawConn::connect(&d.socket);
    thread_of_big_messages(&mut c);
    let (mut delivered, mut checks) = (Vec::new(), 0);
    loop {
        let (r, size) = call(&mut c, "mail.check", json!({"agent": "w"}));
        assert!(size <= MAX_REPLY_BYTES, "a reply of {size} bytes");
        checks += 1;
        delivered.extend(r["messages"].as_array().unwrap().iter().cloned());
        if r["truncated"] != true {
            break;
        }
    }
    let mut got = summaries(&delivered);
    got.sort_by_key(|s| s[1..].parse::<usize>().unwrap());
    assert_eq!(got, in_order(ITEMS), "every queued message delivered once");
    assert!(checks >= 2, "20 MiB of mail in one check");
    let (again, _) = call(&mut c, "mail.check", json!({"agent": "w"}));
    assert_eq!(again["messages"], json!([]), "nothing left queued");
}

/// Threads are small (a subject is at most 1000 characters), so their lists reach the
/// bound only in the thousands: here the cursor itself is checked, page by page.
#[test]
fn inbox_list_and_fetch_continue_after_the_thread_their_cursor_names() {
    let p = Project::new();
    let d = p.serve();
    let mut c = RawConn::connect(&d.socket);
    for i in 0..5 {
        call(&mut c, "inbox.send", json!({"from": "lead", "to": "w", "summary": format!("t{i}")}));
    }
    for (method, params) in [("inbox.list", json!({"limit": 2})), ("inbox.fetch", json!({"agent": "w", "limit": 2}))] {
        let (all, _) = call(&mut c, method, json!({"agent": "w", "limit": 100}));
        let all: Vec<Value> = all["threads"].as_array().unwrap().iter().map(|t| t["thread_id"].clone()).collect();
        assert_eq!(all.len(), 5);
        let (mut seen, mut p) = (Vec::new(), params);
        loop {
            let (r, _) = call(&mut c, method, p.clone());
            let page = r["threads"].as_array().unwrap();
            seen.extend(page.iter().map(|t| t["thread_id"].clone()));
            if page.len() < 2 {
                break;
            }
            p["after"] = page.last().unwrap()["thread_id"].clone();
        }
        assert_eq!(seen, all, "{method}: pages after each cursor give every thread once, in order");
    }
    c.send_line(
        json!({"jsonrpc": "2.0", "id": 1, "method": "inbox.list", "params": {"after": "thr_none"}})
            .to_string()
            .as_bytes(),
    );
    assert_eq!(c.recv()["error"]["data"]["code"], "not_found", "a cursor naming no thread is refused");
}
