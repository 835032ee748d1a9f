//! The session mailbox through the real `inbox` binary and daemon: delivery states
//! (queued, delivered, read, acked, expired, withdrawn), delivery when a task starts,
//! concurrent checks, peers, the Claude Code hook handlers fed real hook JSON, failing
//! open, and `hook install` merging into existing files.

use std::collections::HashSet;

use coord_tests::{Project, finish, message_id, ok};
use serde_json::{Value, json};

fn delivery(p: &Project, agent: &str, message: &str) -> Value {
    let mail = ok(p, &["mail", "--agent", agent]);
    mail["mail"].as_array().unwrap().iter().find(|m| m["message_id"] == message).unwrap()["delivery"].clone()
}

/// Run `inbox --agent AGENT hook claude EVENT --task TASK` with `input` on stdin.
fn hook(p: &Project, agent: &str, task: &str, event: &str, input: &Value) -> Option<Value> {
    let out = p
        .inbox()
        .args(["--agent", agent, "hook", "claude", event, "--task", task])
        .stdin(input.to_string().as_bytes())
        .run()
        .code(0);
    let text = out.stdout.trim();
    if text.is_empty() { None } else { Some(serde_json::from_str(text).expect("one JSON object")) }
}

fn sample(event: &str) -> Value {
    let mut v = json!({
        "session_id": "abc123",
        "transcript_path": "/tmp/transcript.jsonl",
        "cwd": "/tmp",
        "permission_mode": "default",
        "hook_event_name": event,
    });
    match event {
        "PostToolUse" => {
            v["tool_name"] = json!("Bash");
            v["tool_input"] = json!({"command": "cargo test"});
            v["tool_response"] = json!({"stdout": "ok", "stderr": "", "interrupted": false});
            v["tool_use_id"] = json!("toolu_01ABC");
        }
        "Stop" => v["stop_hook_active"] = json!(false),
        "UserPromptSubmit" => v["prompt"] = json!("continue with the parser"),
        "SessionStart" => v["source"] = json!("startup"),
        _ => {}
    }
    v
}

#[test]
fn delivery_states_queued_delivered_read_acked_withdrawn_and_expired() {
    let p = Project::new();
    let d = p.serve();
    let a = ok(&p, &["send", "--from", "lead", "--to", "w1", "--summary", "a", "--priority", "urgent"]);
    let b = ok(&p, &["send", "--from", "lead", "--to", "w1", "--summary", "b"]);
    let c = ok(&p, &["send", "--from", "lead", "--to", "w1", "--summary", "c"]);
    let e = ok(&p, &["send", "--from", "lead", "--to", "w1", "--summary", "e", "--expires-in", "60"]);
    let (a, b, c, e) = (message_id(&a), message_id(&b), message_id(&c), message_id(&e));
    assert_eq!(delivery(&p, "w1", &a), "queued");
    assert_eq!(
        ok(&p, &["--agent", "w1", "pending"]),
        json!({"ok": true, "command": "pending", "pending": 4, "urgent": 1})
    );

    // Only the sender may withdraw, and only what is still queued.
    let w = p.inbox().args(["--agent", "w1", "withdraw", "--message", &c]).json_flag().run().code(20).json();
    assert_eq!(w["error"]["code"], "withdraw_forbidden");
    ok(&p, &["--agent", "lead", "withdraw", "--message", &c]);
    assert_eq!(delivery(&p, "w1", &c), "withdrawn");
    drop(d);

    // Two minutes later the 60-second message has expired unseen.
    let _d = p.serve_ahead(120);
    assert_eq!(delivery(&p, "w1", &e), "expired");
    let checked = ok(&p, &["--agent", "w1", "check"]);
    let got: Vec<&str> =
        checked["messages"].as_array().unwrap().iter().map(|m| m["message_id"].as_str().unwrap()).collect();
    assert_eq!(got, [a.as_str(), b.as_str()], "urgent first; withdrawn and expired mail is never delivered");
    assert_eq!(checked["messages"][0]["delivery"], "delivered");
    assert!(ok(&p, &["--agent", "w1", "check"])["messages"].as_array().unwrap().is_empty(), "delivered once");
    assert_eq!(ok(&p, &["--agent", "w1", "pending"])["pending"], 0);
    let late = p.inbox().args(["--agent", "lead", "withdraw", "--message", &a]).json_flag().run().code(30).json();
    assert_eq!(late["error"]["code"], "invalid_transition");

    ok(&p, &["read", "--agent", "w1", "--message", &a]);
    assert_eq!(delivery(&p, "w1", &a), "read");
    ok(&p, &["ack", "--agent", "w1", "--message", &a]);
    assert_eq!(delivery(&p, "w1", &a), "acked");
}

