//! `coord-launch --live` with the `command` client (issue 33): the session's stdin is a
//! JSON-lines feed (docs/launch.md) that starts with the task and then carries whatever is
//! committed for the worker, the moment it commits: the lead's answer, mail, a shutdown
//! request. The worker asks and keeps reading (its turn is over; nothing waits in a tool),
//! and the attempt finishes in the one session. When its thread is done the bridge closes
//! the feed and the session ends by itself. Every wait is on an event or a process's end.

#[path = "support/launch.rs"]
#[allow(dead_code, reason = "the other launch suites use the rest")]
mod support;

use coord_proto::types::*;
use coord_tests::{Project, finish};
use serde_json::Value;
use support::*;

/// The worker's feed loop: each line of `kind` is saved to `<kind>.json`, then `on_line`
/// runs (with the line in `$line`); at the end of the feed it writes `eof`.
fn feed_loop(kinds: &[&str], on_line: &str) -> String {
    let cases: String = kinds
        .iter()
        .map(|k| format!("*'\"kind\":\"{k}\"'*) printf '%s\\n' \"$line\" > {k}.json; {on_line};; "))
        .collect();
    format!("while IFS= read -r line; do case \"$line\" in {cases}*) ;; esac; done; touch eof")
}

const CLAIM: &str = "inbox claim --agent \"$COORD_AGENT\" --thread \"$COORD_THREAD\" >/dev/null";
const DONE: &str = "inbox done --agent \"$COORD_AGENT\" --thread \"$COORD_THREAD\" --summary finished >/dev/null";

fn json_file(p: &std::path::Path) -> Value {
    let text = std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}: {text}", p.display()))
}

/// The worker asks and ends its turn (it only reads its feed); the lead answers later; the
/// answer arrives as a feed line in the same process, which finishes the task: one
/// session, one attempt, and the session ends cleanly (exit 0) when the bridge closes its
/// feed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_reaches_the_live_session_that_asked_and_it_finishes_in_one_attempt() {
    let p = Project::new();
    thread_run(&p, &[], &["T1"]);
    let c = p.client().await;
    let from = c.server_info().last_event_id;
    let script = format!(
        "IFS= read -r first; printf '%s\\n' \"$first\" > task.json; {CLAIM}; \
         inbox update --agent \"$COORD_AGENT\" --thread \"$COORD_THREAD\" --status blocked --summary 'Which db?' >/dev/null; \
         {}",
        feed_loop(&["answer"], DONE)
    );
    let b = bridge(&p, &script, &["--dispatch", "--until-done", "--live"]);
    next_event(&c, from, &[EventType::TaskBlocked]).await;
    orch(&p, &["answer", "--run", "R1", "--task", "T1", "--summary", "Use SQLite"]);
    let out = finish(b);
    let list = sessions(&c).await;
    assert_eq!(out.code, 0, "{}\n{}\n{list:?}", out.stdout, out.stderr);
    assert_eq!(list.len(), 1, "one session: {list:?}");
    assert_eq!((list[0].exit_code, list[0].state), (Some(0), SessionState::Exited), "{list:?}");
    assert_eq!(list[0].attempt, 1);
    let cwd = std::path::Path::new(&list[0].cwd);
    let task = json_file(&cwd.join("task.json"));
    assert_eq!(
        (task["type"].as_str(), task["kind"].as_str(), task["task_id"].as_str()),
        (Some("turn"), Some("task"), Some("T1"))
    );
    assert!(task["text"].as_str().unwrap().contains("END YOUR TURN"), "{task}");
    let answer = json_file(&cwd.join("answer.json"));
    assert!(answer["text"].as_str().unwrap().contains("Use SQLite"), "{answer}");
    assert_eq!(answer["thread_id"], task["thread_id"], "{answer}");
    assert!(cwd.join("eof").exists(), "the feed ended (the bridge closed it) before the session exited");
}

