//! Permission gating through the real hook process: Claude Code's hook JSON in, its
//! decision JSON out. An approver (a client subscribed to permission requests) allows,
//! denies or changes the input; no answer in time, or no daemon, means no decision; a
//! call no rule gates never touches the daemon. Also the shutdown and idle flows through
//! the other hooks, and what `hook install` registers.
#![cfg(unix)]

use std::os::unix::net::UnixListener;
use std::time::Duration;

use coord_client::Client;
use coord_proto::types::*;
use coord_tests::{Out, Project, answer_permission, ok_as, orch_wait};
use serde_json::{Value, json};

const LIMIT: Duration = Duration::from_secs(60);

/// A project whose policy gates `git push` for every agent, approved by `lead`.
fn gated() -> (Project, coord_tests::Daemon) {
    let p = Project::new();
    let d = p.serve();
    ok_as(&p, "lead", &["policy", "lead", "lead"]);
    ok_as(&p, "lead", &["policy", "gate", "Bash(git push*)"]);
    (p, d)
}

/// What Claude Code sends a PreToolUse hook (the fields of its hooks reference).
fn pre_tool_use(command: &str, cwd: &std::path::Path) -> Value {
    json!({
        "session_id": "sess-1", "transcript_path": "/tmp/t.jsonl", "cwd": cwd, "permission_mode": "default",
        "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_use_id": "toolu_01ABC",
        "tool_input": {"command": command, "description": "Push the branch"}
    })
}

/// Run the hook in a thread (it may wait for an approver).
fn spawn_hook(p: &Project, event: &str, input: &Value, extra: &[&str]) -> std::thread::JoinHandle<Out> {
    let mut args = vec!["--agent", "w1", "hook", "claude", event];
    args.extend_from_slice(extra);
    let run = p.inbox().args(args).stdin(input.to_string().as_bytes());
    std::thread::spawn(move || run.run())
}

/// Wait for the next permission request to `lead` after `after`, and answer it.
async fn approve(c: &Client, after: i64, answer: Value) -> Message {
    answer_permission(c, "lead", after, answer).await
}

async fn decide(answer: Value) -> (Value, Message) {
    decide_on("git push origin main", answer).await
}