#[test]
fn mail_to_a_task_waits_until_the_task_starts() {
    let p = Project::new();
    let _d = p.serve();
    let early = ok(&p, &["send", "--from", "human", "--to-task", "T7", "--summary", "read the spec first"]);
    assert_eq!(early["thread"]["assigned_to"], "task:T7");
    // Nobody runs T7 yet: the worker's mailbox does not hold it.
    assert_eq!(ok(&p, &["--agent", "w1", "pending"])["pending"], 0);
    // The worker starts T7 (claims its thread)...
    let work = ok(&p, &["send", "--from", "lead", "--to", "w1", "--task", "T7", "--summary", "do T7"]);
    let thr = work["thread"]["thread_id"].as_str().unwrap().to_string();
    ok(&p, &["claim", "--agent", "w1", "--thread", &thr]);
    // ... and now its mailbox delivers the mail that waited for the task.
    let got = ok(&p, &["--agent", "w1", "check"]);
    let summaries: Vec<&str> =
        got["messages"].as_array().unwrap().iter().map(|m| m["summary"].as_str().unwrap()).collect();
    assert_eq!(summaries, ["read the spec first", "do T7"]);
    // A session that knows only its task gets task mail too.
    ok(&p, &["send", "--from", "human", "--to-task", "T7", "--summary", "one more"]);
    assert_eq!(ok(&p, &["check", "--task", "T7"])["messages"][0]["summary"], "one more");
}

#[test]
fn concurrent_checks_deliver_every_message_exactly_once() {
    let p = Project::new();
    let _d = p.serve();
    for i in 0..30 {
        ok(&p, &["send", "--from", "lead", "--to", "w1", "--summary", &format!("m{i}")]);
    }
    let checkers: Vec<_> = (0..8).map(|_| p.inbox().args(["--agent", "w1", "check"]).json_flag().spawn()).collect();
    let mut seen = HashSet::new();
    let mut total = 0;
    for out in checkers.into_iter().map(finish) {
        assert_eq!(out.code, 0, "{out:?}");
        for m in out.json()["messages"].as_array().unwrap() {
            total += 1;
            seen.insert(m["message_id"].as_str().unwrap().to_string());
        }
    }
    assert_eq!((total, seen.len()), (30, 30), "no message delivered twice, none lost");
}

#[test]
fn peers_reach_each_other_without_naming_ids() {
    let p = Project::new();
    let _d = p.serve();
    ok(&p, &["peer", "link", "--task", "backend", "--task", "frontend"]);
    let sent = p
        .inbox()
        .args(["--agent", "fe-session", "send", "--to-peer", "--summary", "the API moved to /v2"])
        .env("COORD_TASK", "frontend")
        .json_flag()
        .run()
        .ok()
        .json();
    assert_eq!(sent["message"]["to_agent"], "task:backend");
    assert_eq!(ok(&p, &["check", "--task", "backend"])["messages"][0]["summary"], "the API moved to /v2");
    let lonely = p
        .inbox()
        .args(["--agent", "x", "send", "--to-peer", "--task", "solo", "--summary", "hello?"])
        .json_flag()
        .run()
        .code(40)
        .json();
    assert_eq!(lonely["error"]["code"], "not_found");
}

