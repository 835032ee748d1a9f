//! The whole worker protocol through the real `inbox` binary, with the daemon started on
//! demand by the first call.

use coord_tests::{Project, finish, thread_id};

#[test]
fn the_worker_protocol_end_to_end_with_autostart() {
    let p = Project::new();
    let init = p.inbox().args(["init", "--json"]).run().ok().json();
    assert_eq!(init["ok"], true);
    assert_eq!(init["command"], "init");
    // SQLite keeps the project in .agents/coord.db; on a PostgreSQL store no file is made.
    assert_eq!(p.path().join(".agents/coord.db").is_file(), p.store_url().is_none());
    let pid = p.coordd().args(["status", "--json"]).run().ok().json()["pid"].clone();

    let sent = p
        .inbox()
        .args(["send", "--from", "leader", "--to", "backend-worker", "--subject", "Post CRUD", "--run", "R1"])
        .args(["--task", "T4", "--kind", "task", "--summary", "Implement post CRUD", "--json"])
        .run()
        .ok()
        .json();
    let thr = thread_id(&sent);
    assert!(thr.starts_with("thr_"));
    assert_eq!(sent["thread"]["status"], "pending");
    assert_eq!(sent["thread"]["run_id"], "R1");
    assert_eq!(sent["message"]["kind"], "task");

    let fetched =
        p.inbox().args(["fetch", "--agent", "backend-worker", "--status", "pending", "--json"]).run().ok().json();
    assert_eq!(fetched["threads"].as_array().unwrap().len(), 1);
    assert_eq!(fetched["threads"][0]["thread_id"], thr.as_str());

    let claim = p
        .inbox()
        .args(["claim", "--agent", "backend-worker", "--thread", &thr, "--lease-seconds", "900", "--json"])
        .run()
        .ok()
        .json();
    assert_eq!(claim["thread"]["status"], "claimed");
    assert_eq!(claim["lease"]["generation"], 1);
    assert!(claim["lease"]["lease_token"].as_str().unwrap().starts_with("lt_"));

    p.inbox()
        .args(["update", "--agent", "backend-worker", "--thread", &thr, "--status", "in_progress"])
        .args(["--summary", "Implementing post CRUD routes"])
        .run()
        .ok();
    let blocked = p
        .inbox()
        .args(["update", "--agent", "backend-worker", "--thread", &thr, "--status", "blocked"])
        .args(["--summary", "Need auth decision", "--payload-json", r#"{"question":"email/password?"}"#, "--json"])
        .run()
        .ok()
        .json();
    assert_eq!(blocked["thread"]["status"], "blocked");
    assert_eq!(blocked["message"]["kind"], "question");
    assert_eq!(blocked["message"]["payload_json"]["question"], "email/password?");
    let after = blocked["event_id"].as_i64().unwrap().to_string();

    let waiter = p
        .inbox()
        .args(["wait-reply", "--thread", &thr, "--after-event", &after, "--timeout-seconds", "600", "--json"])
        .spawn();
    let reply = p
        .inbox()
        .args(["reply", "--from", "leader", "--to", "backend-worker", "--thread", &thr, "--kind", "answer"])
        .args(["--summary", "Use email/password for MVP", "--body", "Use a simple credential flow.", "--json"])
        .run()
        .ok()
        .json();
    assert_eq!(reply["thread"]["status"], "in_progress", "an answer resumes a blocked thread");
    let woke = finish(waiter).ok().json();
    assert_eq!(woke["command"], "wait-reply");
    assert_eq!(woke["woke"], true);
    assert_eq!(woke["next_event_id"], reply["event_id"]);
    assert_eq!(woke["message"]["kind"], "answer");
    assert_eq!(woke["message"]["summary"], "Use email/password for MVP");
    assert_eq!(woke["message"]["body"], "Use a simple credential flow.");

    p.write("result.md", "# Result\nAll routes done.\n");
    let done = p
        .inbox()
        .args(["done", "--agent", "backend-worker", "--thread", &thr, "--summary", "Post CRUD implemented"])
        .args(["--body-file", "result.md", "--artifact", "result.md", "--artifact-kind", "report"])
        .args(["--artifact-metadata-json", r#"{"lines":2}"#, "--json"])
        .run()
        .ok()
        .json();
    assert_eq!(done["thread"]["status"], "done");
    assert_eq!(done["thread"]["lease"]["active"], false);

    let show = p.inbox().args(["show", "--thread", &thr, "--json"]).run().ok().json();
    let kinds: Vec<&str> = show["messages"].as_array().unwrap().iter().map(|m| m["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["task", "progress", "question", "answer", "result"]);
    let last = &show["messages"][4];
    assert_eq!(last["body"], "# Result\nAll routes done.\n");
    assert_eq!(last["artifacts"][0]["path"], "result.md");
    assert_eq!(last["artifacts"][0]["kind"], "report");
    assert_eq!(last["artifacts"][0]["metadata_json"]["lines"], 2);

    let text = p.inbox().args(["show", "--thread", &thr]).run().ok().stdout;
    assert!(text.contains("artifact [report] result.md"), "{text}");
    assert!(text.contains("status done"), "{text}");

    // Every call reused the daemon the first one started.
    let status = p.coordd().args(["status", "--json"]).run().ok().json();
    assert_eq!(status["pid"], pid);
    assert!(status["last_event_id"].as_i64().unwrap() >= 6);
}

#[test]
fn concurrent_first_calls_start_exactly_one_daemon() {
    let p = Project::new();
    let children: Vec<_> = (0..6)
        .map(|_| p.inbox().args(["send", "--from", "a", "--to", "b", "--summary", "hi", "--json"]).spawn())
        .collect();
    for c in children {
        finish(c).ok();
    }
    let status = p.coordd().args(["status", "--json"]).run().ok().json();
    let log = std::fs::read_to_string(p.path().join(".agents/coordd.log")).unwrap();
    assert_eq!(log.matches("coordd ready").count(), 1, "exactly one daemon started:\n{log}");
    assert_eq!(status["running"], true);
}

#[test]
fn unread_is_per_agent_and_show_marks_read() {
    let p = Project::new();
    let _d = p.serve();
    let sent =
        p.inbox().args(["send", "--from", "leader", "--to", "w1", "--summary", "hello", "--json"]).run().ok().json();
    let thr = thread_id(&sent);
    let unread = |agent: &str| p.inbox().args(["fetch", "--agent", agent, "--unread", "--json"]).run();
    assert_eq!(unread("w1").ok().json()["threads"].as_array().unwrap().len(), 1);
    assert_eq!(unread("w2").code, 10, "w2 has nothing");
    p.inbox().args(["--agent", "w1", "show", "--thread", &thr]).run().ok();
    assert_eq!(unread("w1").code, 10, "show marked it read");
    p.inbox().args(["send", "--from", "leader", "--to", "w1", "--thread", &thr, "--summary", "more"]).run().ok();
    assert_eq!(unread("w1").code, 0, "a new message is unread again");
}

#[test]
fn fetch_orders_by_priority_then_age_and_list_filters() {
    let p = Project::new();
    let _d = p.serve();
    for (subject, prio) in [("low one", "low"), ("normal one", "normal"), ("high one", "high"), ("high two", "high")] {
        p.inbox().args(["send", "--from", "lead", "--to", "w", "--summary", subject, "--priority", prio]).run().ok();
    }
    let got = p.inbox().args(["fetch", "--agent", "w", "--json"]).run().ok().json();
    let subjects: Vec<&str> =
        got["threads"].as_array().unwrap().iter().map(|t| t["subject"].as_str().unwrap()).collect();
    assert_eq!(subjects, ["high one", "high two", "normal one", "low one"]);
    let limited = p.inbox().args(["fetch", "--agent", "w", "--limit", "1", "--json"]).run().ok().json();
    assert_eq!(limited["threads"].as_array().unwrap().len(), 1);
    let by_creator =
        p.inbox().args(["list", "--created-by", "lead", "--status", "pending,claimed", "--json"]).run().ok().json();
    assert_eq!(by_creator["threads"].as_array().unwrap().len(), 4);
    let none = p.inbox().args(["list", "--assigned-to", "nobody", "--json"]).run().ok().json();
    assert!(none["threads"].as_array().unwrap().is_empty());
    let table = p.inbox().args(["list"]).run().ok().stdout;
    assert!(table.starts_with("THREAD"), "{table}");
}

#[test]
fn a_second_answer_to_a_task_that_is_no_longer_blocked_is_refused() {
    let p = Project::new();
    coord_tests::blocked_task(&p, "wkr", "diesel or sqlx?");
    let answer = ["answer", "--run", "R1", "--task", "T1", "--summary", "sqlx"];
    p.orch().args(answer).json_flag().run().ok();
    let again = p.orch().args(answer).json_flag().run().code(30).json();
    assert_eq!(again["error"]["code"], "invalid_transition", "{again}");
    let message = again["error"]["message"].as_str().unwrap();
    assert!(message.contains("in_progress, not blocked"), "{message}");
}
