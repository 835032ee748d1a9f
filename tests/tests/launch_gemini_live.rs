//! `coord-launch --client gemini --live` with the real Gemini CLI (from npm, found by
//! `agent_cli`) against the scripted Gemini API (`mock_model::gemini`), in code worktrees
//! dispatch set up with no hand-written configuration: the session is `gemini --acp`,
//! driven by `coord-launch --gemini-live` (gemini_live.rs), and whatever is committed for
//! the worker comes to the same session as a new prompt. Every wait is on an event, a
//! request reaching the mock, or a process's end.

use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::Duration;

use coord_client::Client;
use coord_proto::types::*;
use coord_tests::mock_model::gemini::{Gemini, GeminiCli};
use coord_tests::mock_model::{MockModel, Scenario, Turn, shell, text};
use coord_tests::on_thread;
use coord_tests::{
    Project, agent_cli, answer_permission, descendants, finish, git_in, git_project, next_run_event, ok_as,
};
use serde_json::{Value, json};

/// The scripted model, and the harness that keeps Gemini's throwaway home.
struct Model {
    mock: MockModel,
    cli: GeminiCli,
}

fn orch(p: &Project, args: &[&str]) -> Value {
    p.orch().json_flag().args(args).run().ok().json()
}

/// A code-task project whose daemon finds `program` on its `PATH` (so dispatch installs
/// Gemini's settings in the worktrees), `.agents/launch.toml` naming the client and its
/// model, and run R1 (merged as tasks finish) with `tasks` for w1, each after the one
/// before.
fn project(program: &Path, tasks: &[&str]) -> (Project, coord_tests::Daemon) {
    let p = git_project();
    let path = format!("{}:{}", program.parent().unwrap().display(), std::env::var("PATH").unwrap_or_default());
    let d = p.serve_with(&[], &[("PATH", &path)]);
    let toml =
        format!("[defaults]\nclient = \"gemini\"\nprogram = \"{}\"\nmodel = \"gemini-2.5-flash\"\n", program.display());
    std::fs::write(p.paths().db.parent().unwrap().join("launch.toml"), toml).unwrap();
    orch(&p, &["run", "create", "--goal", "g", "--id", "R1", "--auto-merge"]);
    for (i, t) in tasks.iter().enumerate() {
        let mut args = vec!["task", "add", "--run", "R1", "--id", t, "--title", t, "--assign-to", "w1"];
        if i > 0 {
            args.extend(["--depends-on", tasks[i - 1]]);
        }
        orch(&p, &args);
    }
    (p, d)
}

fn model(program: &Path, dir: &Path, turns: Vec<Turn>) -> Model {
    let mock = MockModel::start(Gemini, Scenario::new(turns));
    let cli = GeminiCli::new(program, dir, &mock);
    Model { mock, cli }
}

/// The bridge on R1, live, dispatching, until the run is done. Its grace (how long a
/// session whose input it closed may take to end) covers the prompt still running on a
/// loaded machine.
fn bridge(p: &Project, m: &Model) -> Child {
    let mut run = p.launch().args(["--run", "R1", "--grace-seconds", "30", "--dispatch", "--until-done", "--live"]);
    for (k, v) in m.cli.session_env() {
        run = run.env(&k, &v);
    }
    run.spawn()
}

async fn sessions(c: &Client) -> Vec<LaunchSession> {
    use coord_proto::api::LaunchApiClient;
    c.session_list(SessionListParams { run_id: Some("R1".into()), ..Default::default() }).await.expect("list").sessions
}

/// Claim the thread and report it in progress.
fn claim_and_progress() -> String {
    format!(
        "{} && {}",
        on_thread("claim", ">/dev/null"),
        on_thread("update", "--status in_progress --summary up >/dev/null")
    )
}

/// Commit a file and finish the task.
fn commit_and_finish() -> String {
    format!(
        "echo x > x.txt && git add x.txt && git -c user.email=w@e -c user.name=w commit -q -m x && {}",
        on_thread("done", "--summary finished >/dev/null")
    )
}