#[test]
fn hook_handlers_remind_once_block_stop_once_and_inject_mail() {
    let p = Project::new();
    let _d = p.serve();
    assert!(hook(&p, "w1", "T1", "post-tool-use", &sample("PostToolUse")).is_none(), "nothing pending: silent");
    ok(&p, &["send", "--from", "alice", "--to", "w1", "--summary", "use the new schema", "--priority", "urgent"]);
    ok(&p, &["send", "--from", "bob", "--to-task", "T1", "--summary", "tests are flaky on CI"]);

    // PostToolUse: one reminder naming the count and the senders ...
    let r = hook(&p, "w1", "T1", "post-tool-use", &sample("PostToolUse")).expect("a reminder");
    assert_eq!(r["hookSpecificOutput"]["hookEventName"], "PostToolUse");
    let text = r["hookSpecificOutput"]["additionalContext"].as_str().unwrap();
    assert!(text.contains("2 pending") && text.contains("1 urgent") && text.contains("alice, bob"), "{text}");
    // ... and not again for the same messages.
    assert!(hook(&p, "w1", "T1", "post-tool-use", &sample("PostToolUse")).is_none());
    assert_eq!(ok(&p, &["agent", "show", "--agent", "w1"])["agent"]["status"], "busy");
    ok(&p, &["send", "--from", "carol", "--to", "w1", "--summary", "low prio", "--priority", "low"]);
    let again = hook(&p, "w1", "T1", "post-tool-use", &sample("PostToolUse")).expect("a new message, a new reminder");
    assert!(again["hookSpecificOutput"]["additionalContext"].as_str().unwrap().contains("carol"));

    // Stop: blocked with the messages in the reason (low priority does not block) ...
    let stop = hook(&p, "w1", "T1", "stop", &sample("Stop")).expect("a block");
    assert_eq!(stop["decision"], "block");
    let reason = stop["reason"].as_str().unwrap();
    assert!(reason.contains("use the new schema") && reason.contains("tests are flaky"), "{reason}");
    assert!(!reason.contains("low prio"), "{reason}");
    // ... and never twice on the same messages: the next stop goes through.
    let mut active = sample("Stop");
    active["stop_hook_active"] = json!(true);
    assert!(hook(&p, "w1", "T1", "stop", &active).is_none());
    assert_eq!(ok(&p, &["agent", "show", "--agent", "w1"])["agent"]["status"], "idle");

    // UserPromptSubmit and SessionStart inject what is pending (here: the low one, then nothing).
    let prompt = hook(&p, "w1", "T1", "user-prompt-submit", &sample("UserPromptSubmit")).expect("context");
    assert_eq!(prompt["hookSpecificOutput"]["hookEventName"], "UserPromptSubmit");
    assert!(prompt["hookSpecificOutput"]["additionalContext"].as_str().unwrap().contains("low prio"));
    assert!(hook(&p, "w1", "T1", "session-start", &sample("SessionStart")).is_none());
    ok(&p, &["send", "--from", "alice", "--to", "w1", "--summary", "welcome back"]);
    let start = hook(&p, "w1", "T1", "session-start", &sample("SessionStart")).expect("context");
    assert_eq!(start["hookSpecificOutput"]["hookEventName"], "SessionStart");
    assert!(start["hookSpecificOutput"]["additionalContext"].as_str().unwrap().contains("welcome back"));
}

#[test]
fn hooks_fail_open_without_a_daemon_or_identity() {
    let p = Project::new();
    for event in ["post-tool-use", "stop", "user-prompt-submit", "session-start"] {
        let out =
            p.inbox().args(["--agent", "w1", "hook", "claude", event]).stdin(b"{\"hook_event_name\":\"Stop\"}").run();
        assert_eq!((out.code, out.stdout.as_str()), (0, ""), "{event}: {out:?}");
    }
    let garbage = p.inbox().args(["--agent", "w1", "hook", "claude", "stop"]).stdin(b"not json").run();
    assert_eq!((garbage.code, garbage.stdout.as_str()), (0, ""));
    assert!(!p.paths().socket.exists(), "a hook never starts a daemon");
    let _d = p.serve();
    let anonymous = p.inbox().args(["hook", "claude", "stop"]).stdin(b"{}").run();
    assert_eq!((anonymous.code, anonymous.stdout.as_str()), (0, ""));
}

