//! `coord-launch` with the `command` client, as issue 31 found it wanting: the prompt's wait
//! misses an early answer; a lost session's tools outlive it; a signal's exit code; a
//! shutdown stops only its task's session, ends the same answered or not, and an answer
//! afterwards resumes the task; `orch status` says why a session ended; `--tmux` and the
//! bridge's own lines; a run whose tasks were all cancelled ends. Every wait is on an
//! event, a process's end or (in tmux) the screen.

#[path = "support/launch.rs"]
mod support;

use std::time::Duration;

use coord_proto::api::ControlApiClient;
use coord_proto::types::*;
use coord_tests::{Project, finish, git_project, pid_alive, wait_gone};
use serde_json::{Value, json};
use support::*;

/// A session that follows the prompt (`COORD_PROMPT`, as a model reads it) blocks with a
/// question, and the lead answers before it starts to wait: the wait the prompt tells it
/// to run still returns the answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_that_follows_the_prompt_gets_an_answer_given_before_it_waits() {
    let p = Project::new();
    thread_run(&p, &[], &["T1"]);
    let c = p.client().await;
    let from = c.server_info().last_event_id;
    let gate = gate(&p);
    // The prompt's wait line (the last one it quotes), with the cursor `update` printed.
    let script = format!(
        "inbox claim --agent \"$COORD_AGENT\" --thread \"$COORD_THREAD\" >/dev/null || exit 5; \
         out=$(inbox update --agent \"$COORD_AGENT\" --thread \"$COORD_THREAD\" --status blocked --summary 'Which db?') || exit 6; \
         id=$(printf '%s\\n' \"$out\" | sed -n 's/.*--after-event \\([0-9][0-9]*\\).*/\\1/p'); \
         read go < '{}'; \
         wait=$(printf '%s\\n' \"$COORD_PROMPT\" | grep -o '`[^`]*wait-reply[^`]*`' | tail -n 1 | tr -d '`' | sed \"s/EVENT_ID/$id/\"); \
         got=$($wait --timeout-seconds 20 --json) || exit 7; \
         printf '%s' \"$got\" | grep -q 'Use SQLite' || exit 8; \
         inbox done --agent \"$COORD_AGENT\" --thread \"$COORD_THREAD\" --summary answered >/dev/null",
        gate.display()
    );
    let b = bridge(&p, &script, &["--dispatch", "--until-done"]);
    next_event(&c, from, &[EventType::TaskBlocked]).await;
    orch(&p, &["answer", "--run", "R1", "--task", "T1", "--summary", "Use SQLite"]);
    std::fs::write(&gate, "go\n").unwrap();
    let out = finish(b);
    let list = sessions(&c).await;
    assert_eq!(out.code, 0, "{}\n{list:?}", out.stderr);
    assert_eq!(list[0].exit_code, Some(0), "{list:?}");
}

/// A session whose tool runs in a process group of its own (as agent CLIs run their
/// shells); the bridge is killed, then the session's main process: the next bridge marks
/// the session lost and the tool goes too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_sessions_tools_are_stopped_when_the_bridge_restarts() {
    let p = Project::new();
    thread_run(&p, &[], &["T1"]);
    let c = p.client().await;
    let from = c.server_info().last_event_id;
    let script = format!(
        "mkfifo ready; setsid sh -c 'echo $$ > ready; exec sleep 305' & read tool < ready; echo $tool > tool.pid; {UP}; wait"
    );
    let mut first = bridge(&p, &script, &["--dispatch"]);
    let up = next_event(&c, from, &[EventType::ThreadProgress]).await;
    first.kill().unwrap();
    first.wait().unwrap();
    let s = sessions(&c).await.pop().expect("the session");
    let tool: i64 =
        std::fs::read_to_string(std::path::Path::new(&s.cwd).join("tool.pid")).unwrap().trim().parse().unwrap();
    let st = std::process::Command::new("kill").args(["-KILL", &s.pid.to_string()]).status().unwrap();
    assert!(st.success() && wait_gone(s.pid, Duration::from_secs(30)), "the session's main process ended");
    assert!(pid_alive(tool), "the tool outlived its session's process");
    let mut second = bridge(&p, &script, &[]);
    let lost = next_event(&c, up.event_id, &[EventType::LaunchExited]).await;
    assert_eq!(lost.payload_json["session"]["state"], "lost", "{}", lost.payload_json);
    assert!(wait_gone(tool, Duration::from_secs(30)), "the lost session's tool {tool} is still running");
    second.kill().unwrap();
    second.wait().unwrap();
}