/// Mail sent to a working live session arrives as a `mail` line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mail_to_a_working_live_session_arrives_as_a_feed_line() {
    let p = Project::new();
    thread_run(&p, &[], &["T1"]);
    let c = p.client().await;
    let from = c.server_info().last_event_id;
    let script = format!("IFS= read -r first; {UP}; {}", feed_loop(&["mail"], DONE));
    let b = bridge(&p, &script, &["--dispatch", "--until-done", "--live"]);
    next_event(&c, from, &[EventType::ThreadProgress]).await;
    p.inbox()
        .args(["--agent", "lead", "send", "--to", "w1", "--summary", "Rebase on main", "--body", "then go on"])
        .run()
        .ok();
    let out = finish(b);
    let list = sessions(&c).await;
    assert_eq!(out.code, 0, "{}\n{}\n{list:?}", out.stdout, out.stderr);
    assert_eq!((list.len(), list[0].exit_code), (1, Some(0)), "{list:?}");
    let mail = json_file(&std::path::Path::new(&list[0].cwd).join("mail.json"));
    assert_eq!(mail["from"], "lead", "{mail}");
    let text = mail["text"].as_str().unwrap();
    assert!(text.contains("Rebase on main") && text.contains("then go on"), "{mail}");
}

/// A shutdown request arrives as a `shutdown` line with its request id; the worker
/// approves it, and the bridge stops the session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shutdown_request_arrives_as_a_feed_line_then_the_session_stops() {
    let p = Project::new();
    thread_run(&p, &[], &["T1"]);
    let c = p.client().await;
    let from = c.server_info().last_event_id;
    let approve = "id=$(printf '%s' \"$line\" | sed -n 's/.*\"request_id\":\"\\([^\"]*\\)\".*/\\1/p'); \
                   inbox control --type shutdown_approved --payload \"{\\\"request_id\\\":\\\"$id\\\"}\" >/dev/null; sleep 300";
    let script = format!("IFS= read -r first; {UP}; {}", feed_loop(&["shutdown"], approve));
    let mut b = bridge(&p, &script, &["--dispatch", "--live", "--shutdown-grace-seconds", "3600"]);
    let up = next_event(&c, from, &[EventType::ThreadProgress]).await;
    p.inbox().json_flag().args(["--agent", "lead", "shutdown", "--to", "w1"]).run().ok();
    let ended = next_event(&c, up.event_id, &[EventType::LaunchExited]).await;
    assert_eq!(ended.payload_json["session"]["state"], "stopped", "{}", ended.payload_json);
    let list = sessions(&c).await;
    let shutdown = json_file(&std::path::Path::new(&list[0].cwd).join("shutdown.json"));
    assert!(shutdown["request_id"].as_str().is_some_and(|r| !r.is_empty()), "{shutdown}");
    assert!(shutdown["text"].as_str().unwrap().contains("Shutdown requested"), "{shutdown}");
    b.kill().unwrap();
    b.wait().unwrap();
}

/// A live command session's own JSON lines on stdout (`text`, `tool`, `usage`) make a
/// readable transcript, as Claude Code's and Codex's events do: killed in the middle of its
/// work, its failure (the log's last lines) shows its text and its last tool call with its
/// arguments, the raw lines are kept beside the log, and its `usage` line is recorded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_command_sessions_lines_make_a_readable_transcript_and_its_usage_is_recorded() {
    use coord_proto::api::LaunchApiClient as _;
    let p = Project::new();
    thread_run(&p, &[], &["T1"]);
    let c = p.client().await;
    let from = c.server_info().last_event_id;
    let lines = [
        r#"{"type":"text","text":"Working."}"#,
        r#"{"type":"tool","name":"Bash","input":"make test"}"#,
        r#"{"type":"usage","input_tokens":120,"output_tokens":30,"cache_read_tokens":5,"cache_write_tokens":7,"cost_usd":0.25}"#,
    ];
    let say: String = lines.iter().map(|l| format!("echo '{l}'; ")).collect();
    let script = format!("IFS= read -r first; {UP}; {say}{}", feed_loop(&[], "true"));
    let mut b = bridge(&p, &script, &["--dispatch", "--live"]);
    // The usage line is recorded after the lines before it are in the log.
    next_event(&c, from, &[EventType::LaunchUsage]).await;
    let s = sessions(&c).await.pop().expect("the session");
    kill_group(s.pid);
    let ended = next_event(&c, from, &[EventType::LaunchExited]).await;
    let tail = ended.payload_json["session"]["log_tail"].as_str().unwrap_or_default().to_string();
    let has = |needle: &str| tail.lines().any(|l| l.ends_with(needle) && l.as_bytes().get(10) == Some(&b'T'));
    assert!(has(" assistant: Working.") && has(" tool Bash: make test"), "{tail}");
    let raw = std::fs::read_to_string(std::path::Path::new(&s.log_path).with_extension("jsonl")).unwrap_or_default();
    assert!(raw.contains(lines[1]), "{raw}");
    let t = orch(&p, &["task", "show", "--run", "R1", "--task", "T1"]);
    assert_eq!(t["attempts"][0]["status"], "failed", "{t}");
    let u = c.usage_show(UsageShowParams { run_id: "R1".into() }).await.expect("launch.usageShow").usage;
    assert_eq!((u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens), (120, 30, 5, 7));
    assert!((u.cost_usd - 0.25).abs() < 1e-9, "{u:?}");
    b.kill().unwrap();
    b.wait().unwrap();
}