/// The hook's decision for the command `line` when the lead gives `answer`, and the request.
async fn decide_on(line: &str, answer: Value) -> (Value, Message) {
    let (p, _d) = gated();
    let c = p.client().await;
    let after = c.server_info().last_event_id;
    let hook = spawn_hook(&p, "pre-tool-use", &pre_tool_use(line, p.path()), &[]);
    let request = approve(&c, after, answer).await;
    let out = hook.join().unwrap().ok();
    (out.json(), request)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approved_call_is_allowed_and_the_request_carries_the_call() {
    let (decision, request) = decide(json!({"approved": true, "reason": "ship it"})).await;
    assert_eq!(
        decision,
        json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow",
            "permissionDecisionReason": "Approved by lead: ship it"}})
    );
    assert_eq!(request.from_agent, "w1");
    let r = &request.payload_json;
    assert_eq!((r["tool_name"].as_str(), r["tool_use_id"].as_str()), (Some("Bash"), Some("toolu_01ABC")));
    assert_eq!(r["input"]["command"], "git push origin main");
    assert_eq!(r["description"], "Push the branch");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_denied_call_is_denied_with_the_reason() {
    let (decision, _) = decide(json!({"approved": false, "reason": "no pushes on Fridays"})).await;
    assert_eq!(decision["hookSpecificOutput"]["permissionDecision"], "deny");
    assert_eq!(decision["hookSpecificOutput"]["permissionDecisionReason"], "Denied by lead: no pushes on Fridays");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approver_can_change_the_input() {
    let changed = json!({"command": "git push --dry-run origin main", "description": "dry run"});
    let (decision, _) = decide(json!({"approved": true, "updated_input": changed})).await;
    assert_eq!(decision["hookSpecificOutput"]["permissionDecision"], "allow");
    assert_eq!(decision["hookSpecificOutput"]["updatedInput"], changed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_permission_request_hook_answers_in_its_own_shape() {
    let (p, _d) = gated();
    let c = p.client().await;
    let after = c.server_info().last_event_id;
    let mut input = pre_tool_use("git push", p.path());
    input["hook_event_name"] = json!("PermissionRequest");
    input["permission_suggestions"] = json!([]);
    let hook = spawn_hook(&p, "permission-request", &input, &[]);
    approve(&c, after, json!({"approved": false, "reason": "ask me tomorrow"})).await;
    assert_eq!(
        hook.join().unwrap().ok().json(),
        json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
            "decision": {"behavior": "deny", "message": "Denied by lead: ask me tomorrow"}}})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_no_answer_in_time_there_is_no_decision_and_the_request_is_withdrawn() {
    let (p, _d) = gated();
    ok_as(&p, "lead", &["policy", "timeout", "1"]);
    let out = spawn_hook(&p, "pre-tool-use", &pre_tool_use("git push", p.path()), &[]).join().unwrap().ok();
    assert_eq!(out.stdout.trim(), "", "no decision: Claude Code's own permission flow applies");
    assert!(out.stderr.contains("no answer from lead within 1 s"), "{}", out.stderr);
    let all = ok_as(&p, "lead", &["requests", "--all"]);
    assert_eq!(all["requests"][0]["status"], "cancelled", "{all}");
    // The hook's own flag overrides the policy's timeout.
    let out = spawn_hook(&p, "pre-tool-use", &pre_tool_use("git push", p.path()), &["--timeout-seconds", "2"]);
    assert!(out.join().unwrap().ok().stderr.contains("within 2 s"));
}

/// Issue 32: the launch bridge runs Claude Code in `bypassPermissions` mode, whose own flow
/// runs every call unasked; a gated call there that no one answers in time is denied, not
/// left to that flow (the worker ran its gated command by waiting the approver out).
#[test]
fn in_a_bypass_permissions_session_an_unanswered_gated_call_is_denied() {
    let (p, _d) = gated();
    ok_as(&p, "lead", &["policy", "timeout", "1"]);
    let mut input = pre_tool_use("git push", p.path());
    input["permission_mode"] = json!("bypassPermissions");
    let out = spawn_hook(&p, "pre-tool-use", &input, &[]).join().unwrap().ok();
    let d = &out.json()["hookSpecificOutput"];
    assert_eq!(d["permissionDecision"], "deny", "{}", out.stdout);
    let why = d["permissionDecisionReason"].as_str().unwrap();
    assert!(why.contains("needs an approval") && why.contains("no answer from lead within 1 s"), "{why}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_no_daemon_a_gated_call_gets_no_decision() {
    let (p, d) = gated();
    d.kill9();
    let out = spawn_hook(&p, "pre-tool-use", &pre_tool_use("git push", p.path()), &[]).join().unwrap().ok();
    assert_eq!(out.stdout.trim(), "");
    assert!(out.stderr.contains("not running"), "{}", out.stderr);
    let refused = std::os::unix::net::UnixStream::connect(p.paths().socket).is_err();
    assert!(refused, "the hook never starts a daemon");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_no_rule_gates_passes_without_touching_the_daemon() {
    let (p, d) = gated();
    let socket = p.paths().socket;
    d.signal("TERM");
    // Something that records every connection listens where the daemon would.
    let listener = UnixListener::bind(&socket).unwrap();
    listener.set_nonblocking(true).unwrap();
    for input in [pre_tool_use("git status", p.path()), json!({"tool_name": "Read", "tool_input": {"file_path": "x"}})]
    {
        let out = spawn_hook(&p, "pre-tool-use", &input, &[]).join().unwrap().ok();
        assert_eq!(out.stdout.trim(), "");
    }
    assert!(listener.accept().is_err(), "a non-gated call connected to the daemon");
    // A gated one does connect (and, with nobody answering the handshake, decides nothing).
    let out = spawn_hook(&p, "pre-tool-use", &pre_tool_use("git push", p.path()), &[]).join().unwrap().ok();
    assert_eq!(out.stdout.trim(), "");
    assert!(listener.accept().is_ok(), "a gated call must ask the daemon");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shutdown_request_stops_the_session_after_the_hook_approves_it() {
    let p = Project::new();
    let _d = p.serve();
    let c = p.client().await;
    let after = c.server_info().last_event_id;
    let lead = p.inbox().args([
        "--agent",
        "lead",
        "shutdown",
        "--to",
        "w1",
        "--reason",
        "rebasing",
        "--wait",
        "--timeout-seconds",
        "60",
        "--json",
    ]);
    let lead = std::thread::spawn(move || lead.run());
    // The request is stored before the worker's next hook runs.
    let filter = EventFilter {
        after_event: Some(after),
        to: Some("w1".into()),
        message_types: vec!["shutdown_request".into()],
        ..Default::default()
    };
    c.subscribe(filter).await.unwrap().next_within(Some(LIMIT)).await.unwrap().expect("request");
    let out = spawn_hook(&p, "post-tool-use", &json!({"hook_event_name": "PostToolUse"}), &[]).join().unwrap().ok();
    assert_eq!(out.json(), json!({"continue": false, "stopReason": "Shutdown requested by lead: rebasing"}));
    let answered = lead.join().unwrap().ok().json();
    assert_eq!(answered["answer"]["type"], "shutdown_approved", "{answered}");
    assert_eq!(answered["request"]["message"]["payload_json"]["reason"], "rebasing");
    // Answered once: the next hook has nothing to stop for.
    let out = spawn_hook(&p, "post-tool-use", &json!({}), &[]).join().unwrap().ok();
    assert!(!out.stdout.contains("\"continue\""), "{}", out.stdout);
}

/// Run R1 (led by `lead`) with w1's thread for T1, which w1 claims and ends with `verb`
/// (`done` or `fail`); then w1's session stops. The stop hook's output, and the event
/// `orch wait` wakes on after that.
fn session_stops_after(verb: &str) -> (String, serde_json::Value) {
    let p = Project::new();
    let _d = p.serve();
    p.orch().args(["run", "create", "--id", "R1", "--goal", "g", "--created-by", "lead", "--json"]).run().ok();
    let v = ok_as(&p, "lead", &["send", "--to", "w1", "--run", "R1", "--task", "T1", "--summary", "do it"]);
    let thread = v["thread"]["thread_id"].as_str().unwrap().to_string();
    ok_as(&p, "w1", &["claim", "--thread", &thread]);
    let cursor = ok_as(&p, "w1", &[verb, "--thread", &thread, "--summary", "over"])["event_id"].as_i64().unwrap();
    ok_as(&p, "w1", &["check"]); // the task's own mail, read
    let stop = json!({"hook_event_name": "Stop", "stop_hook_active": false});
    let out = spawn_hook(&p, "stop", &stop, &["--task", "T1", "--run", "R1"]).join().unwrap().ok();
    (out.stdout, orch_wait(&p, "R1", cursor))
}

#[test]
fn the_stop_hook_tells_the_lead_the_session_went_idle() {
    let (stdout, v) = session_stops_after("done");
    assert_eq!(stdout.trim(), "", "nothing to block the stop");
    let m = &v["event"]["message"];
    assert_eq!(
        (m["type"].as_str(), m["from_agent"].as_str(), m["to_agent"].as_str()),
        (Some("idle_notification"), Some("w1"), Some("lead"))
    );
    assert_eq!(
        m["payload_json"],
        json!({"idle_reason": "available", "completed_task_id": "T1",
        "completed_status": "resolved"})
    );
}

#[test]
fn a_session_whose_task_failed_goes_idle_as_failed() {
    let (_, v) = session_stops_after("fail");
    let payload = &v["event"]["message"]["payload_json"];
    assert_eq!(
        (payload["idle_reason"].as_str(), payload["completed_status"].as_str()),
        (Some("failed"), Some("failed"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hook_install_registers_the_permission_hook_and_the_progress_environment() {
    let p = Project::new();
    let _d = p.serve();
    ok_as(&p, "w1", &["hook", "install", "--task", "T1", "--run", "R1"]);
    let settings: Value =
        serde_json::from_str(&std::fs::read_to_string(p.path().join(".claude/settings.local.json")).unwrap()).unwrap();
    let pre = &settings["hooks"]["PreToolUse"][0]["hooks"][0];
    let command = pre["command"].as_str().unwrap();
    assert!(command.contains(" hook claude pre-tool-use --task T1 --run R1"), "{command}");
    assert_eq!(pre["timeout"], json!(MAX_PERMISSION_TIMEOUT + 30));
    let env = &settings["env"];
    assert_eq!(env["COORD_PROGRESS"], json!(p.paths().socket.display().to_string()));
    assert_eq!((env["COORD_AGENT"].as_str(), env["COORD_TASK"].as_str()), (Some("w1"), Some("T1")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_push_inside_a_compound_command_is_gated_too() {
    let line = "cd app && GIT_TRACE=1 git push -f origin main";
    let (decision, request) = decide_on(line, json!({"approved": false, "reason": "no force pushes"})).await;
    assert_eq!(request.payload_json["input"]["command"], line);
    assert_eq!(decision["hookSpecificOutput"]["permissionDecision"], "deny");
}

/// Issue 32: every spelling of `git push` it found ungated, checked through the real
/// daemon (`policy.check`): gated, with the reason saying what the command runs; the
/// same command run as `git status` is not.
#[test]
fn every_spelling_of_a_gated_push_is_gated_through_the_daemon() {
    let (p, _d) = gated();
    let check = |command: &str| {
        let input = json!({ "command": command }).to_string();
        p.inbox().json_flag().args(["--agent", "w1", "policy", "check", "--tool", "Bash", "--input", &input]).run()
    };
    let spellings = [
        "bash -c 'git push'",
        "sh -c 'git push'",
        "git -C . push",
        "git  push",
        "/usr/bin/git push",
        "env git push",
        "command git push",
        "nohup git push",
        "time git push",
        "eval \"git push\"",
    ];
    for command in spellings {
        let out = check(command).code(0);
        let r = out.json();
        assert_eq!((r["gated"].as_bool(), r["approver"].as_str()), (Some(true), Some("lead")), "{command}: {r}");
        let reason = r["reason"].as_str().unwrap_or_default();
        assert!(
            reason.starts_with("gated by Bash(git push*): ") && reason.contains("runs `git push`"),
            "{command}: {r}"
        );
    }
    let unknown = check("eval \"$CMD\"").code(0).json();
    assert!(unknown["reason"].as_str().unwrap_or_default().contains("computed when it runs"), "{unknown}");
    for free in ["git status", "bash -c 'git status'", "echo git push"] {
        assert_eq!(check(free).code(10).json()["gated"], false, "{free}");
    }
}

/// A push hidden in `bash -c` reaches the approver with the gate's reason, and the
/// model's denial carries it too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_push_inside_bash_c_is_gated_and_the_denial_says_what_it_runs() {
    let line = "bash -c 'git -C . push origin main'";
    let (decision, request) = decide_on(line, json!({"approved": false, "reason": "no pushes today"})).await;
    let why = "gated by Bash(git push*): `bash -c 'git -C . push origin main'` runs `git push origin main`";
    assert_eq!(request.payload_json["description"], format!("Push the branch ({why})"));
    assert_eq!(decision["hookSpecificOutput"]["permissionDecision"], "deny");
    assert_eq!(
        decision["hookSpecificOutput"]["permissionDecisionReason"],
        format!("Denied by lead: no pushes today ({why})")
    );
}
