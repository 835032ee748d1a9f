//! `coord-launch --client opencode|gemini` with the real CLIs (from npm, found by
//! `agent_cli`) against the scripted model servers (`mock_model::chat` for opencode,
//! `mock_model::gemini` for Gemini CLI), in code worktrees dispatch set up with no
//! hand-written configuration (the daemon finds the CLI on its `PATH`, so it installs the
//! CLI's files): a session claims its task, reports progress, asks and gets the lead's
//! answer, and finishes, with its usage recorded; a crashed session's retry finishes; a
//! cancel stops every process of a session. Every wait is on an event or a process's end.

use std::path::{Path, PathBuf};
use std::process::Child;

use coord_client::Client;
use coord_proto::types::*;
use coord_tests::mock_model::chat::{Chat, Opencode};
use coord_tests::mock_model::gemini::{Gemini, GeminiCli};
use coord_tests::mock_model::{MockModel, Scenario, Turn, shell, text};
use coord_tests::{Project, agent_cli, bin, finish, git_in, git_project, next_run_event, processes_with};
use serde_json::Value;

#[derive(Clone, Copy, PartialEq)]
enum Agent {
    Opencode,
    Gemini,
}

impl Agent {
    fn name(self) -> &'static str {
        match self {
            Agent::Opencode => "opencode",
            Agent::Gemini => "gemini",
        }
    }
}

/// The scripted model of one CLI, and the harness that keeps the CLI's throwaway home.
struct Model {
    mock: MockModel,
    env: Vec<(String, String)>,
    _keep: Box<dyn std::any::Any>,
}

fn model(agent: Agent, program: &Path, dir: &Path, turns: Vec<Turn>) -> Model {
    match agent {
        Agent::Opencode => {
            let mock = MockModel::start(Chat, Scenario::new(turns));
            let h = Opencode::new(program, dir, &mock);
            Model { env: h.session_env(), _keep: Box::new(h), mock }
        }
        Agent::Gemini => {
            let mock = MockModel::start(Gemini, Scenario::new(turns));
            let h = GeminiCli::new(program, dir, &mock);
            Model { env: h.session_env(), _keep: Box::new(h), mock }
        }
    }
}

fn orch(p: &Project, args: &[&str]) -> Value {
    p.orch().json_flag().args(args).run().ok().json()
}

/// A code-task project whose daemon finds `program` on its `PATH` (so dispatch installs the
/// CLI's files in the worktrees), `.agents/launch.toml` naming the client, and run R1
/// (merged as tasks finish) with `tasks` for w1.
fn project_for(agent: Agent, program: &Path, run_flags: &[&str], tasks: &[&str]) -> (Project, coord_tests::Daemon) {
    let p = git_project();
    let path = format!("{}:{}", program.parent().unwrap().display(), std::env::var("PATH").unwrap_or_default());
    let d = p.serve_with(&[], &[("PATH", &path)]);
    let model = if agent == Agent::Gemini { "model = \"gemini-2.5-flash\"\n" } else { "" };
    let toml = format!("[defaults]\nclient = \"{}\"\nprogram = \"{}\"\n{model}", agent.name(), program.display());
    std::fs::write(p.paths().db.parent().unwrap().join("launch.toml"), toml).unwrap();
    let mut args = vec!["run", "create", "--goal", "g", "--id", "R1", "--auto-merge"];
    args.extend(run_flags);
    orch(&p, &args);
    for t in tasks {
        orch(&p, &["task", "add", "--run", "R1", "--id", t, "--title", t, "--assign-to", "w1"]);
    }
    (p, d)
}

fn bridge(p: &Project, m: &Model, extra: &[&str]) -> Child {
    let mut run = p.launch().args(["--run", "R1", "--grace-seconds", "5", "--dispatch"]).args(extra);
    for (k, v) in &m.env {
        run = run.env(k, v);
    }
    run.spawn()
}

async fn sessions(c: &Client) -> Vec<LaunchSession> {
    use coord_proto::api::LaunchApiClient;
    c.session_list(SessionListParams { run_id: Some("R1".into()), ..Default::default() }).await.expect("list").sessions
}

/// The shell line a worker runs: claim, report progress, ask the lead and wait for the
/// answer (as the prompt says), commit, finish. No command substitution: Gemini CLI refuses
/// a shell command that holds one.
fn ask_and_finish() -> String {
    format!(
        "{i} claim --agent \"$COORD_AGENT\" --thread \"$COORD_THREAD\" >/dev/null && \
         {i} update --agent \"$COORD_AGENT\" --thread \"$COORD_THREAD\" --status in_progress --summary up >/dev/null && \
         {i} update --agent \"$COORD_AGENT\" --thread \"$COORD_THREAD\" --status blocked --summary 'Which db?' > asked.txt && \
         sed -n 's/.*--after-event \\([0-9][0-9]*\\).*/\\1/p' asked.txt | head -n 1 | \
         xargs -I ID {i} wait-reply --thread \"$COORD_THREAD\" --after-event ID --timeout-seconds 100 --json | grep -q 'Use SQLite' && rm asked.txt && \
         echo sqlite > db.txt && git add db.txt && git -c user.email=w@e -c user.name=w commit -q -m db && \
         {i} done --agent \"$COORD_AGENT\" --thread \"$COORD_THREAD\" --summary finished >/dev/null && echo worked",
        i = bin("inbox").display()
    )
}

