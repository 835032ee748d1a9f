//! `inbox mcp` driven by a real MCP client this project did not write: the official MCP
//! Rust SDK's client (`rmcp`), which spawns the real `inbox` binary and speaks MCP to it
//! over stdio, against the real daemon. Two sessions (backend and frontend) initialize,
//! list the tools, message each other, check their inboxes, and one waits for a reply
//! that the other sends.

use std::time::Duration;

use coord_tests::Project;
use serde_json::{Value, json};

use coord_tests::mcp_client::{LIMIT, Session, call, err, ok};

const TOOLS: [&str; 17] = [
    "ask",
    "check_inbox",
    "claim",
    "done",
    "fail",
    "fetch_work",
    "inbox_status",
    "list_agents",
    "release",
    "reply",
    "requests",
    "reserve",
    "respond",
    "search_messages",
    "send_message",
    "update",
    "wait_reply",
];

/// Start `inbox <args>` as an MCP server and initialize a client session with it.
async fn session(p: &Project, args: &[&str]) -> Session {
    session_with(p, args, &[]).await
}

/// [`session`], with these variables in the server's environment.
async fn session_with(p: &Project, args: &[&str], env: &[(&str, &str)]) -> Session {
    let cmd = env.iter().fold(p.inbox().args(args), |c, (k, v)| c.env(k, v));
    coord_tests::mcp_client::session(cmd.into_command()).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_sessions_message_each_other_and_wait_reply_wakes_on_the_reply() {
    let p = Project::new();
    let _d = p.serve();
    p.inbox().args(["peer", "link", "--task", "T-back", "--task", "T-front"]).run().ok();
    let back = session(&p, &["--agent", "backend", "mcp", "--task", "T-back"]).await;
    let front = session(&p, &["--agent", "frontend", "mcp", "--task", "T-front"]).await;

    // Initialize: who the server is and who it serves.
    let info = back.peer_info().expect("server info");
    assert_eq!(info.server_info.as_ref().map(|i| i.name.as_str()), Some("coordd-inbox"));
    assert!(info.instructions.as_deref().unwrap_or_default().contains("`backend`"), "{info:?}");
    assert!(info.capabilities.tools.is_some());

    // List tools: exactly the documented set, each described.
    let tools = tokio::time::timeout(LIMIT, back.list_all_tools()).await.unwrap().unwrap();
    let mut names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
    names.sort();
    assert_eq!(names, TOOLS);
    assert!(tools.iter().all(|t| t.description.as_deref().is_some_and(|d| !d.is_empty())));

    // Frontend -> backend: once through the peer link, once to the agent, urgently.
    let to_peer = ok(&front, "send_message", json!({"to_peer": true, "summary": "What does /users return?"})).await;
    let direct = ok(
        &front,
        "send_message",
        json!({"to": "backend", "summary": "Auth is broken on staging", "priority": "urgent", "body": "401 on login"}),
    )
    .await;
    let status = ok(&back, "inbox_status", json!({})).await;
    assert_eq!((status["pending"].as_u64(), status["urgent"].as_u64()), (Some(2), Some(1)), "{status}");

    // The backend checks its inbox: urgent first, each message once.
    let inbox = ok(&back, "check_inbox", json!({})).await;
    let got: Vec<&Value> = inbox["messages"].as_array().unwrap().iter().collect();
    assert_eq!(got.len(), 2, "{inbox}");
    assert_eq!(got[0]["message_id"], direct["message_id"]);
    assert_eq!(
        (&got[0]["priority"], &got[0]["body"], &got[0]["from"]),
        (&json!("urgent"), &json!("401 on login"), &json!("frontend"))
    );
    assert_eq!(got[1]["message_id"], to_peer["message_id"]);
    assert_eq!(got[1]["task_id"], "T-back");
    assert_eq!(ok(&back, "check_inbox", json!({})).await["count"], 0, "delivered once");

    // The backend takes the direct thread, gets blocked on it and asks.
    let thread = direct["thread_id"].as_str().unwrap().to_string();
    let work = ok(&back, "fetch_work", json!({})).await;
    assert!(work["threads"].as_array().unwrap().iter().any(|t| t["thread_id"] == thread.as_str()), "{work}");
    ok(&back, "claim", json!({"thread_id": thread})).await;
    let asked = ok(&back, "ask", json!({"thread_id": thread, "summary": "Which staging host?"})).await;
    assert_eq!(asked["thread_status"], "blocked");

    // A bounded wait with nothing to wake it returns the cursor to re-arm with.
    let idle = ok(&back, "wait_reply", json!({"thread_id": thread, "timeout_seconds": 1})).await;
    assert_eq!(idle["woke"], false);
    assert_eq!(idle["cursor"], asked["event_id"]);

    // Wait (re-armed at the cursor) while the frontend answers: the wait wakes on the reply.
    let cursor = idle["cursor"].clone();
    let wait = {
        let args = json!({"thread_id": thread, "after_event": cursor});
        let back = &back;
        async move { ok(back, "wait_reply", args).await }
    };
    let answer = async {
        ok(&front, "reply", json!({"thread_id": thread, "summary": "staging-2", "body": "the old one is gone"})).await
    };
    let (woke, replied) = tokio::join!(wait, answer);
    assert_eq!(woke["woke"], true, "{woke}");
    assert_eq!(woke["message"]["summary"], "staging-2");
    assert_eq!(woke["message"]["from"], "frontend");
    assert_eq!(woke["message"]["message_id"], replied["message_id"]);
    assert_eq!(replied["thread_status"], "in_progress", "an answer resumes the blocked thread");

    // Without a cursor, the next wait starts after the reply already returned.
    let again = ok(&back, "wait_reply", json!({"thread_id": thread, "timeout_seconds": 1})).await;
    assert_eq!((again["woke"].clone(), again["cursor"].clone()), (json!(false), woke["cursor"].clone()));

    let done = ok(&back, "done", json!({"thread_id": thread, "summary": "fixed the host"})).await;
    assert_eq!(done["thread_status"], "done");

    back.cancel().await.unwrap();
    front.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_are_tool_errors_with_the_coordd_code() {
    let p = Project::new();
    let _d = p.serve();
    let a = session(&p, &["--agent", "alpha", "mcp", "--task", "T1"]).await;
    let b = session(&p, &["--agent", "bravo", "mcp"]).await;
    let e = err(&b, "reserve", json!({"scope": "docs/**"})).await;
    assert_eq!(e["code"], "missing_task_id", "a reservation is for a task: {e}");

    assert_eq!(err(&a, "claim", json!({"thread_id": "thr_missing"})).await["code"], "not_found");
    let e = err(&a, "send_message", json!({"summary": "to nobody"})).await;
    assert_eq!(e["code"], "invalid_input", "{e}");
    assert!(e["message"].as_str().unwrap().contains("exactly one recipient"), "{e}");
    let e = err(&a, "send_message", json!({"to": "bravo", "summary": "x", "priority": "asap"})).await;
    assert_eq!(e["code"], "invalid_args");
    let e = err(&b, "send_message", json!({"to_peer": true, "summary": "x"})).await;
    assert!(e["message"].as_str().unwrap().contains("--task"), "a session without a task has no peer: {e}");
    let e = err(&a, "send_message", json!({"to_peer": true, "summary": "x"})).await;
    assert_eq!(e["code"], "not_found", "T1 has no linked peer: {e}");

    // Reservations: the second exclusive claim on an overlapping scope names the holder.
    let r = ok(&a, "reserve", json!({"scope": "src/api/**"})).await;
    assert_eq!((r["reservation"]["agent"].clone(), r["reservation"]["task_id"].clone()), (json!("alpha"), json!("T1")));
    let e = err(&b, "reserve", json!({"scope": "src/api/routes.rs", "task_id": "T2"})).await;
    assert_eq!(e["code"], "reservation_conflict", "{e}");
    assert!(e["message"].as_str().unwrap().contains("alpha"), "{e}");
    assert_eq!(err(&b, "release", json!({"scope": "src/api/**"})).await["code"], "release_forbidden");
    ok(&a, "release", json!({"scope": "src/api/**"})).await;
    ok(&b, "reserve", json!({"scope": "src/api/routes.rs", "task_id": "T2"})).await;

    p.inbox().args(["agent", "register", "--name", "alpha", "--role", "backend"]).run().ok();
    let agents = ok(&b, "list_agents", json!({})).await;
    assert_eq!(agents["agents"][0]["agent"], "alpha", "{agents}");

    // Arguments the schema does not allow are a tool error too.
    let r = call(&a, "claim", json!({"thread": "x"})).await;
    assert_eq!(r.is_error, Some(true), "{r:?}");
    let text = r.content.first().and_then(|c| c.as_text()).map(|t| t.text.clone()).unwrap_or_default();
    assert!(text.contains("unknown field"), "{text}");
    a.cancel().await.unwrap();
    b.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claim_renews_and_wait_reply_resumes_where_the_session_left_off() {
    let p = Project::new();
    let _d = p.serve();
    let lead = session(&p, &["--agent", "lead", "mcp"]).await;
    let worker = session(&p, &["--agent", "worker", "mcp"]).await;
    let sent = ok(&lead, "send_message", json!({"to": "worker", "summary": "Port the parser"})).await;
    let thread = sent["thread_id"].as_str().unwrap().to_string();

    // Claiming a thread you hold extends the lease: a blocked thread stays blocked.
    let first = ok(&worker, "claim", json!({"thread_id": thread})).await;
    assert_eq!(first["renewed"], false);
    ok(&worker, "ask", json!({"thread_id": thread, "summary": "Keep the old API?"})).await;
    let again = ok(&worker, "claim", json!({"thread_id": thread, "lease_seconds": 1800})).await;
    assert_eq!((again["renewed"].clone(), again["thread"]["status"].clone()), (json!(true), json!("blocked")));
    assert_eq!(err(&lead, "claim", json!({"thread_id": thread})).await["code"], "lease_conflict");

    // The lead answers; a wait from the send's cursor skips the lead's own answer.
    let answer = ok(&lead, "reply", json!({"thread_id": thread, "summary": "Yes"})).await;
    let own =
        ok(&lead, "wait_reply", json!({"thread_id": thread, "after_event": sent["event_id"], "timeout_seconds": 1}))
            .await;
    assert_eq!((own["woke"].clone(), own["cursor"].clone()), (json!(false), answer["event_id"].clone()), "{own}");

    // The worker's wait, with no cursor, starts after its ask: the answer already there wakes it.
    let woke = ok(&worker, "wait_reply", json!({"thread_id": thread})).await;
    assert_eq!((woke["woke"].clone(), woke["message"]["summary"].clone()), (json!(true), json!("Yes")), "{woke}");

    // The worker finishes; the lead's wait, with no cursor, resumes after what it saw.
    let done = ok(&worker, "done", json!({"thread_id": thread, "summary": "Ported"})).await;
    let result = ok(&lead, "wait_reply", json!({"thread_id": thread})).await;
    assert_eq!(result["woke"], true, "{result}");
    assert_eq!(result["message"]["message_id"], done["message_id"]);
    assert_eq!(result["message"]["kind"], "result");
    lead.cancel().await.unwrap();
    worker.cancel().await.unwrap();
}

/// A thread `worker` was sent, for a wait to watch.
async fn a_thread(p: &Project, worker: &str) -> String {
    let sent =
        p.inbox().json_flag().args(["send", "--from", "lead", "--to", worker, "--summary", "x"]).run().ok().json();
    sent["thread"]["thread_id"].as_str().expect("a thread").to_string()
}

/// A wait_reply asking for longer than the server's limit is cut to it, and says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wait_reply_longer_than_the_limit_says_it_was_cut() {
    let p = Project::new();
    let _d = p.serve();
    let thread = a_thread(&p, "worker").await;
    let s = session(&p, &["--agent", "worker", "mcp", "--wait-seconds", "1"]).await;
    let r = ok(&s, "wait_reply", json!({"thread_id": thread, "timeout_seconds": 30})).await;
    assert_eq!((&r["woke"], &r["waited_seconds"], &r["cut_to_seconds"]), (&json!(false), &json!(1), &json!(1)), "{r}");
    // Within the limit, nothing was cut and nothing is said.
    let within = ok(&s, "wait_reply", json!({"thread_id": thread, "timeout_seconds": 1})).await;
    assert!(within.get("cut_to_seconds").is_none(), "{within}");
    s.cancel().await.unwrap();
}

/// `COORD_MCP_WAIT_SECONDS` sets the limit of a server whose command line has none (as
/// orch dispatch registers it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn coord_mcp_wait_seconds_sets_the_wait_reply_limit() {
    let p = Project::new();
    let _d = p.serve();
    let thread = a_thread(&p, "worker").await;
    let s = session_with(&p, &["--agent", "worker", "mcp"], &[("COORD_MCP_WAIT_SECONDS", "1")]).await;
    let r = ok(&s, "wait_reply", json!({"thread_id": thread, "timeout_seconds": 30})).await;
    assert_eq!((&r["woke"], &r["waited_seconds"]), (&json!(false), &json!(1)), "{r}");
    s.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_survives_a_daemon_restart() {
    let p = Project::new();
    let d = p.serve();
    let s = session(&p, &["--agent", "worker-1", "--no-autostart", "mcp"]).await;
    assert_eq!(ok(&s, "check_inbox", json!({})).await["count"], 0);
    p.inbox().args(["send", "--from", "lead", "--to", "worker-1", "--summary", "hello"]).run().ok();
    drop(d);
    let e = err(&s, "check_inbox", json!({})).await;
    assert_eq!(e["code"], "daemon_unavailable", "{e}");
    let _d = p.serve();
    assert_eq!(ok(&s, "check_inbox", json!({})).await["count"], 1);
    s.cancel().await.unwrap();
}

#[test]
fn mcp_needs_an_identity() {
    let p = Project::new();
    let out = p.inbox().args(["mcp"]).run().code(30);
    assert!(out.stdout.is_empty(), "stdout is the protocol channel: {out:?}");
    assert!(out.stderr.contains("--agent"), "{out:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lead_session_lists_and_answers_requests() {
    let p = Project::new();
    let _d = p.serve();
    let perm = r#"{"request_id":"p1","tool_name":"Bash","input":{"command":"git push"}}"#;
    p.inbox()
        .args(["--agent", "w1", "control", "--type", "permission_request", "--to", "lead", "--payload", perm])
        .run()
        .ok();
    p.inbox().args(["--agent", "w1", "plan", "--plan", "step 1", "--to", "lead"]).run().ok();
    let lead = session(&p, &["--agent", "lead", "mcp"]).await;
    let open = ok(&lead, "requests", json!({})).await;
    let types: Vec<&str> = open["requests"].as_array().unwrap().iter().map(|r| r["type"].as_str().unwrap()).collect();
    assert_eq!(types, vec!["permission_request", "plan_approval_request"]);
    let plan_id = open["requests"][1]["request_id"].as_str().unwrap().to_string();
    let changed = json!({"command": "git push --dry-run"});
    let r = ok(&lead, "respond", json!({"request_id": "p1", "approve": true, "updated_input": changed})).await;
    assert_eq!(r["type"], "permission_response");
    let r = ok(&lead, "respond", json!({"request_id": plan_id, "approve": false, "feedback": "tests first"})).await;
    assert_eq!(r["type"], "plan_approval_response");
    assert_eq!(ok(&lead, "requests", json!({})).await["requests"], json!([]));
    let e = err(&lead, "respond", json!({"request_id": "p1", "approve": false})).await;
    assert_eq!(e["code"], "invalid_transition");

    // A worker session acknowledges a shutdown it was asked for.
    p.inbox().args(["--agent", "lead", "shutdown", "--to", "w1"]).run().ok();
    let w1 = session(&p, &["--agent", "w1", "mcp"]).await;
    let asked = ok(&w1, "requests", json!({})).await;
    let id = asked["requests"][0]["request_id"].as_str().unwrap().to_string();
    assert_eq!(ok(&w1, "respond", json!({"request_id": id, "approve": true})).await["type"], "shutdown_approved");
    let all = p.inbox().args(["--agent", "lead", "requests", "--from", "lead", "--all", "--json"]).run().ok().json();
    assert_eq!(all["requests"][0]["response"]["type"], "shutdown_approved");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_reply_survives_a_daemon_restart() {
    let p = Project::new();
    let d = p.serve();
    let worker = session(&p, &["--agent", "worker", "mcp"]).await;
    let sent = p.inbox().args(["send", "--from", "lead", "--to", "worker", "--summary", "Port it", "--json"]).run();
    let thread = sent.ok().json()["thread"]["thread_id"].as_str().unwrap().to_string();
    ok(&worker, "claim", json!({"thread_id": thread})).await;
    let asked = ok(&worker, "ask", json!({"thread_id": thread, "summary": "Which branch?"})).await;
    let wait = {
        let args = json!({"thread_id": thread, "after_event": asked["event_id"], "timeout_seconds": 40});
        let worker = &worker;
        async move { ok(worker, "wait_reply", args).await }
    };
    let restart_and_answer = async {
        // Once the wait is subscribed, the daemon dies; the answer's own call starts a new one.
        let t0 = std::time::Instant::now();
        while p.coordd().args(["status", "--json"]).run().json()["subscriptions"].as_u64().unwrap_or(0) == 0 {
            assert!(t0.elapsed() < LIMIT, "the wait never subscribed");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        d.kill9();
        p.inbox().args(["reply", "--from", "lead", "--thread", &thread, "--summary", "main"]).run().ok();
    };
    let (woke, ()) = tokio::join!(wait, restart_and_answer);
    assert_eq!(woke["woke"], true, "{woke}");
    assert_eq!(woke["message"]["summary"], "main");
    worker.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_messages_finds_ranked_hits_with_marked_snippets() {
    let p = Project::new();
    let _d = p.serve();
    let s = session(&p, &["--agent", "lead", "mcp"]).await;
    ok(
        &s,
        "send_message",
        json!({"to": "w1", "summary": "Indexing plan", "body": "We index messages off the send path."}),
    )
    .await;
    ok(&s, "send_message", json!({"to": "w2", "summary": "Lunch", "body": "pizza"})).await;
    let r = ok(&s, "search_messages", json!({"query": "index"})).await;
    assert_eq!(r["count"], 1, "{r}");
    assert_eq!(r["hits"][0]["summary"], "Indexing plan");
    assert!(r["hits"][0]["snippet"].as_str().unwrap().contains("**"), "{r}");
    let none = ok(&s, "search_messages", json!({"query": "index", "agent": "w2"})).await;
    assert_eq!(none["count"], 0, "filtered by agent: {none}");
    s.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn done_takes_artifacts_located_in_their_repository() {
    let p = Project::new();
    let repo = p.path().join("repo");
    std::fs::create_dir_all(repo.join("docs")).unwrap();
    coord_tests::git_in(&repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("docs/r.md"), "report\n").unwrap();
    coord_tests::git_in(&repo, &["add", "-A"]);
    coord_tests::git_in(&repo, &["-c", "user.email=t@e", "-c", "user.name=t", "commit", "-q", "-m", "r"]);
    let sent =
        p.inbox().args(["send", "--from", "lead", "--to", "worker", "--summary", "s", "--json"]).run().ok().json();
    let thread = sent["thread"]["thread_id"].as_str().unwrap().to_string();
    let worker = session(&p, &["--agent", "worker", "mcp"]).await;
    ok(&worker, "claim", json!({"thread_id": thread})).await;
    let path = repo.join("docs/r.md").display().to_string();
    let args = json!({"thread_id": thread, "summary": "done", "artifacts": [{"path": path, "kind": "report"}]});
    ok(&worker, "done", args).await;
    let show = p.inbox().args(["show", "--thread", &thread, "--json"]).run().ok().json();
    let artifact = &show["messages"][1]["artifacts"][0];
    assert_eq!(
        (artifact["path"].as_str(), artifact["kind"].as_str()),
        (Some("docs/r.md"), Some("report")),
        "{artifact}"
    );
    assert_eq!(artifact["metadata_json"]["branch"], "main");
    worker.cancel().await.unwrap();
}

/// Issue 20 item 1, through MCP: the answer `wait_reply` returns counts as delivered, so
/// `inbox_status` no longer counts it pending and `check_inbox` does not hand it again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_returned_by_wait_reply_is_delivered() {
    let p = Project::new();
    let _d = p.serve();
    let (thr, blocked) = coord_tests::blocked_task(&p, "w1", "Which id?");
    let worker = session(&p, &["--agent", "w1", "mcp", "--task", "T1"]).await;
    ok(&worker, "check_inbox", json!({})).await; // the task itself
    p.orch().args(["answer", "--run", "R1", "--task", "T1", "--summary", "A-42", "--json"]).run().ok();
    let woke = ok(&worker, "wait_reply", json!({"thread_id": thr, "after_event": blocked})).await;
    assert_eq!(woke["message"]["summary"], "A-42", "{woke}");
    let pending = coord_tests::ok(&p, &["--agent", "w1", "pending", "--task", "T1"]);
    assert_eq!(pending["pending"], 0, "{pending}");
    let checked = ok(&worker, "check_inbox", json!({})).await;
    assert!(!checked.to_string().contains("A-42"), "handed over once only: {checked}");
    worker.cancel().await.unwrap();
}

/// Issue 31 item 1, through MCP: a session that has no cursor of its own (a new `inbox mcp`
/// after the one that asked ended) waits after its agent's latest message in the thread,
/// so an answer given before the wait is returned.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wait_reply_in_a_new_session_sees_an_answer_given_before_it() {
    let p = Project::new();
    let _d = p.serve();
    let lead = session(&p, &["--agent", "lead", "mcp"]).await;
    let first = session(&p, &["--agent", "worker", "mcp"]).await;
    let sent = ok(&lead, "send_message", json!({"to": "worker", "summary": "Port the parser"})).await;
    let thread = sent["thread_id"].as_str().unwrap().to_string();
    ok(&first, "claim", json!({"thread_id": thread})).await;
    ok(&first, "ask", json!({"thread_id": thread, "summary": "Keep the old API?"})).await;
    first.cancel().await.unwrap();
    let answer = ok(&lead, "reply", json!({"thread_id": thread, "summary": "Yes"})).await;
    ok(&lead, "send_message", json!({"to": "someone", "summary": "a later event"})).await;
    let second = session(&p, &["--agent", "worker", "mcp"]).await;
    let woke = ok(&second, "wait_reply", json!({"thread_id": thread, "timeout_seconds": 60})).await;
    assert_eq!(woke["woke"], true, "{woke}");
    assert_eq!(woke["message"]["message_id"], answer["message_id"]);
    lead.cancel().await.unwrap();
    second.cancel().await.unwrap();
}