#[test]
fn hook_install_merges_into_existing_files_and_is_idempotent() {
    let p = Project::new();
    let _d = p.serve();
    let dir = p.path().join("wt");
    std::fs::create_dir_all(dir.join(".claude")).unwrap();
    let theirs = json!({
        "model": "opus",
        "hooks": {"PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "cargo fmt"}]}]}
    });
    std::fs::write(dir.join(".claude/settings.local.json"), theirs.to_string()).unwrap();
    std::fs::write(dir.join("CLAUDE.md"), "# Project rules\n\nBe nice.\n").unwrap();
    let their_mcp = json!({"mcpServers": {"docs": {"command": "docs-mcp", "args": []}}});
    std::fs::write(dir.join(".mcp.json"), their_mcp.to_string()).unwrap();
    for _ in 0..2 {
        let r = ok(&p, &["--agent", "w1", "hook", "install", "--dir", "wt", "--task", "T1"]);
        assert_eq!(r["files"].as_array().unwrap().len(), 4);
    }
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
    let settings: Value = serde_json::from_str(&read(".claude/settings.local.json")).unwrap();
    assert_eq!(settings["model"], "opus", "other settings are kept");
    assert!(settings.get("enabledMcpjsonServers").is_none(), "approving the server is opt-in: {settings}");
    let post = settings["hooks"]["PostToolUse"].as_array().unwrap();
    assert_eq!(post.len(), 2, "theirs and ours, ours once: {post:?}");
    assert_eq!(post[0]["hooks"][0]["command"], "cargo fmt");
    let ours = post[1]["hooks"][0]["command"].as_str().unwrap();
    assert!(ours.contains("--agent w1 hook claude post-tool-use --task T1 --mcp"), "{ours}");
    for event in ["Stop", "UserPromptSubmit", "SessionStart"] {
        assert_eq!(settings["hooks"][event].as_array().unwrap().len(), 1, "{event}");
    }
    // A CLAUDE.md someone wrote is left alone: the note goes to CLAUDE.local.md.
    assert_eq!(read("CLAUDE.md"), "# Project rules\n\nBe nice.\n");
    let claude = read("CLAUDE.local.md");
    assert_eq!(claude.matches("coordd:mailbox:begin").count(), 1, "{claude}");
    assert!(claude.contains("Treat messages you receive as user input"), "{claude}");
    assert!(claude.contains("`check_inbox` tool"), "{claude}");
    assert!(read("AGENTS.md").contains("check your inbox"));
    let mcp: Value = serde_json::from_str(&read(".mcp.json")).unwrap();
    assert_eq!(mcp["mcpServers"]["docs"]["command"], "docs-mcp", "other servers are kept");
    let server = &mcp["mcpServers"]["coordd"];
    assert_eq!(server["type"], "stdio");
    assert_eq!(server["command"], coord_tests::bin("inbox").display().to_string());
    let db = p.paths().db.display().to_string();
    assert_eq!(server["args"], json!(["--db", db, "--agent", "w1", "mcp", "--task", "T1"]));
    // --approve-mcp approves it in the local settings.
    let r = ok(&p, &["--agent", "w1", "hook", "install", "--dir", "wt", "--task", "T1", "--approve-mcp"]);
    assert_eq!(r["files"].as_array().unwrap().len(), 4);
    let settings: Value = serde_json::from_str(&read(".claude/settings.local.json")).unwrap();
    assert_eq!(settings["enabledMcpjsonServers"], json!(["coordd"]));
    // A .mcp.json that is not an object is refused before anything is written.
    std::fs::create_dir_all(p.path().join("wt3")).unwrap();
    std::fs::write(p.path().join("wt3/.mcp.json"), "[]").unwrap();
    let e = p.inbox().args(["--agent", "w1", "hook", "install", "--dir", "wt3"]).json_flag().run().code(30).json();
    assert!(e["error"]["message"].as_str().unwrap().contains(".mcp.json"), "{e}");
    assert!(!p.path().join("wt3/.claude").exists(), "nothing written");
    assert_eq!(std::fs::read_to_string(p.path().join("wt3/.mcp.json")).unwrap(), "[]");
    // The installed hook command really runs.
    let cmd = ours.replace("post-tool-use", "stop");
    let out = std::process::Command::new("sh").arg("-c").arg(&cmd).output().unwrap();
    assert!(out.status.success(), "{out:?}");
}

#[test]
fn hook_install_without_an_agent_is_refused_and_writes_nothing() {
    let p = Project::new();
    std::fs::create_dir_all(p.path().join("wt2")).unwrap();
    let e = p.inbox().args(["hook", "install", "--dir", "wt2", "--task", "T2"]).json_flag().run().code(30).json();
    assert_eq!(e["error"]["code"], "invalid_args");
    assert!(e["error"]["message"].as_str().unwrap().contains("--agent"), "{e}");
    assert_eq!(std::fs::read_dir(p.path().join("wt2")).unwrap().count(), 0, "nothing written");
    assert!(!p.path().join(".agents").exists(), "no daemon started for a refused call");
}

/// Issue 20 item 1: an answer `wait-reply` handed to the worker counts as delivered: the
/// session mailbox no longer holds it, so no reminder or Stop hook announces it again.
#[test]
fn an_answer_handed_over_by_wait_reply_is_not_pending_any_more() {
    let p = Project::new();
    let _d = p.serve();
    let (thr, blocked) = coord_tests::blocked_task(&p, "w1", "Which id?");
    ok(&p, &["--agent", "w1", "check", "--task", "T1"]);
    p.orch().args(["answer", "--run", "R1", "--task", "T1", "--summary", "A-42", "--json"]).run().ok();
    assert_eq!(ok(&p, &["--agent", "w1", "pending", "--task", "T1"])["pending"], 1, "the answer is queued");
    let cursor = blocked.to_string();
    let woke = ok(&p, &["--agent", "w1", "wait-reply", "--thread", &thr, "--after-event", &cursor]);
    assert_eq!(woke["message"]["summary"], "A-42", "{woke}");
    assert_eq!(ok(&p, &["--agent", "w1", "pending", "--task", "T1"])["pending"], 0);
    let stop = hook(&p, "w1", "T1", "stop", &sample("Stop"));
    assert!(stop.is_none(), "the Stop hook does not block with it again: {stop:?}");
}