/// `orch status --run R1`: the session's mode, in text and `--json`.
fn status_mode(p: &Project) -> (String, Value) {
    let text = p.orch().args(["status", "--run", "R1"]).run().ok().stdout;
    let json = orch(p, &["status", "--run", "R1"]);
    (text, json["sessions"][0]["mode"].clone())
}

/// A `--live` session is recorded live (`launch.sessionStart`'s `mode`), and `orch status`
/// says so in text and JSON.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn orch_status_says_a_live_session_runs_live() {
    let p = Project::new();
    thread_run(&p, &[], &["T1"]);
    let out = finish(bridge(
        &p,
        &format!("IFS= read -r first; {}", worker("true")),
        &["--dispatch", "--until-done", "--live"],
    ));
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let (text, mode) = status_mode(&p);
    assert_eq!(mode, "live", "{text}");
    assert!(text.contains("T1 a1 command live @w1"), "{text}");
}

/// A session started without `--live` is one-shot, and `orch status` says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn orch_status_says_a_session_without_live_input_runs_one_shot() {
    let p = Project::new();
    thread_run(&p, &[], &["T1"]);
    let out = finish(bridge(&p, &worker("true"), &["--dispatch", "--until-done"]));
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let (text, mode) = status_mode(&p);
    assert_eq!(mode, "one_shot", "{text}");
    assert!(text.contains("T1 a1 command one_shot @w1"), "{text}");
}

/// A live worker that takes every `task` turn on its feed: it claims the turn's thread,
/// notes the task in `tasks` and finishes it; it exits at the end of the feed.
const TAKES_EVERY_TASK: &str = "while IFS= read -r line; do case \"$line\" in *'\"kind\":\"task\"'*) \
    t=$(printf '%s' \"$line\" | sed -n 's/.*\"thread_id\":\"\\([^\"]*\\)\".*/\\1/p'); \
    k=$(printf '%s' \"$line\" | sed -n 's/.*\"task_id\":\"\\([^\"]*\\)\".*/\\1/p'); \
    inbox claim --agent \"$COORD_AGENT\" --thread \"$t\" >/dev/null && echo \"$k $$\" >> ../tasks && \
    inbox done --agent \"$COORD_AGENT\" --thread \"$t\" --summary finished >/dev/null;; esac; done";

