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

// Lists of small items: a path, a peer, an attempt, a worktree, a council group. Reaching
// 16 MiB of them takes tens of thousands, so all but `reservations.check` (whose conflicts
// multiply paths by reservations) are paged by a daemon whose bound is lowered to 1 byte
// (`COORDD_REPLY_BUDGET_BYTES`, a testing aid): every page then holds one item.

/// A daemon whose reply bound is 1 byte: each page of a list holds one item.
fn one_item_per_page(p: &Project) -> coord_tests::Daemon {
    p.serve_with(&[], &[("COORDD_REPLY_BUDGET_BYTES", "1")])
}

fn orch(p: &Project, args: &[&str]) -> Value {
    p.orch().json_flag().args(args).run().ok().json()
}

#[test]
fn reservations_check_pages_the_conflicts_of_many_paths() {
    let p = Project::new();
    let d = p.serve();
    let mut c = RawConn::connect(&d.socket);
    call(&mut c, "reservations.reserve", json!({"agent": "a", "scope": "src/**", "task_id": "T1"}));
    // Each conflict repeats the reservation (about 300 bytes): 80,000 pass 16 MiB.
    let paths: Vec<String> = (0..80_000).map(|i| format!("src/f{i}.rs")).collect();
    let (conflicts, n) =
        pages(&mut c, "reservations.check", json!({"agent": "b", "paths": paths}), "conflicts", "offset");
    let got: Vec<&str> = conflicts.iter().map(|x| x["path"].as_str().unwrap()).collect();
    assert_eq!(got, paths, "every conflicting path once, in the order asked");
    assert!(n >= 2, "80,000 conflicts in one reply");
}

#[test]
fn peers_list_and_peers_link_page_many_peers() {
    let p = Project::new();
    let d = one_item_per_page(&p);
    let mut c = RawConn::connect(&d.socket);
    for i in 0..4 {
        let (linked, _) = call(&mut c, "peers.link", json!({"task_id": "T", "peer_task_id": format!("P{i}")}));
        assert_eq!(linked["peers"], json!(["P0"]), "peers.link answers with the first page");
        assert_eq!(linked["truncated"], i > 0);
    }
    let (peers, n) = pages(&mut c, "peers.list", json!({"task_id": "T"}), "peers", "after");
    assert_eq!(peers, ["P0", "P1", "P2", "P3"]);
    assert_eq!(n, 4);
}

#[test]
fn orch_task_show_pages_attempts_and_the_command_line_shows_them_all() {
    let p = Project::new();
    let d = one_item_per_page(&p);
    orch(&p, &["run", "create", "--goal", "g", "--id", "R1"]);
    orch(&p, &["task", "add", "--run", "R1", "--id", "T1", "--title", "t", "--kind", "thread", "--assign-to", "w"]);
    let mut thread = orch(&p, &["dispatch", "--run", "R1", "--task", "T1"])["dispatches"][0]["thread_id"].clone();
    for _ in 0..2 {
        let t = thread.as_str().unwrap().to_string();
        p.inbox().args(["claim", "--agent", "w", "--thread", &t]).run().ok();
        p.inbox().args(["fail", "--agent", "w", "--thread", &t, "--summary", "no"]).run().ok();
        thread = orch(&p, &["retry", "--run", "R1", "--task", "T1"])["dispatches"][0]["thread_id"].clone();
    }
    let mut c = RawConn::connect(&d.socket);
    let (attempts, n) =
        pages(&mut c, "orch.taskShow", json!({"run_id": "R1", "task_id": "T1"}), "attempts", "after_attempt");
    let numbers: Vec<u64> = attempts.iter().map(|a| a["attempt"].as_u64().unwrap()).collect();
    assert_eq!((numbers, n), (vec![1, 2, 3], 3));
    let shown = orch(&p, &["task", "show", "--run", "R1", "--task", "T1"]);
    assert_eq!(shown["attempts"].as_array().unwrap().len(), 3, "orch task show follows the pages");
    assert_eq!(shown["truncated"], false);
}