/// SIGTERM and SIGINT stop a bridge whose run is still active with its own exit status, 4,
/// not the 0 of a finished run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bridge_stopped_by_a_signal_while_the_run_is_active_exits_4() {
    let p = Project::new();
    thread_run(&p, &[], &["T1"]);
    let script = format!("{UP}; sleep 300 & wait");
    // The first bridge starts the session; the second re-attaches to it.
    for (sig, ready) in [("TERM", "T1 a1 started"), ("INT", "re-attached to T1 a1")] {
        let mut b = bridge(&p, &script, &["--dispatch", "--until-done"]);
        let said = said(&mut b, ready);
        let st = std::process::Command::new("kill").args([&format!("-{sig}"), &b.id().to_string()]).status().unwrap();
        assert!(st.success());
        let out = finish(b);
        assert_eq!(out.code, 4, "SIG{sig}: {said}{}\n{}", out.stdout, out.stderr);
        assert!(out.stderr.contains("re-attached by the next coord-launch"), "{}", out.stderr);
    }
    let c = p.client().await;
    let list = sessions(&c).await;
    assert!(list.iter().all(|s| s.state == SessionState::Running && pid_alive(s.pid)), "{list:?}");
    kill_group(list[0].pid);
}

/// The worker of `task` approves the shutdown request `asked` (what its hook would do).
async fn approve(c: &coord_client::Client, worker: &str, asked: &Value) {
    let request_id = asked["request_id"].as_str().expect("a request id");
    let approved = json!({"from": worker, "type": "shutdown_approved", "payload": {"request_id": request_id}});
    c.control_send(serde_json::from_value(approved).unwrap()).await.expect("the worker approves");
}

/// A shutdown the worker approved stops its session and blocks its task; the lead's answer
/// then resumes the task: the running bridge starts a fresh session for the same attempt,
/// which finds the answer in its thread and finishes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_after_an_approved_shutdown_resumes_the_task_in_a_fresh_session() {
    let p = Project::new();
    thread_run(&p, &[], &["T1"]);
    let c = p.client().await;
    let from = c.server_info().last_event_id;
    // The first session works on; the one after it reads the answer and finishes.
    let script = format!(
        "if [ -f first ]; then {}; else touch first; {UP}; sleep 300 & wait; fi",
        worker("inbox show --agent \"$COORD_AGENT\" --thread \"$COORD_THREAD\" | grep -q 'go on with SQLite'")
    );
    let b = bridge(&p, &script, &["--dispatch", "--until-done", "--shutdown-grace-seconds", "3600"]);
    let up = next_event(&c, from, &[EventType::ThreadProgress]).await;
    let asked = p.inbox().json_flag().args(["--agent", "lead", "shutdown", "--to", "w1"]).run().ok().json();
    approve(&c, "w1", &asked).await;
    let stopped = next_event(&c, up.event_id, &[EventType::LaunchExited]).await;
    assert_eq!(stopped.payload_json["session"]["state"], "stopped", "{}", stopped.payload_json);
    let t = orch(&p, &["task", "show", "--run", "R1", "--task", "T1"]);
    assert_eq!(t["task"]["status"], "blocked", "{t}");
    orch(&p, &["answer", "--run", "R1", "--task", "T1", "--summary", "go on with SQLite"]);
    let fresh = within("a fresh session", next_event(&c, stopped.event_id, &[EventType::LaunchStarted])).await;
    assert_eq!(fresh.payload_json["session"]["attempt"], 1, "{}", fresh.payload_json);
    let out = finish(b);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let t = orch(&p, &["task", "show", "--run", "R1", "--task", "T1"]);
    assert_eq!((&t["task"]["status"], t["attempts"].as_array().map(Vec::len)), (&json!("done"), Some(1)), "{t}");
}

/// Two tasks of one worker, each with its session: a shutdown for T1 stops T1's session
/// only; T2's runs on until it is cancelled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shutdown_for_one_task_stops_only_that_tasks_session() {
    let p = Project::new();
    thread_run(&p, &[], &["T1", "T2"]);
    let c = p.client().await;
    let from = c.server_info().last_event_id;
    let script = format!("{UP}; sleep 300 & wait");
    let mut b = bridge(&p, &script, &["--dispatch", "--shutdown-grace-seconds", "1"]);
    let a = next_event(&c, from, &[EventType::ThreadProgress]).await;
    let up = next_event(&c, a.event_id, &[EventType::ThreadProgress]).await;
    p.inbox().args(["--agent", "lead", "shutdown", "--to", "w1", "--run", "R1", "--task", "T1"]).run().ok();
    let first = next_event(&c, up.event_id, &[EventType::LaunchExited]).await;
    assert_eq!(first.task_id, "T1", "{}", first.payload_json);
    orch(&p, &["cancel", "--run", "R1", "--task", "T2", "--reason", "over"]);
    let second = next_event(&c, first.event_id, &[EventType::LaunchExited]).await;
    let s = &second.payload_json["session"];
    assert_eq!(
        (second.task_id.as_str(), s["reason"].as_str()),
        ("T2", Some("stopped: the attempt was cancelled")),
        "{s}"
    );
    b.kill().unwrap();
    b.wait().unwrap();
}