/// With `--reuse-sessions`, w1's next task (T2, ready once T1 is done) is handed to the
/// session that did T1 as a new `task` turn: one process does both, each attempt has its
/// own session record naming that process, and the first record says where it went.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agents_next_task_is_a_new_turn_in_the_same_live_session() {
    let p = Project::new();
    thread_run(&p, &[], &["T1"]);
    let t2 = ["task", "add", "--run", "R1", "--id", "T2", "--title", "T2", "--kind", "thread", "--assign-to", "w1"];
    orch(&p, &[&t2[..], &["--depends-on", "T1"]].concat());
    let out = finish(bridge(&p, TAKES_EVERY_TASK, &["--dispatch", "--until-done", "--reuse-sessions"]));
    let c = p.client().await;
    let list = sessions(&c).await;
    assert_eq!(out.code, 0, "{}\n{}\n{list:?}", out.stdout, out.stderr);
    assert!(!out.stderr.contains("dispatch failed"), "T2 was dispatched once: {}", out.stderr);
    let tasks = std::fs::read_to_string(p.path().join(".agents/launch/R1/scratch/tasks")).unwrap_or_default();
    let pids: Vec<&str> = tasks.lines().map(|l| l.split(' ').nth(1).unwrap_or("")).collect();
    assert_eq!((tasks.lines().count(), pids.first() == pids.last()), (2, true), "one process did both: {tasks}");
    assert_eq!(list.len(), 2, "a session record per attempt: {list:?}");
    let (s1, s2) = (&list[0], &list[1]);
    assert_eq!((s1.task_id.as_str(), s2.task_id.as_str()), ("T1", "T2"), "{list:?}");
    assert_eq!((s1.pid, &s1.log_path, s2.mode), (s2.pid, &s2.log_path, SessionMode::Live), "{list:?}");
    assert!(s1.reason.as_deref().unwrap_or("").contains("handed over: the same process goes on with T2 a1"), "{s1:?}");
    assert_eq!((s2.state, s2.exit_code), (SessionState::Exited, Some(0)), "{s2:?}");
    assert_eq!(orch(&p, &["status", "--run", "R1"])["run"]["status"], "done");
}

/// A live worker that takes every `task` turn as [`TAKES_EVERY_TASK`] does (running `work`
/// before `done`, with the attempt in `$n`), except the turn of `task` attempt `attempt`:
/// there it says its last words and exits 3, leaving that attempt open (a crash).
fn crashes_on(task: &str, attempt: u32, work: &str) -> String {
    format!(
        "while IFS= read -r line; do case \"$line\" in *'\"kind\":\"task\"'*) \
         t=$(printf '%s' \"$line\" | sed -n 's/.*\"thread_id\":\"\\([^\"]*\\)\".*/\\1/p'); \
         k=$(printf '%s' \"$line\" | sed -n 's/.*\"task_id\":\"\\([^\"]*\\)\".*/\\1/p'); \
         n=$(printf '%s' \"$line\" | sed -n 's/.*\"attempt\":\\([0-9]*\\).*/\\1/p'); \
         inbox claim --agent \"$COORD_AGENT\" --thread \"$t\" >/dev/null || exit 4; \
         if [ \"$k a$n\" = '{task} a{attempt}' ]; then echo \"last words of $k a$n\"; exit 3; fi; \
         {work} && inbox done --agent \"$COORD_AGENT\" --thread \"$t\" --summary finished >/dev/null;; esac; done"
    )
}

/// The `result` message on `thread`: what the attempt's failure says.
fn result_on(p: &Project, thread: &str) -> Value {
    let v = p.inbox().json_flag().args(["--agent", "lead", "show", "--thread", thread]).run().ok().json();
    let msgs = v["messages"].as_array().cloned().unwrap_or_default();
    msgs.into_iter().rev().find(|m| m["kind"] == "result").unwrap_or_else(|| panic!("no result on {thread}: {v}"))
}