/// One task: the session asks, the lead answers, the session finishes; the run is done,
/// the prompt named the task, the usage the stream reported is recorded, git stays clean.
async fn asks_and_finishes(agent: Agent) {
    let Some(program) = agent_cli(agent.name()) else { return };
    let (p, _d) = project_for(agent, &program, &[], &["T1"]);
    let m = model(
        agent,
        &program,
        p.path(),
        vec![Turn::reply(vec![shell(&ask_and_finish())]), Turn::reply(vec![text("Done.")])],
    );
    let c = p.client().await;
    let from = c.server_info().last_event_id;
    let b = bridge(&p, &m, &["--until-done"]);
    next_run_event(&c, "R1", from, &[EventType::TaskBlocked]).await;
    orch(&p, &["answer", "--run", "R1", "--task", "T1", "--summary", "Use SQLite"]);
    let out = finish(b);
    assert_eq!(out.code, 0, "{}\n{}", out.stderr, m.mock.transcript());
    let status = orch(&p, &["status", "--run", "R1"]);
    assert_eq!(status["run"]["status"], "done", "{status}");
    let list = sessions(&c).await;
    assert_eq!((list.len(), list[0].client.as_str(), list[0].exit_code), (1, agent.name(), Some(0)), "{list:?}");
    let first = &m.mock.turn_requests()[0].body.to_string();
    assert!(first.contains("inbox done --agent w1") && first.contains("Your task is T1"), "{first}");
    use coord_proto::api::LaunchApiClient;
    let usage = c.usage_show(UsageShowParams { run_id: "R1".into() }).await.unwrap().usage;
    assert!(usage.input_tokens >= 200 && usage.output_tokens >= 40, "{usage:?}");
    if agent == Agent::Opencode {
        assert!(usage.cost_usd > 0.0, "opencode reports a cost: {usage:?}");
    }
    let wt = PathBuf::from(&list[0].cwd);
    assert_eq!(git_in(&wt, &["status", "--porcelain"]), "", "the worktree");
    assert_eq!(git_in(p.path(), &["status", "--porcelain"]), "", "the repository root");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_opencode_session_claims_asks_gets_the_answer_and_finishes() {
    asks_and_finishes(Agent::Opencode).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gemini_session_claims_asks_gets_the_answer_and_finishes() {
    asks_and_finishes(Agent::Gemini).await;
}

/// The shell line of a two-task run's worker: T2's session must see T1's merged file, then
/// each claims, commits a file named after its task and finishes.
fn stacked_work() -> String {
    format!(
        "{{ [ \"$COORD_TASK\" = T1 ] || [ -f T1.txt ]; }} && \
         {i} claim --agent \"$COORD_AGENT\" --thread \"$COORD_THREAD\" >/dev/null && \
         echo work > \"$COORD_TASK.txt\" && git add \"$COORD_TASK.txt\" && \
         git -c user.email=w@e -c user.name=w commit -q -m \"$COORD_TASK\" && \
         {i} done --agent \"$COORD_AGENT\" --thread \"$COORD_THREAD\" --summary finished >/dev/null && echo worked",
        i = bin("inbox").display()
    )
}

/// A two-task run with the bridge: T2 (after T1) is launched once T1 is merged, starts from
/// T1's work, and both finish, each in one session that exits 0.
async fn a_two_task_run_finishes(agent: Agent) {
    let Some(program) = agent_cli(agent.name()) else { return };
    let (p, _d) = project_for(agent, &program, &[], &["T1"]);
    orch(&p, &["task", "add", "--run", "R1", "--id", "T2", "--title", "T2", "--assign-to", "w1", "--depends-on", "T1"]);
    let session = || vec![Turn::reply(vec![shell(&stacked_work())]), Turn::reply(vec![text("Done.")])];
    let m = model(agent, &program, p.path(), [session(), session()].concat());
    let c = p.client().await;
    let out = finish(bridge(&p, &m, &["--until-done"]));
    assert_eq!(out.code, 0, "{}\n{}", out.stderr, m.mock.transcript());
    let status = orch(&p, &["status", "--run", "R1"]);
    assert_eq!(status["run"]["status"], "done", "{status}");
    let list = sessions(&c).await;
    let done: Vec<(&str, Option<i32>)> = list.iter().map(|s| (s.task_id.as_str(), s.exit_code)).collect();
    assert_eq!(done, [("T1", Some(0)), ("T2", Some(0))], "{list:?}");
    let integration = git_in(p.path(), &["ls-tree", "--name-only", "orch/R1/integration"]);
    assert!(integration.lines().any(|f| f == "T1.txt") && integration.lines().any(|f| f == "T2.txt"), "{integration}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_two_task_opencode_run_with_the_bridge_finishes() {
    a_two_task_run_finishes(Agent::Opencode).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_two_task_gemini_run_with_the_bridge_finishes() {
    a_two_task_run_finishes(Agent::Gemini).await;
}

/// The first attempt claims, reports progress, and blocks in a shell call; a later one
/// finishes at once.
fn busy_then_finish() -> String {
    let i = bin("inbox").display().to_string();
    format!(
        "if [ \"$COORD_ATTEMPT\" != 1 ]; then {i} claim --agent \"$COORD_AGENT\" --thread \"$COORD_THREAD\" >/dev/null && \
         echo x > x.txt && git add x.txt && git -c user.email=w@e -c user.name=w commit -q -m x && \
         {i} done --agent \"$COORD_AGENT\" --thread \"$COORD_THREAD\" --summary finished >/dev/null; else \
         {i} claim --agent \"$COORD_AGENT\" --thread \"$COORD_THREAD\" >/dev/null && \
         {i} update --agent \"$COORD_AGENT\" --thread \"$COORD_THREAD\" --status in_progress --summary up >/dev/null && sleep 300; fi"
    )
}

fn busy_turns() -> Vec<Turn> {
    let mut turns = vec![Turn::reply(vec![shell(&busy_then_finish())])];
    turns.extend((0..8).map(|_| Turn::reply(vec![text("Done.")])));
    turns
}

/// The pids of every live process of `thread`'s session.
fn processes_of(thread: &str) -> Vec<i64> {
    processes_with("COORD_THREAD", thread)
}

async fn crash_then_retry(agent: Agent) {
    let Some(program) = agent_cli(agent.name()) else { return };
    let (p, _d) = project_for(agent, &program, &["--auto-retry", "1"], &["T1"]);
    let m = model(agent, &program, p.path(), busy_turns());
    let c = p.client().await;
    let from = c.server_info().last_event_id;
    let b = bridge(&p, &m, &["--until-done"]);
    next_run_event(&c, "R1", from, &[EventType::ThreadProgress]).await;
    let first = sessions(&c).await.into_iter().find(|s| s.attempt == 1).expect("the first session");
    assert!(std::process::Command::new("kill").args(["-KILL", &first.pid.to_string()]).status().unwrap().success());
    let out = finish(b);
    assert_eq!(out.code, 0, "{}\n{}", out.stderr, m.mock.transcript());
    let list = sessions(&c).await;
    assert_eq!(list.iter().map(|s| (s.attempt, s.signal)).collect::<Vec<_>>(), [(1, Some(9)), (2, None)], "{list:?}");
    let t = orch(&p, &["task", "show", "--run", "R1", "--task", "T1"]);
    assert_eq!((&t["attempts"][0]["status"], &t["task"]["status"]), (&"failed".into(), &"done".into()), "{t}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_opencode_session_fails_its_attempt_and_the_retry_finishes() {
    crash_then_retry(Agent::Opencode).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_gemini_session_fails_its_attempt_and_the_retry_finishes() {
    crash_then_retry(Agent::Gemini).await;
}

async fn cancel_leaves_nothing(agent: Agent) {
    let Some(program) = agent_cli(agent.name()) else { return };
    let (p, _d) = project_for(agent, &program, &[], &["T1"]);
    let m = model(agent, &program, p.path(), busy_turns());
    let c = p.client().await;
    let from = c.server_info().last_event_id;
    let mut b = bridge(&p, &m, &[]);
    let up = next_run_event(&c, "R1", from, &[EventType::ThreadProgress]).await;
    assert!(!processes_of(&up.thread_id).is_empty(), "the session runs");
    orch(&p, &["cancel", "--run", "R1", "--task", "T1", "--reason", "not needed"]);
    let ended = next_run_event(&c, "R1", up.event_id, &[EventType::LaunchExited]).await;
    assert_eq!(ended.payload_json["session"]["state"], "stopped", "{}", ended.payload_json);
    let left = processes_of(&up.thread_id);
    assert!(left.is_empty(), "processes of the cancelled session left behind: {left:?}");
    b.kill().unwrap();
    b.wait().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_stops_an_opencode_sessions_every_process() {
    cancel_leaves_nothing(Agent::Opencode).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_stops_a_gemini_sessions_every_process() {
    cancel_leaves_nothing(Agent::Gemini).await;
}
