//! `coord-launch --client opencode --live` with the real opencode (from npm, found by
//! `agent_cli`) against the scripted Chat Completions server (`mock_model::chat`): the
//! session is `opencode serve` driven by `coord-launch --opencode-live` (opencode_live.rs),
//! one opencode session per attempt, each committed message for the worker written into it
//! as a new prompt. A worker asks and gets the answer as a new turn of the same session;
//! mail and a shutdown request arrive as turns; mail that comes while a tool runs reaches the
//! model before its turn can end (what the Stop hook does for Claude Code, which opencode's
//! plugin cannot do in `opencode run`); a crash fails the attempt with its running tool call
//! in the log; a two-task run finishes; `orch status` says `live`; git stays clean. Every
//! wait is on an event, a process's end or a log line (followed with `tail -F`, not polled).

#[path = "support/launch.rs"]
#[allow(dead_code, reason = "this suite uses its waits and listings, not its command workers")]
mod support;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use coord_client::Client;
use coord_proto::types::*;
use coord_tests::mock_model::chat::{Chat, Opencode};
use coord_tests::mock_model::{MockModel, Scenario, Turn, shell, text};
use coord_tests::on_thread;
use coord_tests::{Daemon, Project, agent_cli, bin, finish, git_in, git_project};
use support::{next_event, orch, sessions};

/// A run R1 of opencode sessions, the scripted model, and the bridge on it.
struct Live {
    p: Project,
    _d: Daemon,
    mock: MockModel,
    _home: Opencode,
    b: Child,
    c: Client,
    from: i64,
}

/// R1 with `tasks` (id, and the task it depends on) for w1: code tasks (merged as they
/// finish) in worktrees dispatch sets up with no hand-written configuration (the daemon
/// finds opencode on its `PATH`, so it installs `opencode.json` and coordd's plugin), or
/// thread tasks; the model scripted by `script` (given the project's directory); the bridge
/// on it with `--live` (and `extra`), dispatching until done. The grace after a
/// session's feed closed is long (60 s): the model's last reply comes after the thread is
/// done, and on a loaded machine that can take more than a few seconds.
async fn live_run(
    program: &Path,
    code: bool,
    tasks: &[(&str, Option<&str>)],
    script: impl FnOnce(&Path) -> Scenario,
    extra: &[&str],
) -> Live {
    let p = if code { git_project() } else { Project::new() };
    let path = format!("{}:{}", program.parent().unwrap().display(), std::env::var("PATH").unwrap_or_default());
    let d = p.serve_with(&[], &[("PATH", &path)]);
    let toml = format!("[defaults]\nclient = \"opencode\"\nprogram = \"{}\"\n", program.display());
    std::fs::write(p.paths().db.parent().unwrap().join("launch.toml"), toml).unwrap();
    let merged: &[&str] = if code { &["--auto-merge"] } else { &[] };
    orch(&p, &[&["run", "create", "--goal", "g", "--id", "R1"], merged].concat());
    for (t, after) in tasks {
        let mut a = vec!["task", "add", "--run", "R1", "--id", t, "--title", t, "--assign-to", "w1"];
        if !code {
            a.extend(["--kind", "thread"]);
        }
        a.extend(after.iter().flat_map(|d| ["--depends-on", *d]));
        orch(&p, &a);
    }
    let mock = MockModel::start(Chat, script(p.path()));
    let home = Opencode::new(program, p.path(), &mock);
    let c = p.client().await;
    let from = c.server_info().last_event_id;
    let flags = ["--run", "R1", "--grace-seconds", "60", "--dispatch", "--until-done", "--live"];
    let mut run = p.launch().args(flags).args(extra);
    for (k, v) in home.session_env() {
        run = run.env(&k, &v);
    }
    Live { b: run.spawn(), p, _d: d, mock, _home: home, c, from }
}

/// Claim the thread and report progress (the `thread.progress` a test waits for).
fn up() -> String {
    format!(
        "{} && {}",
        on_thread("claim", ">/dev/null"),
        on_thread("update", "--status in_progress --summary up >/dev/null")
    )
}

/// Commit a file named after the task (code tasks), then finish the thread.
fn commit_and_done() -> String {
    format!(
        "{{ [ -z \"$COORD_WORKTREE\" ] || {{ echo work > \"$COORD_TASK.txt\" && git add \"$COORD_TASK.txt\" && \
         git -c user.email=w@e -c user.name=w commit -q -m \"$COORD_TASK\"; }}; }} && {}",
        on_thread("done", "--summary finished >/dev/null")
    )
}