/// A session handed its agent's next task (`--reuse-sessions`) that crashes during that
/// task fails that attempt, not the one it finished: the attempt's session record ends
/// with the process's exit status and its last lines, the attempt fails with them (its
/// `result` message), and the task is retried as usual, in a fresh session that finishes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reused_session_that_crashes_on_its_next_task_fails_that_attempt_and_the_retry_finishes() {
    let p = Project::new();
    thread_run(&p, &["--auto-retry", "1"], &["T1"]);
    let t2 = ["task", "add", "--run", "R1", "--id", "T2", "--title", "T2", "--kind", "thread", "--assign-to", "w1"];
    orch(&p, &[&t2[..], &["--depends-on", "T1"]].concat());
    let out = finish(bridge(&p, &crashes_on("T2", 1, "true"), &["--dispatch", "--until-done", "--reuse-sessions"]));
    let c = p.client().await;
    let list = sessions(&c).await;
    assert_eq!(out.code, 0, "{}\n{}\n{list:?}", out.stdout, out.stderr);
    let of = |t: &str, a: u32| {
        list.iter().find(|s| s.task_id == t && s.attempt == a).unwrap_or_else(|| panic!("no {t} a{a}: {list:?}"))
    };
    let (t1, crashed, retry) = (of("T1", 1), of("T2", 1), of("T2", 2));
    assert_eq!(list.len(), 3, "{list:?}");
    assert!(t1.reason.as_deref().unwrap_or("").contains("handed over"), "{t1:?}");
    assert_eq!(t1.exit_code, None, "the first record ended at the hand-over: {t1:?}");
    assert_eq!((crashed.pid, crashed.state, crashed.exit_code), (t1.pid, SessionState::Exited, Some(3)), "{crashed:?}");
    let tail = crashed.log_tail.as_deref().unwrap_or_default();
    assert!(tail.contains("last words of T2 a1"), "its last lines: {crashed:?}");
    assert_ne!(retry.pid, crashed.pid, "the retry is a fresh session: {list:?}");
    assert_eq!((retry.state, retry.exit_code), (SessionState::Exited, Some(0)), "{retry:?}");
    let t = orch(&p, &["task", "show", "--run", "R1", "--task", "T2"]);
    let attempts = t["attempts"].as_array().unwrap();
    assert_eq!((attempts[0]["status"].as_str(), t["task"]["status"].as_str()), (Some("failed"), Some("done")), "{t}");
    let failure = result_on(&p, &crashed.thread_id);
    assert!(failure["summary"].as_str().unwrap_or("").contains("exited with code 3"), "{failure}");
    assert!(failure["body"].as_str().unwrap_or("").contains("last words of T2 a1"), "{failure}");
    let t1 = orch(&p, &["task", "show", "--run", "R1", "--task", "T1"]);
    assert_eq!(t1["attempts"].as_array().map(Vec::len), Some(1), "T1 is not failed by T2's crash: {t1}");
}

/// A live session parked while its task waits in the merge queue (issue 36) gets the task
/// back (a failed verify) as attempt 2 and crashes during it: attempt 2 fails with the
/// process's exit status and its last lines, attempt 1 is left as it was, and the task is
/// retried as usual, in a fresh session whose work passes the verify and merges.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_parked_session_that_crashes_on_its_returned_attempt_fails_it_and_the_retry_merges() {
    let p = coord_tests::git_project();
    let verify =
        p.write("verify.sh", "#!/bin/sh\nif grep -q BROKEN work.txt; then echo 'BROKEN in work.txt'; exit 1; fi\n");
    std::fs::set_permissions(&verify, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let v = verify.display().to_string();
    orch(&p, &["run", "create", "--goal", "g", "--id", "R1", "--auto-merge", "--verify", &v, "--auto-retry", "1"]);
    orch(&p, &["task", "add", "--run", "R1", "--id", "T1", "--title", "T1", "--assign-to", "w1"]);
    let work = "if [ \"$n\" = 1 ]; then echo BROKEN > work.txt; else echo fixed > work.txt; fi && \
                git add -A && git -c user.email=w@e -c user.name=w commit -q -m \"a$n\"";
    let script = crashes_on("T1", 2, work);
    let out = finish(bridge(&p, &script, &["--dispatch", "--until-done", "--live", "--merge-queue"]));
    let c = p.client().await;
    let list = sessions(&c).await;
    assert_eq!(out.code, 0, "{}\n{}\n{list:?}", out.stdout, out.stderr);
    let of = |a: u32| list.iter().find(|s| s.attempt == a).unwrap_or_else(|| panic!("no T1 a{a}: {list:?}"));
    let (first, crashed, retry) = (of(1), of(2), of(3));
    assert_eq!(list.len(), 3, "{list:?}");
    assert!(first.reason.as_deref().unwrap_or("").contains("handed over"), "{first:?}");
    assert_eq!(
        (crashed.pid, crashed.state, crashed.exit_code),
        (first.pid, SessionState::Exited, Some(3)),
        "{crashed:?}"
    );
    assert!(crashed.log_tail.as_deref().unwrap_or("").contains("last words of T1 a2"), "{crashed:?}");
    assert_ne!(retry.pid, crashed.pid, "the retry is a fresh session: {list:?}");
    let failure = result_on(&p, &crashed.thread_id);
    assert!(failure["body"].as_str().unwrap_or("").contains("last words of T1 a2"), "{failure}");
    let t = orch(&p, &["task", "show", "--run", "R1", "--task", "T1"]);
    let status: Vec<&str> = t["attempts"].as_array().unwrap().iter().map(|a| a["status"].as_str().unwrap()).collect();
    assert_eq!(status[1], "failed", "{t}");
    assert_eq!((status.len(), t["task"]["merge_state"].as_str()), (3, Some("merged")), "{t}");
    assert_eq!(coord_tests::git_in(p.path(), &["show", "orch/R1/integration:work.txt"]), "fixed\n");
}