/// A shutdown nobody answers: after the grace the bridge stops the session, and it ends as
/// an answered one does: the task blocked, its lease released, the request closed, and the
/// lead told that it went unanswered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unanswered_shutdown_ends_like_an_answered_one() {
    let p = Project::new();
    thread_run(&p, &[], &["T1"]);
    let c = p.client().await;
    let from = c.server_info().last_event_id;
    let mut b = bridge(&p, &format!("{UP}; sleep 300 & wait"), &["--dispatch", "--shutdown-grace-seconds", "1"]);
    let up = next_event(&c, from, &[EventType::ThreadProgress]).await;
    let asked = p.inbox().json_flag().args(["--agent", "lead", "shutdown", "--to", "w1"]).run().ok().json();
    let ended = next_event(&c, up.event_id, &[EventType::LaunchExited]).await;
    assert_eq!(ended.payload_json["session"]["state"], "stopped", "{}", ended.payload_json);
    let t = orch(&p, &["task", "show", "--run", "R1", "--task", "T1"]);
    assert_eq!(t["task"]["status"], "blocked", "{t}");
    let thread = p.inbox().json_flag().args(["show", "--thread", &up.thread_id]).run().ok().json();
    assert_eq!(thread["thread"]["lease"]["active"], false, "{thread}");
    let request_id = asked["request_id"].as_str().unwrap();
    let all = p.inbox().json_flag().args(["requests", "--request", request_id, "--all"]).run().ok().json();
    assert_eq!(all["requests"][0]["status"], "cancelled", "{all}");
    let f = EventFilter {
        after_event: Some(up.event_id),
        to: Some("lead".into()),
        message_types: vec!["idle_notification".into()],
        ..Default::default()
    };
    let told = c.subscribe(f).await.unwrap().next().await.unwrap().unwrap();
    let m = told.message.expect("the notification");
    let summary = m.payload_json["summary"].as_str().unwrap_or_default();
    assert!(m.from_agent == "w1" && summary.contains("without answering"), "{}", m.payload_json);
    b.kill().unwrap();
    b.wait().unwrap();
}

/// `orch status` says why a stopped session was stopped, beside its exit status.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn orch_status_shows_why_a_session_was_stopped() {
    let p = Project::new();
    thread_run(&p, &[], &["T1"]);
    let c = p.client().await;
    let from = c.server_info().last_event_id;
    let mut b = bridge(&p, &format!("{UP}; sleep 300 & wait"), &["--dispatch"]);
    let up = next_event(&c, from, &[EventType::ThreadProgress]).await;
    orch(&p, &["cancel", "--run", "R1", "--task", "T1", "--reason", "not needed"]);
    next_event(&c, up.event_id, &[EventType::LaunchExited]).await;
    let text = p.orch().args(["status", "--run", "R1"]).run().ok().stdout;
    assert!(text.contains("stopped (") && text.contains("): the attempt was cancelled"), "{text}");
    b.kill().unwrap();
    b.wait().unwrap();
}

/// A session re-attached after a bridge restart ends with no exit status the bridge can
/// read: `orch status` says so, and why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn orch_status_says_why_a_reattached_session_has_no_exit_status() {
    let p = Project::new();
    thread_run(&p, &[], &["T1"]);
    let c = p.client().await;
    let from = c.server_info().last_event_id;
    let script = format!("mkfifo go; {UP}; read x < go; exit 0");
    let mut first = bridge(&p, &script, &["--dispatch"]);
    let up = next_event(&c, from, &[EventType::ThreadProgress]).await;
    first.kill().unwrap();
    first.wait().unwrap();
    let s = sessions(&c).await.pop().expect("the session");
    let mut second = bridge(&p, &script, &[]);
    said(&mut second, "re-attached to T1 a1");
    std::fs::write(std::path::Path::new(&s.cwd).join("go"), "\n").unwrap();
    next_event(&c, up.event_id, &[EventType::LaunchExited]).await;
    let text = p.orch().args(["status", "--run", "R1"]).run().ok().stdout;
    assert!(text.contains("ended, no exit status: re-attached after a bridge restart"), "{text}");
    second.kill().unwrap();
    second.wait().unwrap();
}