/// Wait until the model has been asked for its `turn`-th reply.
fn asked(m: &MockModel, turn: usize) {
    let r = tokio::task::block_in_place(|| m.wait_for(Duration::from_secs(120), |r| r.turn == Some(turn)));
    assert!(r.is_some(), "the model was never asked for reply {turn}:\n{}", m.transcript());
}

/// Follow `log` (written by another process, with no event to wait on) with `tail -F`
/// until a line holds `needle` (for at most 120 s: a guard against a hang).
fn log_shows(log: &Path, needle: &str) {
    let mut tail = Command::new("timeout")
        .args(["120", "tail", "-n", "+1", "-F", &log.display().to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("tail");
    let found = BufReader::new(tail.stdout.take().unwrap()).lines().map_while(Result::ok).any(|l| l.contains(needle));
    let _ = tail.kill();
    let _ = tail.wait();
    assert!(found, "the log never held {needle}");
}

/// The run's usage once it is what the model reported: the driver reports each step's
/// totals with `launch.usage`, so this follows those events until the totals are whole.
async fn usage_reaches(c: &Client, from: i64, m: &MockModel) -> Usage {
    use coord_proto::api::LaunchApiClient as _;
    let sent = m.reported_usage();
    let mut after = from;
    loop {
        let u = c.usage_show(UsageShowParams { run_id: "R1".into() }).await.expect("launch.usageShow").usage;
        if (u.input_tokens, u.output_tokens) == (sent.input as i64, sent.output as i64) {
            return u;
        }
        after = next_event(c, after, &[EventType::LaunchUsage]).await.event_id;
    }
}

/// The worker asks and ends its turn; the lead answers; the answer is a new prompt of the
/// same opencode session (one `session.created` in the raw events), and the task finishes in
/// one session and one attempt, recorded live, with the usage and cost the model reported;
/// the worktree and the repository stay clean.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_opencode_session_gets_the_answer_as_a_new_turn_and_finishes_in_one_attempt() {
    let Some(program) = agent_cli("opencode") else { return };
    let turns = coord_tests::mock_model::live::asks_then(&bin("inbox"), &commit_and_done());
    let l = live_run(&program, true, &[("T1", None)], |_| Scenario::new(turns), &[]).await;
    next_event(&l.c, l.from, &[EventType::TaskBlocked]).await;
    asked(&l.mock, 1);
    orch(&l.p, &["answer", "--run", "R1", "--task", "T1", "--summary", "Use SQLite"]);
    let out = finish(l.b);
    let list = sessions(&l.c).await;
    assert_eq!(out.code, 0, "{}\n{list:?}\n{}", out.stderr, l.mock.transcript());
    assert_eq!(list.len(), 1, "one session: {list:?}");
    assert_eq!((list[0].attempt, list[0].exit_code, list[0].mode), (1, Some(0), SessionMode::Live), "{list:?}");
    l.mock.assert_user_input(2, "Use SQLite");
    let first = l.mock.turn_requests()[0].body.to_string();
    assert!(first.contains("END YOUR TURN") && first.contains("Your task is T1"), "the live prompt: {first}");
    let raw = std::fs::read_to_string(Path::new(&list[0].log_path).with_extension("jsonl")).unwrap_or_default();
    assert_eq!(raw.matches("\"session.created\"").count(), 1, "one opencode session:\n{raw}");
    let u = usage_reaches(&l.c, l.from, &l.mock).await;
    assert!(u.cost_usd > 0.0, "opencode reports a cost: {u:?}");
    let status = l.p.orch().args(["status", "--run", "R1"]).run().ok().stdout;
    assert!(status.contains("T1 a1 opencode live @w1"), "{status}");
    let wt = PathBuf::from(&list[0].cwd);
    assert_eq!(git_in(&wt, &["status", "--porcelain"]), "", "the worktree");
    assert_eq!(git_in(l.p.path(), &["status", "--porcelain"]), "", "the repository root");
}

/// Mail sent to a working live opencode session arrives as a new prompt of its session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mail_to_a_working_live_opencode_session_arrives_as_a_turn() {
    let Some(program) = agent_cli("opencode") else { return };
    let turns = vec![
        Turn::reply(vec![shell(&up())]),
        Turn::reply(vec![text("Working.")]),
        Turn::reply(vec![shell(&commit_and_done())]),
        Turn::reply(vec![text("Done.")]),
    ];
    let l = live_run(&program, false, &[("T1", None)], |_| Scenario::new(turns), &[]).await;
    next_event(&l.c, l.from, &[EventType::ThreadProgress]).await;
    asked(&l.mock, 1);
    l.p.inbox().args(["--agent", "lead", "send", "--to", "w1", "--summary", "Rebase on main"]).run().ok();
    let out = finish(l.b);
    assert_eq!(out.code, 0, "{}\n{}", out.stderr, l.mock.transcript());
    l.mock.assert_user_input(2, "Rebase on main");
    assert_eq!(sessions(&l.c).await.len(), 1);
}