/// A crashed live session's last lines reach its failure even when its output filter
/// (`--command-log`, as Claude Code's and Codex's) is slow to write them: the session's end
/// is recorded once the filter has ended. The test stops the filter, lets the session say
/// its last words and exit 3, and lets the filter go on only once the bridge has taken up
/// the session's end: its stop's last signal has ended the session's marker process.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_live_sessions_last_lines_reach_its_failure_when_its_filter_is_slow() {
    let p = Project::new();
    thread_run(&p, &[], &["T1"]);
    let c = p.client().await;
    let from = c.server_info().last_event_id;
    let gate = gate(&p);
    let marker = p.path().join("marker");
    let script = format!(
        "IFS= read -r first; {}; {UP}; read x < {}; echo 'last words'; exit 3",
        marked(&marker),
        gate.display()
    );
    let mut b = bridge(&p, &script, &["--dispatch", "--live"]);
    next_event(&c, from, &[EventType::ThreadProgress]).await;
    let s = sessions(&c).await.pop().expect("the session");
    let marker = pid_in(&marker);
    let filter = coord_tests::processes_with("COORD_FILTER_SESSION", &s.session_id);
    assert_eq!(filter.len(), 1, "the session's output filter: {filter:?}");
    let signal = |sig: &str| std::process::Command::new("kill").args([sig, &filter[0].to_string()]).status().unwrap();
    assert!(signal("-STOP").success());
    std::fs::write(&gate, "go\n").unwrap();
    let taken_up = coord_tests::wait_gone(marker, std::time::Duration::from_secs(120));
    assert!(signal("-CONT").success());
    assert!(taken_up, "the bridge never took up the session's end");
    let ended = next_event(&c, from, &[EventType::LaunchExited]).await;
    let tail = ended.payload_json["session"]["log_tail"].as_str().unwrap_or_default().to_string();
    assert!(tail.lines().last().is_some_and(|l| l.ends_with(" last words")), "{tail}");
    assert_eq!(ended.payload_json["session"]["exit_code"], 3, "{}", ended.payload_json);
    b.kill().unwrap();
    b.wait().unwrap();
}

