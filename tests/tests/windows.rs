//! The Windows suite: the cross-built `coordd.exe`, `inbox.exe` and `orch.exe` under Wine,
//! over real named pipes (harness: `coord_tests::windows`). It fails rather than skips
//! under `COORD_CI` when the `.exe` files, Wine or mingw-w64 are missing. Every command's
//! output is captured through a pipe, as an agent CLI captures a hook's.
#![cfg(target_os = "linux")]

use coord_tests::windows::{WinProject, run, win_path};
use coord_tests::{Out, message_id, thread_id};

/// Issue 24, defect 1: the first call of a project auto-started the daemon and then failed
/// with "File not found" (the client and the daemon derived different pipe names from
/// the path before and after `.agents/` existed).
#[test]
fn the_first_call_starts_the_daemon_and_succeeds() {
    let Some(p) = WinProject::new() else { return };
    let init = p.ok(&["init"]);
    assert_eq!(init["ok"], true);
    let status = p.coordd_json(&["status"]).ok().json();
    assert_eq!(status["running"], true);
    assert_eq!(status["socket"], init["socket"], "the daemon listens where the client looked");
}

/// Issue 24, defect 2: with its output captured through a pipe, `inbox init` printed its
/// answer and then hung until the daemon exited (the daemon inherited the pipe).
#[test]
fn a_pipe_captured_caller_returns_while_its_daemon_runs_on() {
    let Some(p) = WinProject::new() else { return };
    let out = run(p.inbox().args(["init", "--json"])).ok();
    assert_eq!(out.json()["ok"], true);
    // The daemon outlived its caller and still serves.
    let status = p.coordd_json(&["status"]).ok().json();
    assert_eq!(status["running"], true);
}

/// Issue 24, defect 3: `coordd stop` failed with "Lock violation" (it read the file the
/// daemon holds locked, and Windows locks are mandatory).
#[test]
fn coordd_stop_stops_the_daemon() {
    let Some(p) = WinProject::new() else { return };
    p.ok(&["init"]);
    let pid = p.coordd_json(&["status"]).ok().json()["pid"].as_u64().unwrap();
    let stop = p.coordd_json(&["stop"]).ok().json();
    assert_eq!(stop["stopped"], true, "{stop}");
    assert_eq!(stop["pid"], pid);
    p.coordd_json(&["status"]).code(3);
}

#[test]
fn status_and_list_report_the_daemon() {
    let Some(p) = WinProject::new() else { return };
    p.ok(&["init"]);
    let status = p.coordd_json(&["status"]).ok().json();
    let root = win_path(p.path());
    assert_eq!(status["db"], format!("{root}\\.agents\\coord.db"));
    assert_eq!(status["socket_fallback"], false);
    let list = p.coordd_json(&["list"]).ok().json();
    let daemons = list["daemons"].as_array().unwrap();
    assert_eq!(daemons.len(), 1, "{list}");
    assert_eq!(daemons[0]["pid"], status["pid"]);
    assert_eq!(daemons[0]["project"], root);
}

#[test]
fn a_second_daemon_on_the_same_database_is_refused() {
    let Some(p) = WinProject::new() else { return };
    let first = p.try_serve().expect("the first daemon starts");
    let second = run(p.coordd().args(["serve"])).code(3);
    assert!(second.stderr.contains("already running"), "{}", second.stderr);
    assert!(second.stderr.contains("pid "), "names the running daemon: {}", second.stderr);
    drop(first);
}

#[test]
fn the_worker_flow_runs_over_the_named_pipe() {
    let Some(p) = WinProject::new() else { return };
    let sent = p.ok(&["send", "--from", "lead", "--to", "w1", "--summary", "Add a cache"]);
    let thr = thread_id(&sent);
    let fetched = p.ok(&["fetch", "--agent", "w1"]);
    assert_eq!(fetched["threads"][0]["thread_id"], thr.as_str(), "{fetched}");
    let claim = p.ok(&["claim", "--agent", "w1", "--thread", &thr]);
    let token = claim["lease"]["lease_token"].as_str().expect("lease token").to_string();
    let renew = p.ok(&["renew", "--agent", "w1", "--thread", &thr, "--lease-token", &token]);
    assert_eq!(renew["lease"]["generation"], claim["lease"]["generation"], "{renew}");
    p.ok(&["update", "--agent", "w1", "--thread", &thr, "--status", "in_progress", "--summary", "started"]);
    let done = p.ok(&["done", "--agent", "w1", "--thread", &thr, "--summary", "cached"]);
    assert_eq!(done["thread"]["status"], "done", "{done}");
}