/// A shutdown request reaches a live opencode session as a turn (with its request id); the
/// model approves it, and the bridge stops the session: the driver and `opencode serve`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shutdown_request_reaches_a_live_opencode_session_as_a_turn_then_it_stops() {
    let Some(program) = agent_cli("opencode") else { return };
    let inbox = bin("inbox").display().to_string();
    let approve = format!(
        "id=$({inbox} --agent \"$COORD_AGENT\" requests --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"requests\"][0][\"request_id\"])') && \
         {inbox} --agent \"$COORD_AGENT\" control --type shutdown_approved --payload \"{{\\\"request_id\\\":\\\"$id\\\"}}\" >/dev/null"
    );
    let turns = vec![
        Turn::reply(vec![shell(&up())]),
        Turn::reply(vec![text("Working.")]),
        Turn::reply(vec![shell(&approve)]),
        Turn::reply(vec![text("Stopped.")]),
    ];
    let mut l = live_run(&program, false, &[("T1", None)], |_| Scenario::new(turns), &[]).await;
    let up = next_event(&l.c, l.from, &[EventType::ThreadProgress]).await;
    asked(&l.mock, 1);
    l.p.inbox().args(["--agent", "lead", "shutdown", "--to", "w1", "--reason", "run over"]).run().ok();
    let ended = next_event(&l.c, up.event_id, &[EventType::LaunchExited]).await;
    let s = &ended.payload_json["session"];
    assert_eq!(s["state"].as_str(), Some("stopped"), "{s}\n{}", l.mock.transcript());
    assert_eq!(s["reason"].as_str(), Some("stopped: shutdown approved"), "{s}\n{}", l.mock.transcript());
    l.mock.assert_user_input(2, "Shutdown requested");
    let left = coord_tests::processes_with("COORD_SESSION", s["session_id"].as_str().unwrap());
    assert!(left.is_empty(), "the session's processes are gone: {left:?}");
    l.b.kill().unwrap();
    l.b.wait().unwrap();
}

/// What Claude Code's Stop hook does (a turn does not end with unread mail), which the
/// plugin cannot do in `opencode run` (docs/agent-hooks.md, "opencode"): mail that comes
/// while the model's tool runs is written into the session at once, and opencode gives it
/// to the model with the tool's result, in the same loop, before the model can end its
/// turn. Here the tool itself waits until the driver wrote the mail in (its log says so;
/// at most 120 s).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mail_that_comes_while_a_tool_runs_reaches_the_model_before_its_turn_can_end() {
    let Some(program) = agent_cli("opencode") else { return };
    let send =
        format!("{} --agent lead send --to w1 --summary 'Also update the README' >/dev/null", bin("inbox").display());
    let log = "\"$(dirname \"$COORD_DB\")/launch/$COORD_RUN/logs/$COORD_TASK-a$COORD_ATTEMPT.log\"";
    let wait = format!("timeout 120 tail -n +1 -F {log} 2>/dev/null | grep -m1 -q 'user (mail)'");
    let turns = vec![
        Turn::reply(vec![shell(&format!("{} && {send} && {wait}", up()))]),
        Turn::reply(vec![shell(&commit_and_done())]),
        Turn::reply(vec![text("Done.")]),
    ];
    let l = live_run(&program, true, &[("T1", None)], |_| Scenario::new(turns), &[]).await;
    let out = finish(l.b);
    let list = sessions(&l.c).await;
    assert_eq!(out.code, 0, "{}\n{list:?}\n{}", out.stderr, l.mock.transcript());
    l.mock.assert_user_input(1, "Also update the README");
    assert_eq!((list.len(), list[0].exit_code), (1, Some(0)), "one session: {list:?}");
}

