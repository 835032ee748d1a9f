//! `coord-launch`, the launch bridge, with the `command` client: sessions start for
//! dispatched attempts, finish a run with stacked tasks, fail their attempt when they crash
//! (the retry gets a new session), are stopped with their whole process group on cancel,
//! and are re-attached (or marked lost) when the bridge restarts. Every wait is on an event
//! or a process's end.

#[path = "support/launch.rs"]
mod support;

use coord_proto::types::*;
use coord_tests::{Project, finish, finish_within, git_in, git_project, pid_alive};
use serde_json::Value;
use support::*;

#[test]
fn launched_sessions_finish_a_stacked_run_and_the_dependent_starts_from_merged_work() {
    let p = git_project();
    orch(&p, &["run", "create", "--goal", "g", "--id", "R1", "--auto-merge"]);
    orch(&p, &["task", "add", "--run", "R1", "--id", "T1", "--title", "T1", "--assign-to", "w1"]);
    orch(&p, &["task", "add", "--run", "R1", "--id", "T2", "--title", "T2", "--assign-to", "w2", "--depends-on", "T1"]);
    // T2's session checks that T1's work is in its worktree before doing its own.
    let work = "{ [ \"$COORD_TASK\" = T1 ] || test -f T1.txt; } && echo \"$COORD_TASK\" > \"$COORD_TASK.txt\" && \
                git add -A && git -c user.email=w@e -c user.name=w commit -q -m \"$COORD_TASK\"";
    let out = finish(bridge(&p, &worker(work), &["--dispatch", "--until-done"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let status = orch(&p, &["status", "--run", "R1"]);
    assert_eq!(status["run"]["status"], "done", "{status}");
    let rt = tokio::runtime::Runtime::new().unwrap();
    let list = rt.block_on(async { sessions(&p.client().await).await });
    assert_eq!(list.len(), 2, "{list:?}");
    for s in &list {
        assert_eq!((s.state, s.exit_code, s.client.as_str()), (SessionState::Exited, Some(0), "command"), "{s:?}");
        assert!(s.cwd.contains("worktrees") || s.cwd.contains(&s.task_id), "a code task runs in its worktree: {s:?}");
        assert!(std::path::Path::new(&s.log_path).is_file());
    }
    assert!(git_in(p.path(), &["log", "--format=%s", "orch/R1/integration"]).contains("T2"));
}

#[test]
fn a_crashed_session_fails_its_attempt_with_its_exit_code_and_log_and_the_retry_finishes() {
    let p = Project::new();
    thread_run(&p, &["--auto-retry", "1"], &["T1"]);
    let script =
        format!("if [ \"$COORD_ATTEMPT\" = 1 ]; then echo boom-from-attempt-1; exit 3; fi; {}", worker("true"));
    let out = finish(bridge(&p, &script, &["--dispatch", "--until-done"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let list = rt.block_on(async { sessions(&p.client().await).await });
    assert_eq!(list.iter().map(|s| (s.attempt, s.exit_code)).collect::<Vec<_>>(), [(1, Some(3)), (2, Some(0))]);
    assert!(list[0].log_tail.as_deref().unwrap_or("").contains("boom-from-attempt-1"), "{:?}", list[0]);
    let t = orch(&p, &["task", "show", "--run", "R1", "--task", "T1"]);
    assert_eq!(t["attempts"][0]["status"], "failed", "{t}");
    let thread = t["attempts"][0]["thread_id"].as_str().unwrap();
    let shown = p.inbox().json_flag().args(["show", "--thread", thread]).run().ok().json();
    let result = shown["messages"].as_array().unwrap().iter().rev().find(|m| m["kind"] == "result").unwrap().clone();
    assert!(result["summary"].as_str().unwrap().contains("exited with code 3"), "{result}");
    assert!(result["body"].as_str().unwrap().contains("boom-from-attempt-1"), "{result}");
}

#[test]
fn orch_status_shows_each_tasks_newest_session_with_its_log() {
    let p = Project::new();
    thread_run(&p, &["--auto-retry", "1"], &["T1"]);
    let script = format!("echo line-$COORD_ATTEMPT; [ \"$COORD_ATTEMPT\" = 1 ] && exit 4; {}", worker("true"));
    assert_eq!(finish(bridge(&p, &script, &["--dispatch", "--until-done"])).code, 0);
    let text = p.orch().args(["status", "--run", "R1"]).run().ok().stdout;
    assert!(text.contains("sessions:") && text.contains("T1 a2 command one_shot @w1 pid"), "{text}");
    // The log's lines carry their time (the output filter's).
    let tail = |l: &str| l.trim_start().starts_with("| ") && l.ends_with(" line-2");
    assert!(text.contains("exit 0") && text.lines().any(tail) && !text.contains("line-1"), "{text}");
    let json = orch(&p, &["status", "--run", "R1"]);
    assert_eq!(json["sessions"].as_array().unwrap().len(), 2, "{json}");
    assert_eq!(json["sessions"][0]["exit_code"], 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_stops_the_sessions_whole_process_group() {
    let p = Project::new();
    thread_run(&p, &[], &["T1"]);
    let c = p.client().await;
    let from = c.server_info().last_event_id;
    // The worker claims, starts two grandchildren, records their pids, and waits.
    let script = "inbox claim --agent \"$COORD_AGENT\" --thread \"$COORD_THREAD\" >/dev/null; \
                  sleep 300 & echo $! > pids; sleep 300 & echo $! >> pids; \
                  inbox update --agent \"$COORD_AGENT\" --thread \"$COORD_THREAD\" --status in_progress --summary up >/dev/null; wait";
    let mut b = bridge(&p, script, &["--dispatch"]);
    let up = next_event(&c, from, &[EventType::ThreadProgress]).await;
    let list = sessions(&c).await;
    let s = &list[0];
    let pids: Vec<i64> = std::fs::read_to_string(std::path::Path::new(&s.cwd).join("pids"))
        .unwrap()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect();
    assert!(pid_alive(s.pid) && pids.iter().all(|p| pid_alive(*p)));
    orch(&p, &["cancel", "--run", "R1", "--task", "T1", "--reason", "not needed"]);
    let ended = next_event(&c, up.event_id, &[EventType::LaunchExited]).await;
    assert_eq!(ended.payload_json["session"]["state"], "stopped", "{}", ended.payload_json);
    for pid in pids.iter().chain([&s.pid]) {
        assert!(!pid_alive(*pid), "process {pid} of the cancelled session is still alive");
    }
    b.kill().unwrap();
    b.wait().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_bridge_reattaches_to_live_sessions_and_marks_dead_ones_lost() {
    let p = Project::new();
    thread_run(&p, &[], &["T1", "T2"]);
    let c = p.client().await;
    let from = c.server_info().last_event_id;
    // Each worker claims, says it is up, and waits on a fifo the test writes to.
    let script = "mkfifo go; inbox claim --agent \"$COORD_AGENT\" --thread \"$COORD_THREAD\" >/dev/null; \
                  inbox update --agent \"$COORD_AGENT\" --thread \"$COORD_THREAD\" --status in_progress --summary up >/dev/null; \
                  read x < go; inbox done --agent \"$COORD_AGENT\" --thread \"$COORD_THREAD\" --summary finished >/dev/null";
    let mut first = bridge(&p, script, &["--dispatch"]);
    let a = next_event(&c, from, &[EventType::ThreadProgress]).await;
    next_event(&c, a.event_id, &[EventType::ThreadProgress]).await;
    first.kill().unwrap();
    first.wait().unwrap();
    let list = sessions(&c).await;
    let (t1, t2) = (list.iter().find(|s| s.task_id == "T1").unwrap(), list.iter().find(|s| s.task_id == "T2").unwrap());
    // T2's session dies while no bridge watches it.
    kill_group(t2.pid);
    let cursor = c.server_info().last_event_id.max(a.event_id);
    let second = bridge(&p, script, &["--until-done"]);
    let lost = next_event(&c, cursor, &[EventType::LaunchExited]).await;
    assert_eq!(lost.payload_json["session"]["state"], "lost", "{}", lost.payload_json);
    assert_eq!(lost.task_id, "T2");
    // T1's session was re-attached: its end is recorded, and the task is done.
    std::fs::write(std::path::Path::new(&t1.cwd).join("go"), "\n").unwrap();
    let ended = next_event(&c, lost.event_id, &[EventType::LaunchExited]).await;
    assert_eq!((ended.task_id.as_str(), &ended.payload_json["session"]["state"]), ("T1", &Value::from("exited")));
    let t = orch(&p, &["task", "show", "--run", "R1", "--task", "T1"]);
    assert_eq!(t["task"]["status"], "done", "{t}");
    let t = orch(&p, &["task", "show", "--run", "R1", "--task", "T2"]);
    assert_eq!(t["task"]["status"], "failed", "{t}");
    // The run ended failed: --until-done says so.
    assert_eq!(finish(second).code, 1);
}

/// A session that claims, says it is up and carries on forever (its hooks cannot end it)
/// gets a shutdown request from the lead; the worker approves it (`approve`) or not. The
/// session must end stopped for the shutdown, its process gone.
async fn a_shutdown_stops_the_session(grace_seconds: &str, approve: bool) {
    use coord_proto::api::ControlApiClient;
    let p = Project::new();
    thread_run(&p, &[], &["T1"]);
    let c = p.client().await;
    let from = c.server_info().last_event_id;
    let script = format!("{UP}; sleep 300 & wait");
    let mut b = bridge(&p, &script, &["--dispatch", "--shutdown-grace-seconds", grace_seconds]);
    let up = next_event(&c, from, &[EventType::ThreadProgress]).await;
    let asked = p.inbox().json_flag().args(["--agent", "lead", "shutdown", "--to", "w1"]).run().ok().json();
    if approve {
        let request_id = asked["request_id"].as_str().expect("a request id").to_string();
        let approved =
            serde_json::json!({"from": "w1", "type": "shutdown_approved", "payload": {"request_id": request_id}});
        c.control_send(serde_json::from_value(approved).unwrap()).await.expect("the worker approves");
    }
    let ended = next_event(&c, up.event_id, &[EventType::LaunchExited]).await;
    let s = &ended.payload_json["session"];
    let reason = if approve { "stopped: shutdown approved" } else { "stopped: shutdown request not answered in time" };
    assert_eq!((s["state"].as_str(), s["reason"].as_str()), (Some("stopped"), Some(reason)), "{s}");
    assert!(!pid_alive(s["pid"].as_i64().unwrap()));
    b.kill().unwrap();
    b.wait().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unanswered_shutdown_request_stops_the_session_after_its_grace() {
    a_shutdown_stops_the_session("1", false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approved_shutdown_stops_the_session_at_once() {
    // A grace far longer than the test: only the worker's approval can stop the session.
    a_shutdown_stops_the_session("3600", true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bridge_carries_on_across_a_daemon_restart() {
    let p = Project::new();
    thread_run(&p, &[], &["T1"]);
    let c = p.client().await;
    let from = c.server_info().last_event_id;
    // The session says it is up, then finishes once the test writes to its fifo.
    let gate = gate(&p);
    let script = format!("{UP} && read go < '{}' && {}", gate.display(), worker("true"));
    let b = bridge(&p, &script, &["--dispatch", "--until-done"]);
    next_event(&c, from, &[EventType::ThreadProgress]).await;
    drop(c);
    // The daemon goes away under the bridge and its session; the session's next write
    // starts it again, and the bridge follows the run to its end.
    p.coordd().args(["stop"]).run().ok();
    std::fs::write(&gate, "go\n").unwrap();
    let out = finish(b);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let list = sessions(&p.client().await).await;
    assert_eq!((list.len(), list[0].state, list[0].exit_code), (1, SessionState::Exited, Some(0)), "{list:?}");
}

#[test]
fn tmux_runs_each_session_in_a_window_of_the_runs_tmux_session() {
    if !coord_tests::have("tmux", "coord-launch --tmux") {
        return;
    }
    let p = Project::new();
    thread_run(&p, &[], &["T1"]);
    let tmux = Tmux::new();
    let seen = p.path().join("windows.txt");
    // Inside its pane, the session lists the windows of the run's tmux session.
    let work = format!("tmux list-windows -t coord-R1 -F '#{{window_name}}' > '{}'", seen.display());
    let out = finish(tmux.bridge(&p, &worker(&work)));
    drop(tmux);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let windows = std::fs::read_to_string(&seen).expect("the session ran in tmux and listed its windows");
    assert!(windows.lines().any(|w| w == "T1-a1"), "{windows}");
    let rt = tokio::runtime::Runtime::new().unwrap();
    let list = rt.block_on(async { sessions(&p.client().await).await });
    assert_eq!(list.len(), 1, "{list:?}");
    assert_eq!((list[0].state, list[0].exit_code), (SessionState::Exited, Some(0)), "{:?}", list[0]);
    assert_eq!(list[0].tmux_window.as_deref().map(|w| w.ends_with("T1-a1")), Some(true), "{:?}", list[0]);
}

/// The window's line is sh's: a tmux server whose default shell is something else (fish,
/// say) still runs the session and the bridge's window.
#[test]
fn a_tmux_session_runs_whatever_the_tmux_servers_default_shell_is() {
    if !coord_tests::have("tmux", "coord-launch --tmux") {
        return;
    }
    let p = Project::new();
    thread_run(&p, &[], &["T1"]);
    // A "shell" that runs nothing it is given.
    let shell = p.path().join("not-sh");
    std::fs::write(&shell, "#!/bin/sh\necho \"not sh: $*\" >&2\nexit 1\n").unwrap();
    std::fs::set_permissions(&shell, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    // The test's tmux server, started with that shell as its default (a command of several
    // words is run by tmux itself), held up by a session of its own.
    let tmux = Tmux::new();
    let started = std::process::Command::new("tmux")
        .env("TMUX_TMPDIR", tmux.dir())
        .env("SHELL", &shell)
        .args(["new-session", "-d", "-s", "held", "sleep", "100000"])
        .status()
        .unwrap();
    assert!(started.success());
    let (_, default_shell) = tmux.run(&["show-options", "-gv", "default-shell"]);
    assert_eq!(default_shell.trim(), shell.display().to_string(), "the tmux server's default shell");
    let out = finish_within(tmux.bridge(&p, &worker("true")), std::time::Duration::from_secs(120));
    drop(tmux);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let list = rt.block_on(async { sessions(&p.client().await).await });
    assert_eq!((list.len(), list[0].state, list[0].exit_code), (1, SessionState::Exited, Some(0)), "{list:?}");
}

#[test]
fn a_session_past_its_wall_clock_limit_is_stopped_and_its_attempt_fails() {
    let p = Project::new();
    thread_run(&p, &[], &["T1"]);
    // The session claims its thread and then never finishes; its limit is 1.2 s.
    let hang = "inbox claim --agent \"$COORD_AGENT\" --thread \"$COORD_THREAD\" >/dev/null && exec sleep 100000";
    let out = finish(bridge(&p, hang, &["--wall-clock-minutes", "0.02", "--dispatch", "--until-done"]));
    assert_ne!(out.code, 0, "the run ends failed: {}", out.stderr);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let list = rt.block_on(async { sessions(&p.client().await).await });
    assert_eq!(list.len(), 1, "{list:?}");
    assert_eq!(list[0].state, SessionState::Stopped, "{:?}", list[0]);
    assert!(list[0].reason.as_deref().unwrap_or("").contains("wall-clock"), "{:?}", list[0]);
    let t = orch(&p, &["task", "show", "--run", "R1", "--task", "T1"]);
    assert_eq!(t["attempts"][0]["status"], "failed", "{t}");
}

#[test]
fn a_wall_clock_limit_that_is_not_a_positive_number_of_minutes_is_refused() {
    let p = Project::new();
    let out = p.launch().args(["--run", "R1", "--command", "true", "--wall-clock-minutes", "-1"]).run();
    assert_eq!(out.code, 30, "{}", out.stderr);
}

#[test]
fn max_sessions_caps_how_many_run_at_once() {
    let p = Project::new();
    thread_run(&p, &[], &["T1", "T2"]);
    let out = finish(bridge(&p, &worker("true"), &["--max-sessions", "1", "--dispatch", "--until-done"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut list = rt.block_on(async { sessions(&p.client().await).await });
    list.sort_by(|a, b| a.started_at.cmp(&b.started_at));
    assert_eq!(list.len(), 2, "{list:?}");
    // The second session started only once the first had ended.
    let first_end = list[0].ended_at.clone().expect("the first session ended");
    assert!(list[1].started_at >= first_end, "{list:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reassign_stops_the_old_session_and_the_new_worker_gets_one() {
    let p = Project::new();
    thread_run(&p, &[], &["T1"]);
    let c = p.client().await;
    let from = c.server_info().last_event_id;
    // w1 claims and never finishes; whoever takes over finishes.
    let script = format!(
        "if [ \"$COORD_AGENT\" = w1 ]; then inbox claim --agent w1 --thread \"$COORD_THREAD\" >/dev/null; \
         inbox update --agent w1 --thread \"$COORD_THREAD\" --status in_progress --summary up >/dev/null; \
         sleep 300 & wait; else {}; fi",
        worker("true")
    );
    let b = bridge(&p, &script, &["--dispatch", "--until-done"]);
    let up = next_event(&c, from, &[EventType::ThreadProgress]).await;
    orch(&p, &["reassign", "--run", "R1", "--task", "T1", "--to", "w2"]);
    let ended = next_event(&c, up.event_id, &[EventType::LaunchExited]).await;
    let s = &ended.payload_json["session"];
    assert_eq!((s["agent"].as_str(), s["state"].as_str()), (Some("w1"), Some("stopped")), "{s}");
    assert!(s["reason"].as_str().unwrap_or("").contains("reassigned"), "{s}");
    assert!(!pid_alive(s["pid"].as_i64().unwrap()));
    let out = finish(b);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let list = sessions(&c).await;
    assert_eq!(list.iter().map(|s| s.agent.as_str()).collect::<Vec<_>>(), ["w1", "w2"], "{list:?}");
}