/// Worker w1 blocked on a question to the lead, and its `wait-reply` (from the block's
/// event on) running in another process and subscribed: the thread and the waiter.
fn blocked_waiter(p: &WinProject) -> (String, std::thread::JoinHandle<Out>) {
    let thr = thread_id(&p.ok(&["send", "--from", "lead", "--to", "w1", "--summary", "Q"]));
    p.ok(&["claim", "--agent", "w1", "--thread", &thr]);
    let blocked = p.ok(&["update", "--agent", "w1", "--thread", &thr, "--status", "blocked", "--summary", "which?"]);
    let cursor = blocked["event_id"].to_string();
    let args = ["wait-reply", "--agent", "w1", "--thread", &thr, "--after-event", &cursor, "--json"];
    let waiter = std::thread::spawn({
        let wait = p.inbox().args(args);
        move || run(wait)
    });
    p.wait_subscribed(1);
    (thr, waiter)
}

/// The waiter woke with the message of `answer`.
#[track_caller]
fn assert_woke_by(waiter: std::thread::JoinHandle<Out>, answer: &serde_json::Value) {
    let woke = waiter.join().unwrap().ok().json();
    assert_eq!(woke["message"]["message_id"], message_id(answer).as_str(), "{woke}");
}

#[test]
fn a_wait_reply_wakes_when_another_process_replies() {
    let Some(p) = WinProject::new() else { return };
    let (thr, waiter) = blocked_waiter(&p);
    let answer = p.ok(&["reply", "--from", "lead", "--thread", &thr, "--kind", "answer", "--summary", "the LRU one"]);
    assert_woke_by(waiter, &answer);
}

#[test]
fn a_wait_survives_a_daemon_restart() {
    let Some(p) = WinProject::new() else { return };
    let daemon = p.try_serve().expect("daemon starts");
    let (thr, waiter) = blocked_waiter(&p);
    // The daemon dies; the reply starts a new one, and the waiter finds it there.
    daemon.kill9();
    let answer = p.ok(&["reply", "--from", "lead", "--thread", &thr, "--kind", "answer", "--summary", "this one"]);
    assert_woke_by(waiter, &answer);
}

/// `orch` over the named pipe with thread tasks (no Git for Windows under Wine to make the
/// worktrees of code tasks with).
#[test]
fn orch_dispatches_and_wakes_on_the_workers_answer() {
    let Some(p) = WinProject::new() else { return };
    p.orch_ok(&["run", "create", "--goal", "G", "--id", "R1"]);
    p.orch_ok(&["task", "add", "--run", "R1", "--id", "T1", "--title", "Schema", "--kind", "thread"]);
    let d = p.orch_ok(&["dispatch", "--run", "R1", "--task", "T1", "--to", "w1"]);
    let thr = d["dispatches"][0]["thread_id"].as_str().expect("thread_id").to_string();
    let claim = p.ok(&["claim", "--agent", "w1", "--thread", &thr]);
    let cursor = claim["event_id"].to_string();
    p.ok(&["done", "--agent", "w1", "--thread", &thr, "--summary", "schema in"]);
    let args = ["wait", "--run", "R1", "--after-event", &cursor, "--timeout-seconds", "60"];
    let woke = p.orch_ok(&args);
    assert_eq!(woke["woke"], true, "{woke}");
    let status = p.orch_ok(&["status", "--run", "R1"]);
    assert_eq!(status["tasks"][0]["task"]["status"], "done", "{status}");
}

/// A project whose path has spaces and is longer than a Unix socket path may be: on
/// Windows the pipe's name is derived from it, so no short fallback is needed.
#[test]
fn a_long_path_with_spaces_works() {
    let long = format!("my project/{}/{}", "a".repeat(60), "b b".repeat(20));
    let Some(p) = WinProject::at(&long) else { return };
    let thr = thread_id(&p.ok(&["send", "--from", "lead", "--to", "w1", "--summary", "deep"]));
    let fetched = p.ok(&["fetch", "--agent", "w1"]);
    assert_eq!(fetched["threads"][0]["thread_id"], thr.as_str());
    let status = p.coordd_json(&["status"]).ok().json();
    assert_eq!(status["db"], format!("{}\\.agents\\coord.db", win_path(p.path())));
    assert_eq!(status["socket_fallback"], false);
}

/// The Claude Code hook `inbox hook install` writes runs as typed in cmd (and Git Bash):
/// paths with `/`, a path with a space in double quotes, no POSIX single quotes.
#[test]
fn the_installed_hook_command_runs_as_typed_in_cmd() {
    let Some(p) = WinProject::at("my project") else { return };
    p.ok(&["--agent", "w1", "hook", "install"]);
    let settings = std::fs::read_to_string(p.path().join(".claude/settings.local.json")).unwrap();
    let settings: serde_json::Value = serde_json::from_str(&settings).unwrap();
    let command = settings["hooks"]["Stop"][0]["hooks"][0]["command"].as_str().unwrap().to_string();
    assert!(!command.contains('\\') && !command.contains('\''), "{command}");
    // The same program and flags, asked for something that prints.
    let (program_and_flags, _) = command.split_once(" hook claude ").expect("a hook command");
    let out = p.cmd(&format!("{program_and_flags} status --json")).ok();
    assert_eq!(out.json()["ok"], true, "{command}");
}