/// A session's turns: `first`'s shell line, a text-only reply (`between`: the session
/// sits idle, its turn over), then the work committed and the task finished.
fn turns_around(first: &str, between: &str) -> Vec<Turn> {
    vec![
        Turn::reply(vec![shell(first)]),
        Turn::reply(vec![text(between)]),
        Turn::reply(vec![shell(&commit_and_finish())]),
        Turn::reply(vec![text("Done.")]),
    ]
}

/// Wait until the model has been asked for its `turn`-th reply.
fn asked(m: &Model, turn: usize) {
    let r = tokio::task::block_in_place(|| m.mock.wait_for(Duration::from_secs(180), |r| r.turn == Some(turn)));
    assert!(r.is_some(), "the model was never asked for reply {turn}:\n{}", m.mock.transcript());
}

/// The request for the model's `turn`-th reply carries `text` as the user's input: it came
/// as a new prompt of the same conversation.
fn came_as_a_prompt(m: &Model, turn: usize, text: &str) {
    let r = m.mock.turn_requests().into_iter().find(|r| r.turn == Some(turn)).expect("the request after the prompt");
    assert!(
        r.user_input.iter().any(|u| u.contains(text)),
        "'{text}' did not come as a prompt: {:?}\n{}",
        r.user_input,
        m.mock.transcript()
    );
}

/// The worktree and the repository root are clean.
fn git_clean(p: &Project, s: &LaunchSession) {
    assert_eq!(git_in(&PathBuf::from(&s.cwd), &["status", "--porcelain"]), "", "the worktree");
    assert_eq!(git_in(p.path(), &["status", "--porcelain"]), "", "the repository root");
}

/// The worker asks and ends its turn; the lead answers while the session sits idle; the
/// answer comes to the same Gemini session as a new prompt, and the task finishes in one
/// session and one attempt, recorded live, with the session's tokens.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_gemini_session_gets_the_answer_as_a_new_prompt_and_finishes_in_one_attempt() {
    let Some(program) = agent_cli("gemini") else { return };
    let (p, _d) = project(&program, &["T1"]);
    let ask = format!(
        "{} && {}",
        claim_and_progress(),
        on_thread("update", "--status blocked --summary 'Which db?' >/dev/null")
    );
    let m = model(&program, p.path(), turns_around(&ask, "I asked the lead; ending my turn."));
    let c = p.client().await;
    let from = c.server_info().last_event_id;
    let b = bridge(&p, &m);
    next_run_event(&c, "R1", from, &[EventType::TaskBlocked]).await;
    asked(&m, 1);
    orch(&p, &["answer", "--run", "R1", "--task", "T1", "--summary", "Use SQLite"]);
    let out = finish(b);
    let list = sessions(&c).await;
    assert_eq!(out.code, 0, "{}\n{list:?}\n{}", out.stderr, m.mock.transcript());
    assert_eq!(list.len(), 1, "one session: {list:?}");
    assert_eq!((list[0].attempt, list[0].exit_code, list[0].mode), (1, Some(0), SessionMode::Live), "{list:?}");
    came_as_a_prompt(&m, 2, "Use SQLite");
    let log = std::fs::read_to_string(&list[0].log_path).unwrap();
    assert_eq!(log.matches("gemini session ").count(), 1, "one Gemini session:\n{log}");
    use coord_proto::api::LaunchApiClient;
    let usage = c.usage_show(UsageShowParams { run_id: "R1".into() }).await.unwrap().usage;
    assert!(usage.input_tokens >= 400 && usage.output_tokens >= 80 && usage.cost_usd == 0.0, "{usage:?}");
    git_clean(&p, &list[0]);
}

/// Mail sent to a working live Gemini session comes to it as a new prompt.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mail_to_a_working_live_gemini_session_arrives_as_a_prompt() {
    let Some(program) = agent_cli("gemini") else { return };
    let (p, _d) = project(&program, &["T1"]);
    let m = model(&program, p.path(), turns_around(&claim_and_progress(), "Working."));
    let c = p.client().await;
    let from = c.server_info().last_event_id;
    let b = bridge(&p, &m);
    next_run_event(&c, "R1", from, &[EventType::ThreadProgress]).await;
    asked(&m, 1);
    p.inbox().args(["--agent", "lead", "send", "--to", "w1", "--summary", "Rebase on main"]).run().ok();
    let out = finish(b);
    assert_eq!(out.code, 0, "{}\n{}", out.stderr, m.mock.transcript());
    came_as_a_prompt(&m, 2, "Rebase on main");
    assert_eq!(sessions(&c).await.len(), 1);
}