/// A live session whose output a stray process holds open (one its stop cannot reach: a
/// session of its own, without `COORD_SESSION`) holds up its own end alone: while the
/// bridge waits for that output's last lines, another session's end is taken up and
/// recorded; the first one's end is recorded, with its last words, once the stray is gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_whose_output_a_stray_holds_open_holds_up_no_other_session() {
    let p = Project::new();
    thread_run(&p, &[], &["T1", "T2"]);
    let c = p.client().await;
    let from = c.server_info().last_event_id;
    let (gate, stray, marker) = (gate(&p), p.path().join("stray"), p.path().join("marker"));
    // T1 leaves the stray behind and crashes; T2 finishes once the test opens its gate.
    let script = format!(
        "IFS= read -r first; case \"$COORD_TASK\" in \
         T1) setsid env -u COORD_SESSION sleep 1000 & echo $! > {}; {}; {UP}; echo 'last words of T1'; exit 3;; \
         T2) {CLAIM}; read x < {}; {DONE}; while IFS= read -r line; do :; done;; esac",
        stray.display(),
        marked(&marker),
        gate.display()
    );
    // Its output wait far above the test's time: T1's end waits for the stray alone.
    let b = bridge(&p, &script, &["--dispatch", "--until-done", "--live", "--output-wait-seconds", "3600"]);
    next_event(&c, from, &[EventType::ThreadProgress]).await;
    let stray = Stray(pid_in(&stray));
    assert!(
        coord_tests::wait_gone(pid_in(&marker), std::time::Duration::from_secs(120)),
        "the bridge never took up T1's end"
    );
    // T2 goes on now, in a thread of its own: opening the gate waits for T2 to read it.
    std::thread::spawn(move || std::fs::write(gate, "go\n"));
    let ended = within("a session's end", next_event(&c, from, &[EventType::LaunchExited])).await;
    let t1 = sessions(&c).await.into_iter().find(|s| s.task_id == "T1").expect("T1's session");
    drop(stray);
    assert_eq!(ended.payload_json["session"]["task_id"], "T2", "{}", ended.payload_json);
    assert_eq!(t1.state, SessionState::Running, "T1's end waits for its output: {t1:?}");
    // The run fails with T1 (no retries).
    let out = coord_tests::finish_within(b, std::time::Duration::from_secs(300));
    let list = sessions(&c).await;
    assert_eq!(out.code, 1, "{}\n{}\n{list:?}", out.stdout, out.stderr);
    let t1 = list.iter().find(|s| s.task_id == "T1").expect("T1's session");
    assert_eq!(t1.exit_code, Some(3), "{t1:?}");
    assert!(t1.log_tail.as_deref().unwrap_or("").contains("last words of T1"), "{t1:?}");
}

/// The bridge does not wait for such a stray's end beyond its output wait
/// (`--output-wait-seconds`, none here): the session's end is recorded with its log as it
/// is, and the bridge says why its last lines may be missing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_whose_output_a_stray_holds_open_is_recorded_after_the_output_wait() {
    let p = Project::new();
    thread_run(&p, &[], &["T1"]);
    let c = p.client().await;
    let from = c.server_info().last_event_id;
    let stray = p.path().join("stray");
    let script = format!(
        "IFS= read -r first; setsid env -u COORD_SESSION sleep 1000 & echo $! > {}; {UP}; exit 3",
        stray.display()
    );
    let b = bridge(&p, &script, &["--dispatch", "--until-done", "--live", "--output-wait-seconds", "0"]);
    next_event(&c, from, &[EventType::ThreadProgress]).await;
    let _stray = Stray(pid_in(&stray));
    // The run fails with T1 (no retries).
    let out = coord_tests::finish_within(b, std::time::Duration::from_secs(300));
    let list = sessions(&c).await;
    assert_eq!((out.code, list[0].exit_code), (1, Some(3)), "{}\n{}\n{list:?}", out.stdout, out.stderr);
    assert!(out.stderr.contains("T1 a1: its output was still open 0s after it ended"), "{}", out.stderr);
}

/// A shell command that starts a marker process of the session and writes its pid to
/// `file`. It has a process group of its own, as an agent CLI's shell tools do, and the
/// session's `COORD_SESSION` (its output goes elsewhere): the bridge's last signal to the
/// session's processes, as it takes up the session's end, reaches it last, after the
/// session's group.
fn marked(file: &std::path::Path) -> String {
    format!("setsid sleep 1000 >/dev/null 2>&1 & echo $! > {}", file.display())
}

/// The pid a session's script wrote to `file`.
fn pid_in(file: &std::path::Path) -> i64 {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    text.trim().parse().unwrap_or_else(|e| panic!("{}: {e}: {text}", file.display()))
}

/// A stray process (the leader of a process group of its own), killed when dropped.
struct Stray(i64);

impl Drop for Stray {
    fn drop(&mut self) {
        kill_group_if_running(self.0);
    }
}