/// A live opencode session whose server dies in the middle of a tool call: its attempt
/// fails, and its failure (the log's last lines) names that call; the raw events are kept
/// beside the log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_live_opencode_sessions_failure_shows_its_last_tool_call() {
    let Some(program) = agent_cli("opencode") else { return };
    let turns = vec![Turn::reply(vec![shell(&format!("{} && tail -f /dev/null", up()))])];
    let mut l = live_run(&program, false, &[("T1", None)], |_| Scenario::new(turns), &[]).await;
    let up = next_event(&l.c, l.from, &[EventType::ThreadProgress]).await;
    let first = sessions(&l.c).await.pop().expect("the session");
    tokio::task::block_in_place(|| log_shows(Path::new(&first.log_path), "tail -f /dev/null (running)"));
    // The session's process is the driver; opencode serve is its child.
    let children = std::fs::read_to_string(format!("/proc/{0}/task/{0}/children", first.pid)).unwrap_or_default();
    let server = children.split_whitespace().next().unwrap_or_else(|| panic!("no server under {first:?}"));
    assert!(Command::new("kill").args(["-KILL", server]).status().unwrap().success());
    let ended = next_event(&l.c, up.event_id, &[EventType::LaunchExited]).await;
    let s = &ended.payload_json["session"];
    let tail = s["log_tail"].as_str().unwrap_or_default();
    let last = tail.lines().last().unwrap_or_default();
    assert!(last.contains("unfinished tool call: tool bash") && last.contains("tail -f /dev/null"), "{tail}");
    assert!(tail.contains("opencode serve ended (killed by signal 9)"), "{tail}");
    assert_ne!(s["exit_code"], serde_json::json!(0), "{s}");
    let raw = Path::new(s["log_path"].as_str().unwrap()).with_extension("jsonl");
    assert!(
        std::fs::read_to_string(&raw).unwrap_or_default().contains("\"message.part.updated\""),
        "{}",
        raw.display()
    );
    let t = orch(&l.p, &["task", "show", "--run", "R1", "--task", "T1"]);
    assert_eq!(t["attempts"][0]["status"], "failed", "{t}");
    l.b.kill().unwrap();
    l.b.wait().unwrap();
}

/// A two-task live run with the bridge: T2 (after T1) starts once T1 is merged, from T1's
/// work, and both finish, each in a live session that exits 0; git stays clean.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_two_task_live_opencode_run_with_the_bridge_finishes() {
    let Some(program) = agent_cli("opencode") else { return };
    let work = format!(
        "{{ [ \"$COORD_TASK\" = T1 ] || [ -f T1.txt ]; }} && {} && {}",
        on_thread("claim", ">/dev/null"),
        commit_and_done()
    );
    let session = || vec![Turn::reply(vec![shell(&work)]), Turn::reply(vec![text("Done.")])];
    let l = live_run(
        &program,
        true,
        &[("T1", None), ("T2", Some("T1"))],
        |_| Scenario::new([session(), session()].concat()),
        &[],
    )
    .await;
    let out = finish(l.b);
    let list = sessions(&l.c).await;
    assert_eq!(out.code, 0, "{}\n{list:?}\n{}", out.stderr, l.mock.transcript());
    let done: Vec<(&str, Option<i32>, SessionMode)> =
        list.iter().map(|s| (s.task_id.as_str(), s.exit_code, s.mode)).collect();
    assert_eq!(done, [("T1", Some(0), SessionMode::Live), ("T2", Some(0), SessionMode::Live)], "{list:?}");
    let integration = git_in(l.p.path(), &["ls-tree", "--name-only", "orch/R1/integration"]);
    assert!(integration.lines().any(|f| f == "T1.txt") && integration.lines().any(|f| f == "T2.txt"), "{integration}");
    assert_eq!(git_in(l.p.path(), &["status", "--porcelain"]), "", "the repository root");
    for s in &list {
        assert_eq!(git_in(Path::new(&s.cwd), &["status", "--porcelain"]), "", "{}'s worktree", s.task_id);
    }
}

/// `--reuse-sessions` (issue 33): w1's T2, ready once T1 is done, is handed to the opencode
/// session that did T1 as a new prompt (the model's third request carries T2's prompt); one
/// process does both tasks, each attempt with its session record.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reused_live_opencode_session_gets_the_next_task_as_a_new_turn() {
    let Some(program) = agent_cli("opencode") else { return };
    let tasks = [("T1", None), ("T2", Some("T1"))];
    let script = |dir: &Path| coord_tests::mock_model::live::two_tasks_one_by_one(&bin("inbox"), "w1", dir);
    let l = live_run(&program, false, &tasks, script, &["--reuse-sessions"]).await;
    let out = finish(l.b);
    let list = sessions(&l.c).await;
    assert_eq!(out.code, 0, "{}\n{list:?}\n{}", out.stderr, l.mock.transcript());
    assert_eq!(list.len(), 2, "a session record per attempt: {list:?}");
    assert_eq!((list[0].pid, &list[1].task_id), (list[1].pid, &"T2".to_string()), "one process: {list:?}");
    assert_eq!(list[1].exit_code, Some(0), "{list:?}");
    l.mock.assert_user_input(2, "Your task is T2");
}