/// Answering a shutdown request settles it: its copy still queued for the worker is
/// withdrawn, and the history says so for what it is, not that something was lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answered_shutdown_requests_withdrawn_copy_reads_as_answered() {
    let p = Project::new();
    thread_run(&p, &[], &["T1"]);
    let c = p.client().await;
    let from = c.server_info().last_event_id;
    let mut b = bridge(&p, &format!("{UP}; sleep 300 & wait"), &["--dispatch", "--shutdown-grace-seconds", "3600"]);
    let up = next_event(&c, from, &[EventType::ThreadProgress]).await;
    let asked = p.inbox().json_flag().args(["--agent", "lead", "shutdown", "--to", "w1"]).run().ok().json();
    approve(&c, "w1", &asked).await;
    let withdrawn = next_event(&c, up.event_id, &[EventType::MailWithdrawn]).await;
    assert!(
        withdrawn.summary.ends_with("withdrawn: the request was answered") && !withdrawn.summary.contains("lost"),
        "{}",
        withdrawn.summary
    );
    next_event(&c, up.event_id, &[EventType::LaunchExited]).await;
    b.kill().unwrap();
    b.wait().unwrap();
}

/// The bridge says what happens: each session's start and end, each merge, the run's end.
#[test]
fn the_bridge_prints_a_line_per_session_start_end_and_merge_and_the_runs_end() {
    let p = git_project();
    orch(&p, &["run", "create", "--goal", "g", "--id", "R1", "--auto-merge"]);
    orch(&p, &["task", "add", "--run", "R1", "--id", "T1", "--title", "T1", "--assign-to", "w1"]);
    let work = "echo x > x.txt && git add -A && git -c user.email=w@e -c user.name=w commit -q -m x";
    let out = finish(bridge(&p, &worker(work), &["--dispatch", "--until-done"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let lines: Vec<&str> = out.stdout.lines().collect();
    let want = ["T1 a1 started: command @w1, pid", "T1 a1 ended: exit 0", "T1 merged into", "run R1 done: 1 of 1"];
    for w in want {
        assert_eq!(lines.iter().filter(|l| l.contains(w)).count(), 1, "'{w}' once in:\n{}", out.stdout);
    }
}

/// `--quiet`: nothing on stdout.
#[test]
fn a_quiet_bridge_prints_nothing() {
    let p = Project::new();
    thread_run(&p, &[], &["T1"]);
    let out = finish(bridge(&p, &worker("true"), &["--dispatch", "--until-done", "--quiet"]));
    assert_eq!((out.code, out.stdout.as_str()), (0, ""), "{}", out.stderr);
}

/// A run whose every task is cancelled has nothing left to do: it is done, and
/// `--until-done` returns.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_whose_tasks_were_all_cancelled_ends_and_until_done_returns() {
    let p = Project::new();
    thread_run(&p, &[], &["T1", "T2"]);
    let c = p.client().await;
    let from = c.server_info().last_event_id;
    let b = bridge(&p, &format!("{UP}; sleep 300 & wait"), &["--dispatch", "--until-done"]);
    let a = next_event(&c, from, &[EventType::ThreadProgress]).await;
    next_event(&c, a.event_id, &[EventType::ThreadProgress]).await;
    for t in ["T1", "T2"] {
        orch(&p, &["cancel", "--run", "R1", "--task", t, "--reason", "not needed"]);
    }
    let done = within("run.done", next_event(&c, from, &[EventType::RunDone])).await;
    assert!(done.summary.contains("0 of 2 tasks done, 2 cancelled"), "{}", done.summary);
    let out = finish(b);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(orch(&p, &["status", "--run", "R1"])["run"]["status"], "done");
}

/// `--tmux`: the `bridge` window shows the bridge's lines, and the tmux session goes once
/// the bridge and its sessions have ended.
#[test]
fn tmuxs_bridge_window_shows_the_bridge_and_its_session_ends_with_it() {
    if !coord_tests::have("tmux", "coord-launch --tmux") {
        return;
    }
    let p = Project::new();
    thread_run(&p, &[], &["T1"]);
    let tmux = Tmux::new();
    let gate = gate(&p);
    let mut b = tmux.bridge(&p, &worker(&format!("read go < '{}'", gate.display())));
    said(&mut b, "T1 a1 started");
    // The window's screen, read until it shows the line (tail follows the bridge's log).
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let (_, screen) = tmux.run(&["capture-pane", "-p", "-t", "=coord-R1:bridge"]);
        if screen.contains("T1 a1 started: command @w1") {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the bridge window never showed the bridge's line:\n{screen}");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::fs::write(&gate, "go\n").unwrap();
    let out = finish(b);
    let (alive, _) = tmux.run(&["has-session", "-t", "=coord-R1"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!alive, "the tmux session outlived the bridge");
}