/// A git project with run R1 of two independent code tasks, both dispatched (two worktrees).
fn two_worktrees(p: &Project) {
    coord_tests::init_repo(p);
    orch(p, &["run", "create", "--goal", "g", "--id", "R1"]);
    for t in ["T1", "T2"] {
        orch(p, &["task", "add", "--run", "R1", "--id", t, "--title", t, "--assign-to", "w"]);
    }
    orch(p, &["dispatch", "--run", "R1", "--all-ready"]);
}

#[test]
fn orch_worktree_list_pages_worktrees() {
    let p = Project::new();
    let d = one_item_per_page(&p);
    two_worktrees(&p);
    let mut c = RawConn::connect(&d.socket);
    let (listed, n) = pages(&mut c, "orch.worktreeList", json!({}), "worktrees", "after");
    let tasks: Vec<&str> = listed.iter().map(|w| w["task_id"].as_str().unwrap()).collect();
    assert_eq!((tasks, n), (vec!["T1", "T2"], 2));
    let cli = orch(&p, &["worktree", "list"]);
    assert_eq!(cli["worktrees"].as_array().unwrap().len(), 2, "orch worktree list follows the pages");
}

#[test]
fn orch_worktree_prune_prunes_everything_and_reports_what_fits_with_counts() {
    let p = Project::new();
    let _d = one_item_per_page(&p);
    two_worktrees(&p);
    let listed = orch(&p, &["worktree", "list"]);
    for w in listed["worktrees"].as_array().unwrap() {
        let thread = orch(&p, &["task", "show", "--run", "R1", "--task", w["task_id"].as_str().unwrap()]);
        let thread = thread["attempts"][0]["thread_id"].as_str().unwrap().to_string();
        p.inbox().args(["claim", "--agent", "w", "--thread", &thread]).run().ok();
        p.inbox().args(["fail", "--agent", "w", "--thread", &thread, "--summary", "no"]).run().ok();
    }
    let pruned = orch(&p, &["worktree", "prune", "--run", "R1"]);
    assert_eq!((pruned["removed_count"].as_u64(), pruned["kept_count"].as_u64()), (Some(2), Some(0)));
    assert_eq!(pruned["removed"].as_array().unwrap().len(), 1, "the report holds what fits");
    assert_eq!(pruned["truncated"], true);
    for w in listed["worktrees"].as_array().unwrap() {
        assert!(!std::path::Path::new(w["path"].as_str().unwrap()).exists(), "both were removed");
    }
}

#[test]
fn orch_council_show_pages_groups_and_council_report_shows_them_all() {
    let p = Project::new();
    let d = one_item_per_page(&p);
    orch(&p, &["run", "create", "--goal", "review", "--id", "R1"]);
    let council = orch(&p, &["council", "start", "--run", "R1", "--topic", "API", "--reviewers", "r1"]);
    let thread = council["members"][0]["brainstorm_thread_id"].as_str().unwrap().to_string();
    let cursor = p.coordd().args(["status", "--json"]).run().ok().json()["last_event_id"].to_string();
    let recs = r#"{"recommendations":[{"title":"A"},{"title":"B"},{"title":"C"}]}"#;
    p.inbox().args(["claim", "--agent", "r1", "--thread", &thread]).run().ok();
    p.inbox().args(["done", "--agent", "r1", "--thread", &thread, "--summary", "s", "--payload-json", recs]).run().ok();
    let voting = p.orch().args(["--json", "wait", "--run", "R1", "--after-event", &cursor]).run().ok().json();
    assert_eq!(voting["event"]["event_type"], "council.voting");
    let mut c = RawConn::connect(&d.socket);
    let (groups, n) =
        pages(&mut c, "orch.councilShow", json!({"run_id": "R1", "council_id": "C1"}), "groups", "after_group");
    let titles: Vec<&str> = groups.iter().map(|g| g["title"].as_str().unwrap()).collect();
    assert_eq!((titles, n), (vec!["A", "B", "C"], 3));
    let report = orch(&p, &["council", "report", "--run", "R1", "--council", "C1"]);
    assert_eq!(report["groups"].as_array().unwrap().len(), 3, "orch council report follows the pages");
}