/// A shutdown request comes to a live Gemini session as a turn of its feed; Gemini's
/// BeforeAgent hook (which runs in ACP mode) answers it as the prompt is submitted, and
/// the bridge stops the session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shutdown_request_reaches_a_live_gemini_session_as_a_turn_then_it_stops() {
    let Some(program) = agent_cli("gemini") else { return };
    let (p, _d) = project(&program, &["T1"]);
    let turns = vec![
        Turn::reply(vec![shell(&claim_and_progress())]),
        Turn::reply(vec![text("Working.")]),
        Turn::reply(vec![text("Stopping.")]),
    ];
    let m = model(&program, p.path(), turns);
    let c = p.client().await;
    let from = c.server_info().last_event_id;
    let mut b = bridge(&p, &m);
    let up = next_run_event(&c, "R1", from, &[EventType::ThreadProgress]).await;
    asked(&m, 1);
    p.inbox().args(["--agent", "lead", "shutdown", "--to", "w1", "--reason", "run over"]).run().ok();
    let ended = next_run_event(&c, "R1", up.event_id, &[EventType::LaunchExited]).await;
    let s = &ended.payload_json["session"];
    assert_eq!(s["state"].as_str(), Some("stopped"), "{s}\n{}", m.mock.transcript());
    assert_eq!(s["reason"].as_str(), Some("stopped: shutdown approved"), "{s}\n{}", m.mock.transcript());
    let log = std::fs::read_to_string(s["log_path"].as_str().unwrap()).unwrap();
    assert!(log.contains("turn (shutdown): [control] from lead"), "{log}");
    b.kill().unwrap();
    b.wait().unwrap();
}

/// A gated command in a live Gemini session (whose BeforeTool hook does not run in ACP
/// mode) goes to the lead through the driver's gate; the lead denies it, the command does
/// not run, and the lead's reason comes to the model as the next prompt.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gated_command_in_a_live_gemini_session_is_denied_with_the_leads_reason() {
    let Some(program) = agent_cli("gemini") else { return };
    let (p, _d) = project(&program, &["T1"]);
    ok_as(&p, "lead", &["policy", "lead", "lead"]);
    ok_as(&p, "lead", &["policy", "gate", "Bash(git push*)"]);
    let turns = vec![
        Turn::reply(vec![shell(&claim_and_progress())]),
        Turn::reply(vec![shell("git push origin main && touch pushed.txt")]),
        Turn::reply(vec![text("The push was cancelled.")]),
        Turn::reply(vec![shell(&commit_and_finish())]),
        Turn::reply(vec![text("Done.")]),
    ];
    let m = model(&program, p.path(), turns);
    let lead = p.client().await;
    let from = lead.server_info().last_event_id;
    let b = bridge(&p, &m);
    let request = answer_permission(&lead, "lead", from, json!({"approved": false, "reason": "no pushes today"})).await;
    assert_eq!(request.payload_json["input"]["command"], "git push origin main && touch pushed.txt", "{request:?}");
    let out = finish(b);
    assert_eq!(out.code, 0, "{}\n{}", out.stderr, m.mock.transcript());
    came_as_a_prompt(&m, 3, "Denied by lead: no pushes today");
    let list = sessions(&lead).await;
    assert_eq!(list.len(), 1, "one session: {list:?}");
    assert!(!PathBuf::from(&list[0].cwd).join("pushed.txt").exists(), "the denied command ran");
}

/// The shell line of a two-task run's worker: T2's session must see T1's merged file, then
/// each claims, commits a file named after its task and finishes.
fn stacked_work() -> String {
    format!(
        "{{ [ \"$COORD_TASK\" = T1 ] || [ -f T1.txt ]; }} && {} && \
         echo work > \"$COORD_TASK.txt\" && git add \"$COORD_TASK.txt\" && \
         git -c user.email=w@e -c user.name=w commit -q -m \"$COORD_TASK\" && {}",
        on_thread("claim", ">/dev/null"),
        on_thread("done", "--summary finished >/dev/null")
    )
}

/// A two-task live run with the bridge: T2 (after T1) starts from T1's merged work, both
/// finish, each in one live session that exits 0; git stays clean.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_two_task_live_gemini_run_with_the_bridge_finishes() {
    let Some(program) = agent_cli("gemini") else { return };
    let (p, _d) = project(&program, &["T1", "T2"]);
    let session = || vec![Turn::reply(vec![shell(&stacked_work())]), Turn::reply(vec![text("Done.")])];
    let m = model(&program, p.path(), [session(), session()].concat());
    let c = p.client().await;
    let out = finish(bridge(&p, &m));
    assert_eq!(out.code, 0, "{}\n{}", out.stderr, m.mock.transcript());
    let status = orch(&p, &["status", "--run", "R1"]);
    assert_eq!(status["run"]["status"], "done", "{status}");
    let modes: Vec<&Value> = status["sessions"].as_array().unwrap().iter().map(|s| &s["mode"]).collect();
    assert_eq!(modes, [&json!("live"), &json!("live")], "orch status says each session's mode: {status}");
    let list = sessions(&c).await;
    let done: Vec<_> = list.iter().map(|s| (s.task_id.as_str(), s.exit_code, s.mode)).collect();
    assert_eq!(done, [("T1", Some(0), SessionMode::Live), ("T2", Some(0), SessionMode::Live)], "{list:?}");
    let integration = git_in(p.path(), &["ls-tree", "--name-only", "orch/R1/integration"]);
    assert!(integration.lines().any(|f| f == "T1.txt") && integration.lines().any(|f| f == "T2.txt"), "{integration}");
    for s in &list {
        git_clean(&p, s);
    }
}

/// A live Gemini session whose Gemini dies in the middle of a tool call: its attempt fails,
/// and its failure (the log's last lines) names that call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_live_gemini_sessions_failure_shows_its_last_tool_call() {
    let Some(program) = agent_cli("gemini") else { return };
    let (p, _d) = project(&program, &["T1"]);
    let turns = vec![Turn::reply(vec![shell(&format!("{} && sleep 300", claim_and_progress()))])];
    let m = model(&program, p.path(), turns);
    let c = p.client().await;
    let from = c.server_info().last_event_id;
    let mut b = bridge(&p, &m);
    let up = next_run_event(&c, "R1", from, &[EventType::ThreadProgress]).await;
    let first = sessions(&c).await.pop().expect("the session");
    // The session's process is the driver; Gemini (node, which may run itself again as
    // its child) is below it: the deepest `--acp` process dies.
    let acp = |p: &i64| {
        std::fs::read(format!("/proc/{p}/cmdline")).is_ok_and(|c| c.split(|b| *b == 0).any(|a| a == b"--acp"))
    };
    let gemini = descendants(first.pid).into_iter().rfind(acp).unwrap_or_else(|| panic!("no Gemini under {first:?}"));
    assert!(std::process::Command::new("kill").args(["-KILL", &gemini.to_string()]).status().unwrap().success());
    let ended = next_run_event(&c, "R1", up.event_id, &[EventType::LaunchExited]).await;
    let s = &ended.payload_json["session"];
    let tail = s["log_tail"].as_str().unwrap_or_default();
    let last = tail.lines().last().unwrap_or_default();
    assert!(last.contains("unfinished tool call: tool execute: ") && last.contains("sleep 300"), "{tail}");
    assert!(tail.contains("gemini --acp ended ("), "{tail}");
    assert_ne!(s["exit_code"], json!(0), "{s}");
    let t = orch(&p, &["task", "show", "--run", "R1", "--task", "T1"]);
    assert_eq!(t["attempts"][0]["status"], "failed", "{t}");
    b.kill().unwrap();
    b.wait().unwrap();
}
