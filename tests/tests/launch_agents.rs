//! `coord-launch` with the real agent CLIs: Claude Code (`--client claude`) and Codex
//! (`--client codex`) sessions, each run headless against a scripted stand-in for its model
//! API (`coord_tests::mock_model`), finish a stacked run with `--auto-merge`, and are
//! stopped by a shutdown. The model endpoint reaches the sessions through the bridge's
//! environment, which every session inherits; the program comes from `.agents/launch.toml`.
//! Every wait is on an event or a process's end.

use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::Duration;

use coord_client::Client;
use coord_proto::types::*;
use coord_tests::mock_model::anthropic::{Anthropic, claude_env, tool_results};
use coord_tests::mock_model::openai::{OpenAi, codex_config, tool_outputs};
use coord_tests::mock_model::{MockModel, Scenario, Turn, shell, text, tool};
use coord_tests::on_thread;
use coord_tests::{
    Project, agent_cli, bin, cli_version, descendants, finish, git_in, git_project, next_run_event, pid_alive,
    pinned_clis, processes_with, wait_gone,
};
use serde_json::{Value, json};

/// Which agent CLI runs the sessions.
#[derive(Clone, Copy)]
enum Agent {
    Claude,
    Codex,
}

impl Agent {
    fn name(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
        }
    }
}

/// The mock model of one agent CLI and the environment that points its sessions at it.
struct Model {
    mock: MockModel,
    env: Vec<(String, String)>,
    agent: Agent,
    _home: tempfile::TempDir,
}

impl Model {
    /// What the sessions' tool calls returned, as the model saw them: for a failing
    /// assertion's message.
    fn outputs(&self) -> String {
        let reqs = self.mock.turn_requests();
        let outs = reqs.iter().flat_map(|r| match self.agent {
            Agent::Claude => tool_results(&r.body),
            Agent::Codex => tool_outputs(&r.body),
        });
        let mut seen = Vec::new();
        for o in outs {
            if !seen.contains(&o) {
                seen.push(o);
            }
        }
        format!("{} model requests; tool outputs:\n{}", reqs.len(), seen.join("\n---\n"))
    }
}

fn model(agent: Agent, turns: Vec<Turn>) -> Model {
    let home = tempfile::Builder::new().prefix("agent-home").tempdir().expect("a home for the CLI");
    match agent {
        Agent::Claude => {
            let mock = MockModel::start(Anthropic, Scenario::new(turns));
            let env = claude_env(&mock, home.path());
            Model { mock, env, agent, _home: home }
        }
        Agent::Codex => {
            let mock = MockModel::start(OpenAi, Scenario::new(turns));
            std::fs::write(home.path().join("config.toml"), codex_config(&mock)).expect("CODEX_HOME/config.toml");
            let env = vec![
                ("CODEX_HOME".to_string(), home.path().display().to_string()),
                ("CODEX_MOCK_API_KEY".to_string(), "dummy".to_string()),
                // The CLI's login shells must not run the machine's own profile (see
                // `claude_env`).
                ("HOME".to_string(), home.path().display().to_string()),
            ];
            Model { mock, env, agent, _home: home }
        }
    }
}

fn orch(p: &Project, args: &[&str]) -> Value {
    p.orch().json_flag().args(args).run().ok().json()
}

/// `.agents/launch.toml`: every session runs `program` as `agent`.
fn launch_toml(p: &Project, agent: Agent, program: &Path) {
    let toml = format!("[defaults]\nclient = \"{}\"\nprogram = \"{}\"\n", agent.name(), program.display());
    let agents = p.paths().db.parent().expect("the database's directory").to_path_buf();
    std::fs::create_dir_all(&agents).expect(".agents");
    std::fs::write(agents.join("launch.toml"), toml).expect(".agents/launch.toml");
}

/// The bridge on R1, with the model's environment, started in the background.
fn bridge(p: &Project, m: &Model, extra: &[&str]) -> Child {
    let mut run = p.launch().args(["--run", "R1", "--grace-seconds", "5"]).args(extra);
    for (k, v) in &m.env {
        run = run.env(k, v);
    }
    run.spawn()
}

/// A shell line that claims the session's thread, runs `work`, and finishes it. It names
/// `inbox` by its path, as the bridge's prompt does: Codex runs commands in a login shell,
/// whose `PATH` is the profile's, not the session's.
fn worker(work: &str) -> String {
    format!(
        "{inbox} claim --agent \"$COORD_AGENT\" --thread \"$COORD_THREAD\" >/dev/null && {work} && \
         {inbox} done --agent \"$COORD_AGENT\" --thread \"$COORD_THREAD\" --summary finished >/dev/null && echo worked",
        inbox = bin("inbox").display()
    )
}

/// A shell line that reports the session's thread in progress.
fn progress() -> String {
    format!(
        "{} update --agent \"$COORD_AGENT\" --thread \"$COORD_THREAD\" --status in_progress --summary up >/dev/null",
        bin("inbox").display()
    )
}

/// A shell line that claims the session's thread, reports it in progress, then runs `then`.
fn worker_up(then: &str) -> String {
    format!(
        "{} claim --agent \"$COORD_AGENT\" --thread \"$COORD_THREAD\" >/dev/null && {} && {then}",
        bin("inbox").display(),
        progress()
    )
}

async fn sessions(c: &Client) -> Vec<LaunchSession> {
    use coord_proto::api::LaunchApiClient;
    c.session_list(SessionListParams { run_id: Some("R1".into()), ..Default::default() }).await.expect("list").sessions
}

/// The agent's binary, or `None` (a skip, or a failure under COORD_CI=1).
fn cli(agent: Agent) -> Option<PathBuf> {
    agent_cli(agent.name())
}

/// T2 depends on T1; both are code tasks finished by `agent` sessions, merged as they
/// finish. T2's session checks that T1's work is in its worktree before doing its own.
fn stacked_run(agent: Agent) {
    let Some(program) = cli(agent) else { return };
    let p = git_project();
    launch_toml(&p, agent, &program);
    orch(&p, &["run", "create", "--goal", "g", "--id", "R1", "--auto-merge"]);
    orch(&p, &["task", "add", "--run", "R1", "--id", "T1", "--title", "T1", "--assign-to", "w1"]);
    orch(&p, &["task", "add", "--run", "R1", "--id", "T2", "--title", "T2", "--assign-to", "w2", "--depends-on", "T1"]);
    let work = "{ [ \"$COORD_TASK\" = T1 ] || test -f T1.txt; } && echo \"$COORD_TASK\" > \"$COORD_TASK.txt\" && \
                git add \"$COORD_TASK.txt\" && git -c user.email=w@e -c user.name=w commit -q -m \"$COORD_TASK\"";
    // Both sessions get the same script: the shell call, then a last word.
    let m = model(agent, vec![Turn::reply(vec![shell(&worker(work))]), Turn::reply(vec![text("Done.")])]);
    let out = finish(bridge(&p, &m, &["--dispatch", "--until-done"]));
    assert_eq!(out.code, 0, "{}\n{}", out.stderr, m.outputs());
    let status = orch(&p, &["status", "--run", "R1"]);
    assert_eq!(status["run"]["status"], "done", "{status}");
    let rt = tokio::runtime::Runtime::new().unwrap();
    let list = rt.block_on(async { sessions(&p.client().await).await });
    assert_eq!(list.len(), 2, "{list:?}");
    for s in &list {
        assert_eq!((s.state, s.client.as_str()), (SessionState::Exited, agent.name()), "{s:?}");
    }
    // Each session's shell call ran and its output went back to the model.
    assert!(m.mock.turn_requests().len() >= 4, "{}", m.outputs());
    let log = git_in(p.path(), &["log", "--format=%s", "orch/R1/integration"]);
    assert!(log.contains("T1") && log.contains("T2"), "{log}");
}

#[test]
fn claude_code_sessions_finish_a_stacked_run_from_merged_work() {
    stacked_run(Agent::Claude);
}

#[test]
fn codex_sessions_finish_a_stacked_run_from_merged_work() {
    stacked_run(Agent::Codex);
}

/// Wait for the next event of `types` on R1 after `after`.
async fn next_event(c: &Client, after: i64, types: &[EventType]) -> Event {
    next_run_event(c, "R1", after, types).await
}

/// A session that claims its thread, says it is up, and then works for a long time (its
/// shell calls block), is stopped by an unanswered shutdown request.
async fn shutdown_stops(agent: Agent) {
    let Some(program) = cli(agent) else { return };
    let p = Project::new();
    launch_toml(&p, agent, &program);
    orch(&p, &["run", "create", "--goal", "g", "--id", "R1"]);
    orch(&p, &["task", "add", "--run", "R1", "--id", "T1", "--title", "T1", "--kind", "thread", "--assign-to", "w1"]);
    let c = p.client().await;
    let from = c.server_info().last_event_id;
    let up = worker_up("sleep 300");
    // Should a shell call return early (Codex yields a long command), the next turns block too.
    let mut turns = vec![Turn::reply(vec![shell(&up)])];
    turns.extend((0..8).map(|_| Turn::reply(vec![shell("sleep 300")])));
    let m = model(agent, turns);
    let mut b = bridge(&p, &m, &["--dispatch", "--shutdown-grace-seconds", "1"]);
    let up = next_event(&c, from, &[EventType::ThreadProgress]).await;
    p.inbox().args(["--agent", "lead", "shutdown", "--to", "w1", "--reason", "run over"]).run().ok();
    let ended = next_event(&c, up.event_id, &[EventType::LaunchExited]).await;
    let s = &ended.payload_json["session"];
    // Answered by a hook, or stopped after the grace: stopped for the shutdown either way.
    let reason = s["reason"].as_str().unwrap_or_default();
    assert_eq!(s["state"].as_str(), Some("stopped"), "{s}\n{}", m.outputs());
    assert!(reason.starts_with("stopped: shutdown"), "{s}\n{}", m.outputs());
    assert!(!pid_alive(s["pid"].as_i64().unwrap()), "{s}");
    b.kill().unwrap();
    b.wait().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shutdown_stops_a_claude_code_session() {
    shutdown_stops(Agent::Claude).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shutdown_stops_a_codex_session() {
    shutdown_stops(Agent::Codex).await;
}

/// The pids of every live process of `thread`'s session.
fn processes_of(thread: &str) -> Vec<i64> {
    processes_with("COORD_THREAD", thread)
}

/// A thread task whose session claims, says it is up, then blocks in a shell call (and in
/// every later turn, should a call return early). Returns the project, the model, the
/// bridge and the progress event.
async fn a_busy_session(agent: Agent, program: &Path, run_flags: &[&str], bridge_flags: &[&str]) -> Busy {
    let p = Project::new();
    launch_toml(&p, agent, program);
    let mut args = vec!["run", "create", "--goal", "g", "--id", "R1"];
    args.extend(run_flags);
    orch(&p, &args);
    orch(&p, &["task", "add", "--run", "R1", "--id", "T1", "--title", "T1", "--kind", "thread", "--assign-to", "w1"]);
    let c = p.client().await;
    let from = c.server_info().last_event_id;
    // The first attempt blocks; a later one (a retry) finishes.
    let up = format!("if [ \"$COORD_ATTEMPT\" != 1 ]; then {}; else {}; fi", worker("true"), worker_up("sleep 300"));
    let mut turns = vec![Turn::reply(vec![shell(&up)])];
    turns.extend((0..8).map(|_| Turn::reply(vec![shell("[ \"$COORD_ATTEMPT\" != 1 ] || sleep 300")])));
    let m = model(agent, turns);
    let mut flags = vec!["--dispatch"];
    flags.extend(bridge_flags);
    let b = bridge(&p, &m, &flags);
    let up = next_event(&c, from, &[EventType::ThreadProgress]).await;
    Busy { p, m, b, c, up }
}

struct Busy {
    p: Project,
    m: Model,
    b: Child,
    c: Client,
    up: Event,
}

async fn cancel_leaves_nothing(agent: Agent, bridge_flags: &[&str]) {
    let Some(program) = cli(agent) else { return };
    let Busy { p, m, mut b, c, up } = a_busy_session(agent, &program, &[], bridge_flags).await;
    let thread = up.thread_id.clone();
    assert!(!processes_of(&thread).is_empty(), "the session runs");
    orch(&p, &["cancel", "--run", "R1", "--task", "T1", "--reason", "not needed"]);
    let ended = next_event(&c, up.event_id, &[EventType::LaunchExited]).await;
    assert_eq!(ended.payload_json["session"]["state"], "stopped", "{}", ended.payload_json);
    // A process the stop killed may take a moment to die (its SIGKILL is on its way).
    let left: Vec<i64> =
        processes_of(&thread).into_iter().filter(|p| !wait_gone(*p, Duration::from_secs(30))).collect();
    assert!(left.is_empty(), "processes of the cancelled session left behind: {left:?}\n{}", m.outputs());
    b.kill().unwrap();
    b.wait().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_stops_a_claude_code_sessions_every_process() {
    cancel_leaves_nothing(Agent::Claude, &[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_stops_a_codex_sessions_every_process() {
    cancel_leaves_nothing(Agent::Codex, &[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_stops_a_live_codex_sessions_every_process() {
    cancel_leaves_nothing(Agent::Codex, &["--live"]).await;
}

/// The first session's agent process is killed (a crash): its attempt fails, the retry's
/// new session finishes the task.
async fn crash_then_retry(agent: Agent, bridge_flags: &[&str]) {
    let Some(program) = cli(agent) else { return };
    let flags = [&["--until-done"], bridge_flags].concat();
    let Busy { p, m, b, c, .. } = a_busy_session(agent, &program, &["--auto-retry", "1"], &flags).await;
    let first = sessions(&c).await.into_iter().find(|s| s.attempt == 1).expect("the first session");
    let st = std::process::Command::new("kill").args(["-KILL", &first.pid.to_string()]).status().unwrap();
    assert!(st.success());
    let out = finish(b);
    assert_eq!(out.code, 0, "{}\n{}", out.stderr, m.outputs());
    let list = sessions(&c).await;
    assert_eq!(list.iter().map(|s| (s.attempt, s.signal)).collect::<Vec<_>>(), [(1, Some(9)), (2, None)], "{list:?}");
    let t = orch(&p, &["task", "show", "--run", "R1", "--task", "T1"]);
    assert_eq!((&t["attempts"][0]["status"], &t["task"]["status"]), (&"failed".into(), &"done".into()), "{t}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_claude_code_session_fails_its_attempt_and_the_retry_finishes() {
    crash_then_retry(Agent::Claude, &[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_codex_session_fails_its_attempt_and_the_retry_finishes() {
    crash_then_retry(Agent::Codex, &[]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_live_codex_session_fails_its_attempt_and_the_retry_finishes() {
    crash_then_retry(Agent::Codex, &["--live"]).await;
}

/// A bridge killed while its session runs: the next bridge re-attaches to the session,
/// which then finishes the task; its end is recorded, not marked lost.
async fn restart_reattaches(agent: Agent, bridge_flags: &[&str]) {
    use std::io::BufRead;
    let Some(program) = cli(agent) else { return };
    let p = Project::new();
    launch_toml(&p, agent, &program);
    orch(&p, &["run", "create", "--goal", "g", "--id", "R1"]);
    orch(&p, &["task", "add", "--run", "R1", "--id", "T1", "--title", "T1", "--kind", "thread", "--assign-to", "w1"]);
    let c = p.client().await;
    let from = c.server_info().last_event_id;
    // The worker claims, says it is up, and waits on a fifo the test writes to.
    let work = format!("mkfifo go && {} && read x < go", progress());
    let m = model(agent, vec![Turn::reply(vec![shell(&worker(&work))]), Turn::reply(vec![text("Done.")])]);
    let mut first = bridge(&p, &m, &[&["--dispatch"], bridge_flags].concat());
    let up = next_event(&c, from, &[EventType::ThreadProgress]).await;
    first.kill().unwrap();
    first.wait().unwrap();
    let s = sessions(&c).await.pop().expect("the session");
    assert!(pid_alive(s.pid), "the session outlived its bridge: {s:?}");
    let mut second = bridge(&p, &m, &[&["--until-done"], bridge_flags].concat());
    // Ready when it says it re-attached.
    let mut out = std::io::BufReader::new(second.stdout.take().unwrap());
    let mut said = String::new();
    while !said.contains("re-attached to T1") {
        let mut line = String::new();
        assert!(out.read_line(&mut line).unwrap() > 0, "the bridge ended before re-attaching: {said}");
        said += &line;
    }
    std::fs::write(std::path::Path::new(&s.cwd).join("go"), "\n").unwrap();
    let ended = next_event(&c, up.event_id, &[EventType::LaunchExited]).await;
    assert_eq!(ended.payload_json["session"]["state"], "exited", "{}\n{}", ended.payload_json, m.outputs());
    let out = finish(second);
    assert_eq!(out.code, 0, "{said}\n{}", m.outputs());
    let t = orch(&p, &["task", "show", "--run", "R1", "--task", "T1"]);
    assert_eq!(t["task"]["status"], "done", "{t}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_bridge_reattaches_to_a_claude_code_session() {
    restart_reattaches(Agent::Claude, &[]).await;
}

/// A live Codex session outlives its bridge, and the next bridge feeds it again and closes
/// its input once its task is done (its driver then ends with exit 0).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_bridge_reattaches_to_a_live_codex_session() {
    restart_reattaches(Agent::Codex, &["--live"]).await;
}

/// The agent CLIs the suites drive are the versions CI pins (`.ci/agent-clis`): a cached
/// copy of another version fails here, loudly, instead of being tested in silence.
#[test]
fn the_agent_clis_found_are_the_versions_ci_pins() {
    let pins = pinned_clis();
    let names: Vec<&str> = pins.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names, ["claude", "codex", "opencode", "gemini"], "the pins in .ci/agent-clis");
    for (name, pinned) in &pins {
        let Some(program) = agent_cli(name) else { continue };
        let found = cli_version(&program);
        assert!(
            found.split_whitespace().any(|w| w == pinned),
            "{name} is '{found}', not the pinned {pinned}: .ci/run replaces it ({})",
            program.display()
        );
    }
}

/// A code task's project whose daemon finds `program` on its `PATH`, so dispatch installs
/// the agent's files (MCP server, hooks) in the worktree as on a machine that has it; run
/// R1 with T1 for w1, and `.agents/launch.toml` naming the agent.
fn project_for(agent: Agent, program: &Path) -> (Project, coord_tests::Daemon) {
    let p = git_project();
    let path = format!("{}:{}", program.parent().unwrap().display(), std::env::var("PATH").unwrap_or_default());
    let d = p.serve_with(&[], &[("PATH", &path)]);
    launch_toml(&p, agent, program);
    // Merged as soon as done, so the run ends and `--until-done` returns.
    orch(&p, &["run", "create", "--goal", "g", "--id", "R1", "--auto-merge"]);
    orch(&p, &["task", "add", "--run", "R1", "--id", "T1", "--title", "T1", "--assign-to", "w1"]);
    (p, d)
}

/// A Codex session's log says what it did, each line with its time: an MCP call with its
/// arguments and its result (cut short), a command with its exit code and output.
#[test]
fn a_codex_sessions_log_shows_its_calls_with_arguments_results_and_times() {
    let Some(program) = cli(Agent::Codex) else { return };
    let (p, _d) = project_for(Agent::Codex, &program);
    let send = tool("mcp__coordd__send_message", json!({"to": "lead", "summary": "hello from the session"}));
    let m = model(
        Agent::Codex,
        vec![
            Turn::reply(vec![send]),
            Turn::reply(vec![shell(&worker("echo from-the-shell"))]),
            Turn::reply(vec![text("Done.")]),
        ],
    );
    let out = finish(bridge(&p, &m, &["--dispatch", "--until-done"]));
    assert_eq!(out.code, 0, "{}\n{}", out.stderr, m.outputs());
    let rt = tokio::runtime::Runtime::new().unwrap();
    let s = rt.block_on(async { sessions(&p.client().await).await }).pop().expect("the session");
    let log = std::fs::read_to_string(&s.log_path).expect("the session's log");
    let stamped =
        |l: &str| l.len() > 24 && l.as_bytes()[4] == b'-' && l.as_bytes()[10] == b'T' && l[..24].ends_with('Z');
    assert!(log.lines().filter(|l| !l.is_empty()).all(stamped), "a line without its time:\n{log}");
    let has = |needle: &str| log.lines().any(|l| l.contains(needle));
    assert!(has("mcp coordd/send_message {") && has("hello from the session"), "the call's arguments:\n{log}");
    assert!(has("mcp coordd/send_message (completed) -> ") && has("msg_"), "the call's result:\n{log}");
    assert!(has("exec exit 0 (completed): from-the-shell"), "the command's exit and output:\n{log}");
}

/// A one-shot Codex session (`codex exec --json`) records its usage too: the filter of its
/// events reports each `turn.completed` (the thread's totals) with `launch.usage`, which
/// then equal what the scripted model reported; its raw events are kept beside its log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_one_shot_codex_sessions_usage_is_recorded_and_its_raw_events_kept() {
    let Some(program) = cli(Agent::Codex) else { return };
    let p = Project::new();
    launch_toml(&p, Agent::Codex, &program);
    orch(&p, &["run", "create", "--goal", "g", "--id", "R1"]);
    orch(&p, &["task", "add", "--run", "R1", "--id", "T1", "--title", "T1", "--kind", "thread", "--assign-to", "w1"]);
    let c = p.client().await;
    let from = c.server_info().last_event_id;
    let m = model(Agent::Codex, vec![Turn::reply(vec![shell(&worker("true"))]), Turn::reply(vec![text("Done.")])]);
    let out = finish(bridge(&p, &m, &["--dispatch", "--until-done"]));
    assert_eq!(out.code, 0, "{}\n{}", out.stderr, m.outputs());
    usage_reaches(&c, from, &m).await;
    let s = sessions(&c).await.pop().expect("the session");
    let raw = std::fs::read_to_string(Path::new(&s.log_path).with_extension("jsonl")).unwrap_or_default();
    assert!(raw.contains("\"turn.completed\""), "{raw}");
}

/// Claude Code (2.1.332 names MCP tools in a system message and loads them through its tool
/// search): with mail queued for the worker, the PostToolUse reminder reaches the model
/// naming the `check_inbox` tool of the `coordd` server; the model can call that tool by
/// the name it was given, and the call delivers the mail.
#[test]
fn the_reminder_leads_a_claude_code_session_to_the_tool_that_delivers_its_mail() {
    let Some(program) = cli(Agent::Claude) else { return };
    let (p, _d) = project_for(Agent::Claude, &program);
    let mail = format!(
        "{} --db {} --agent lead send --to w1 --subject note --summary 'note-for-w1'",
        bin("inbox").display(),
        p.paths().db.display()
    );
    let m = model(
        Agent::Claude,
        vec![
            Turn::reply(vec![shell(&worker_up("true"))]).before(&mail),
            Turn::reply(vec![tool("mcp__coordd__check_inbox", json!({}))]),
            Turn::reply(vec![shell(&worker("true"))]),
            Turn::reply(vec![text("Done.")]),
        ],
    );
    let out = finish(bridge(&p, &m, &["--dispatch", "--until-done"]));
    assert_eq!(out.code, 0, "{}\n{}", out.stderr, m.outputs());
    let reqs = m.mock.turn_requests();
    // The request after the first tool call carries the reminder, with the tool's name.
    let after_tool = reqs.get(1).map(|r| r.body.to_string()).unwrap_or_default();
    assert!(
        after_tool.contains("pending message") && after_tool.contains("check_inbox") && after_tool.contains("coordd"),
        "no reminder naming the tool:\n{}",
        m.mock.transcript()
    );
    // The name the model calls reaches it, in its tools or in the system text that lists them.
    assert!(after_tool.contains("mcp__coordd__check_inbox"), "the tool's name never reached the model");
    assert!(m.outputs().contains("note-for-w1"), "check_inbox did not deliver the mail:\n{}", m.outputs());
}

/// A thread task T1 for `agent_id` with `agent`'s sessions against a model that runs
/// `line` in its shell, then says it is done; `toml` is appended to `.agents/launch.toml`.
fn one_task(agent: Agent, agent_id: &str, line: &str, toml: &str) -> Option<(Project, Model)> {
    let program = cli(agent)?;
    let p = Project::new();
    launch_toml(&p, agent, &program);
    let file = p.paths().db.parent().unwrap().join("launch.toml");
    let mut toml_text = std::fs::read_to_string(&file).unwrap();
    toml_text.insert_str(toml_text.find('\n').unwrap() + 1, toml);
    std::fs::write(&file, toml_text).unwrap();
    orch(&p, &["run", "create", "--goal", "g", "--id", "R1"]);
    orch(
        &p,
        &["task", "add", "--run", "R1", "--id", "T1", "--title", "T1", "--kind", "thread", "--assign-to", agent_id],
    );
    Some((p, model(agent, vec![Turn::reply(vec![shell(line)]), Turn::reply(vec![text("Done.")])])))
}

/// `sandbox = true` (issue 32): the session's shell cannot read `.agents/` (the dashboard's
/// token here), while `inbox` reaches the daemon over its socket and finishes the task.
/// Needs Claude Code's sandbox runtime on Linux: bubblewrap and socat (`.ci/run`).
#[test]
fn a_sandboxed_claude_code_worker_cannot_read_agents_but_reaches_the_daemon() {
    if !["bwrap", "socat"].iter().all(|t| coord_tests::have(t, "Claude Code's Linux sandbox")) {
        return;
    }
    sandboxed_worker_cannot_read_agents(Agent::Claude);
}

/// The same with Codex: its permission profile (sandbox.rs) denies the shell `.agents/`'s
/// files ("Permission denied"). Codex refuses to make its sandbox helper under a temporary
/// directory, so its home is under the target directory here (a user's is `~/.codex`).
#[test]
fn a_sandboxed_codex_worker_cannot_read_agents_but_reaches_the_daemon() {
    if !coord_tests::have("bwrap", "Codex's Linux sandbox") {
        return;
    }
    sandboxed_worker_cannot_read_agents(Agent::Codex);
}

fn sandboxed_worker_cannot_read_agents(agent: Agent) {
    let line = format!("cat \"$SANDBOX_PROBE\"; echo \"cat=$?\"; {}", worker("true"));
    let Some((p, mut m)) = one_task(agent, "w1", &line, "sandbox = true\n") else { return };
    let home = tempfile::Builder::new().prefix("codex-home").tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    if let Agent::Codex = agent {
        std::fs::copy(m._home.path().join("config.toml"), home.path().join("config.toml")).unwrap();
        for (_, v) in m.env.iter_mut().filter(|(k, _)| k == "CODEX_HOME" || k == "HOME") {
            *v = home.path().display().to_string();
        }
    }
    let secret_file = p.paths().db.parent().unwrap().join("dashboard.json");
    std::fs::write(&secret_file, "{\"token\":\"tok_never_seen_0123\"}").unwrap();
    let run = p.launch().args(["--run", "R1", "--grace-seconds", "5", "--dispatch", "--until-done"]);
    let mut run = run.env("SANDBOX_PROBE", &secret_file.display().to_string());
    for (k, v) in &m.env {
        run = run.env(k, v);
    }
    let out = finish(run.spawn());
    let seen = m.outputs();
    assert_eq!(out.code, 0, "inbox works in the sandbox: {}\n{seen}", out.stderr);
    assert!(seen.contains("cat=1") && !seen.contains("tok_never_seen"), "the shell read .agents/: {seen}");
    if let Agent::Codex = agent {
        assert!(seen.contains("Permission denied"), "{seen}");
    }
    assert!(seen.contains("worked"), "{seen}");
}

/// With credentials required (issue 32), a Claude Code worker launched by the bridge,
/// which holds the lead's secret, finishes its task with its own secret; its shell holds
/// no other.
#[test]
fn a_claude_code_worker_finishes_with_its_own_secret_when_credentials_are_required() {
    worker_finishes_with_its_own_secret(Agent::Claude);
}

/// The same with Codex, whose shell must get the secret too.
#[test]
fn a_codex_worker_finishes_with_its_own_secret_when_credentials_are_required() {
    worker_finishes_with_its_own_secret(Agent::Codex);
}

fn worker_finishes_with_its_own_secret(agent: Agent) {
    let line =
        format!("env | grep -c '^COORD_AGENT_SECRET=cs_w-one_' ; env | grep -c cs_lead-one_ ; {}", worker("true"));
    let Some((p, m)) = one_task(agent, "w-one", &line, "") else { return };
    let lead = coord_tests::register(&p, "lead-one");
    coord_tests::ok(&p, &["init", "--require-credentials", "--lead", "lead-one"]);
    let mut run = p.launch().args(["--run", "R1", "--grace-seconds", "5", "--dispatch", "--until-done"]);
    run = run.env(AGENT_SECRET_ENV, &lead);
    for (k, v) in &m.env {
        run = run.env(k, v);
    }
    let out = finish(run.spawn());
    let seen = m.outputs();
    assert_eq!(out.code, 0, "{}\n{seen}", out.stderr);
    assert!(seen.contains("1\n0\n") && seen.contains("worked"), "its own secret and no other: {seen}");
    let status = orch(&p, &["status", "--run", "R1"]);
    assert_eq!(status["run"]["status"], "done", "{status}");
}

/// `--live` with the real Claude Code (issue 33's acceptance): the worker asks and ends its
/// turn (the model's reply to the question's tool result is text only, so no tool call is
/// pending), and the lead answers **150 s** after that turn ended: longer than the Bash
/// tool's 2-minute default timeout. Meanwhile the session asks the model nothing. The
/// answer reaches the same session as a new user turn, and the task finishes in one
/// session and one attempt, which ends with exit 0 when the bridge closes its input. The
/// Codex variant below runs in the same binary, so the two gaps overlap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_claude_code_session_gets_the_answer_as_a_new_turn_and_finishes_in_one_attempt() {
    live_answer(Agent::Claude).await;
}

/// The same with the real Codex, driven through its app-server (codex_live.rs): the answer
/// 150 s later is a new `turn/start` in the same Codex thread (the model's request after it
/// carries the whole conversation, and the raw output holds one `thread/started`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_codex_session_gets_the_answer_as_a_new_turn_and_finishes_in_one_attempt() {
    live_answer(Agent::Codex).await;
}

/// How long after the worker's question ended its turn the lead answers (issue 33's
/// acceptance: longer than the Bash tool's 2-minute default timeout).
const ANSWER_GAP: Duration = Duration::from_secs(150);

/// A live thread task on `agent`'s sessions, scripted with `turns`, the bridge on it
/// (dispatching, until done): the project, the model, the bridge, a client and the event
/// to wait from.
async fn live_run(agent: Agent, program: &Path, turns: Vec<Turn>) -> (Project, Model, Child, Client, i64) {
    let p = Project::new();
    launch_toml(&p, agent, program);
    orch(&p, &["run", "create", "--goal", "g", "--id", "R1"]);
    orch(&p, &["task", "add", "--run", "R1", "--id", "T1", "--title", "T1", "--kind", "thread", "--assign-to", "w1"]);
    let c = p.client().await;
    let from = c.server_info().last_event_id;
    let m = model(agent, turns);
    let b = bridge(&p, &m, &["--dispatch", "--until-done", "--live"]);
    (p, m, b, c, from)
}

/// Wait until the model has been asked for its `turn`-th reply.
fn asked(m: &Model, turn: usize) {
    let r = tokio::task::block_in_place(|| m.mock.wait_for(Duration::from_secs(120), |r| r.turn == Some(turn)));
    assert!(r.is_some(), "the model was never asked for reply {turn}:\n{}", m.outputs());
}

/// The request for the model's `turn`-th reply carries `text` as the user's input: it came
/// as a new user turn of the same conversation.
#[track_caller]
fn came_as_a_turn(m: &Model, turn: usize, text: &str) {
    m.mock.assert_user_input(turn, text);
}

async fn live_answer(agent: Agent) {
    let Some(program) = cli(agent) else { return };
    let done = on_thread("done", "--summary answered >/dev/null");
    let turns = coord_tests::mock_model::live::asks_then(&bin("inbox"), &done);
    let (p, m, b, c, from) = live_run(agent, &program, turns).await;
    let blocked = next_event(&c, from, &[EventType::TaskBlocked]).await;
    // The worker asked; its turn ends with the text-only reply 1, and the session's usage
    // is recorded at a turn's end: from that event the session is idle, no tool call pending.
    next_event(&c, blocked.event_id, &[EventType::LaunchUsage]).await;
    let idle = m.mock.requests().len();
    // The gap the acceptance asks for (not a wait for readiness): the lead answers 150 s
    // later, past the Bash tool's 2-minute default timeout.
    tokio::time::sleep(ANSWER_GAP).await;
    assert_eq!(m.mock.requests().len(), idle, "the idle session asked the model:\n{}", m.mock.transcript());
    orch(&p, &["answer", "--run", "R1", "--task", "T1", "--summary", "Use SQLite"]);
    let out = finish(b);
    let list = sessions(&c).await;
    assert_eq!(out.code, 0, "{}\n{list:?}\n{}", out.stderr, m.outputs());
    assert_eq!(list.len(), 1, "one session: {list:?}");
    assert_eq!((list[0].attempt, list[0].exit_code), (1, Some(0)), "{list:?}");
    came_as_a_turn(&m, 2, "Use SQLite");
    let raw = std::fs::read_to_string(Path::new(&list[0].log_path).with_extension("jsonl")).unwrap_or_default();
    if let Agent::Codex = agent {
        assert_eq!(raw.matches("\"thread/started\"").count(), 1, "one Codex thread:\n{raw}");
    } else {
        // Each turn of Claude Code's stream starts with an `init` naming its session: one.
        let ids: std::collections::BTreeSet<String> = raw
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|v| v["type"] == "system" && v["subtype"] == "init")
            .filter_map(|v| v["session_id"].as_str().map(str::to_string))
            .collect();
        assert_eq!(ids.len(), 1, "one Claude Code session:\n{raw}");
    }
    // The session's usage, from its stream, is what the model reported.
    let report = usage_reaches(&c, from, &m).await;
    // Codex reports no cost.
    assert_eq!(report.usage.cost_usd > 0.0, matches!(agent, Agent::Claude), "{report:?}");
}

/// Wait until the run's recorded usage is what the model reported: the sessions' output
/// filters (a live Codex session: its driver) report each turn's totals with
/// `launch.usage`, the last one as the session ends (a filter may report after its session
/// ended), so this follows those events until the totals are whole.
async fn usage_reaches(c: &Client, from: i64, m: &Model) -> UsageReport {
    use coord_proto::api::LaunchApiClient as _;
    let sent = m.mock.reported_usage();
    let want = (sent.input as i64, sent.output as i64, sent.cache_read as i64, sent.cache_write as i64);
    let mut after = from;
    loop {
        let report = c.usage_show(UsageShowParams { run_id: "R1".into() }).await.expect("launch.usageShow");
        let u = &report.usage;
        if (u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens) == want {
            return report;
        }
        after = next_event(c, after, &[EventType::LaunchUsage]).await.event_id;
    }
}

/// With credentials required, a live Codex session's usage reaches the daemon: the driver
/// (the session's process, holding only the worker's secret, under which `launch.usage` is
/// refused) hands each turn's totals to its output filter, which records them with the
/// bridge's authority, as Claude Code's filter does. What is recorded is what the scripted
/// server reported, and the log shows no refused report.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_codex_sessions_usage_is_recorded_when_credentials_are_required() {
    let Some((p, m)) = one_task(Agent::Codex, "w-one", &worker("true"), "") else { return };
    let lead = coord_tests::register(&p, "lead-one");
    coord_tests::ok(&p, &["init", "--require-credentials", "--lead", "lead-one"]);
    let c = Client::connect_socket_as(&p.paths().socket, Some(&lead)).await.unwrap();
    let from = c.server_info().last_event_id;
    let mut run = p.launch().args(["--run", "R1", "--grace-seconds", "5", "--dispatch", "--until-done", "--live"]);
    run = run.env(AGENT_SECRET_ENV, &lead);
    for (k, v) in &m.env {
        run = run.env(k, v);
    }
    let out = finish(run.spawn());
    let list = sessions(&c).await;
    assert_eq!(out.code, 0, "{}\n{list:?}\n{}", out.stderr, m.outputs());
    assert!(m.outputs().contains("worked"), "the worker finished with its own secret: {}", m.outputs());
    let bound = Duration::from_secs(120);
    let report = tokio::time::timeout(bound, usage_reaches(&c, from, &m)).await;
    let log = std::fs::read_to_string(&list[0].log_path).unwrap_or_default();
    let report = report.unwrap_or_else(|_| panic!("the usage was never recorded:\n{log}"));
    assert!(!log.contains("usage not recorded"), "{log}");
    assert!(report.usage.input_tokens > 0, "{report:?}");
}

/// The model's script of a worker that claims and reports progress, ends its turn
/// ("Working."), and finishes on the next turn (the mail a test sends).
fn works_until_mail() -> Vec<Turn> {
    let up = format!("{} && {}", on_thread("claim", ">/dev/null"), progress());
    vec![
        Turn::reply(vec![shell(&up)]),
        Turn::reply(vec![text("Working.")]),
        Turn::reply(vec![shell(&on_thread("done", "--summary done >/dev/null"))]),
        Turn::reply(vec![text("Done.")]),
    ]
}

/// A live Codex session's last lines reach the daemon while it runs (`launch.tail`, from
/// the driver's output filter, `--live-log`), before its end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_codex_sessions_last_lines_are_recorded_while_it_runs() {
    let Some(program) = cli(Agent::Codex) else { return };
    let (p, m, b, c, from) = live_run(Agent::Codex, &program, works_until_mail()).await;
    next_event(&c, from, &[EventType::ThreadProgress]).await;
    asked(&m, 1);
    // The session works on (its second turn waits for the mail below): the first tail
    // report came while it ran.
    let tail = next_event(&c, from, &[EventType::LaunchTail]).await;
    let session = &tail.payload_json["session"];
    assert_eq!(session["state"], "running", "{session}");
    assert!(session["log_tail"].as_str().is_some_and(|t| !t.is_empty()), "{session}");
    p.inbox().args(["--agent", "lead", "send", "--to", "w1", "--summary", "Finish up"]).run().ok();
    let out = finish(b);
    assert_eq!(out.code, 0, "{}\n{}", out.stderr, m.outputs());
}

/// Mail sent to a working live Codex session arrives as a new turn of its thread.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mail_to_a_working_live_codex_session_arrives_as_a_turn() {
    let Some(program) = cli(Agent::Codex) else { return };
    let (p, m, b, c, from) = live_run(Agent::Codex, &program, works_until_mail()).await;
    next_event(&c, from, &[EventType::ThreadProgress]).await;
    asked(&m, 1);
    p.inbox().args(["--agent", "lead", "send", "--to", "w1", "--summary", "Rebase on main"]).run().ok();
    let out = finish(b);
    assert_eq!(out.code, 0, "{}\n{}", out.stderr, m.outputs());
    came_as_a_turn(&m, 2, "Rebase on main");
    assert_eq!(sessions(&c).await.len(), 1);
}

/// A shutdown request reaches a live Codex session as a turn (with its request id); the
/// model approves it, and the bridge stops the session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shutdown_request_reaches_a_live_codex_session_as_a_turn_then_it_stops() {
    let Some(program) = cli(Agent::Codex) else { return };
    let inbox = bin("inbox").display().to_string();
    let up = format!("{} && {}", on_thread("claim", ">/dev/null"), progress());
    let approve = format!(
        "id=$({inbox} --agent \"$COORD_AGENT\" requests --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"requests\"][0][\"request_id\"])') && \
         {inbox} --agent \"$COORD_AGENT\" control --type shutdown_approved --payload \"{{\\\"request_id\\\":\\\"$id\\\"}}\" >/dev/null"
    );
    let turns = vec![
        Turn::reply(vec![shell(&up)]),
        Turn::reply(vec![text("Working.")]),
        Turn::reply(vec![shell(&approve)]),
        Turn::reply(vec![text("Stopped.")]),
    ];
    let (p, m, mut b, c, from) = live_run(Agent::Codex, &program, turns).await;
    let up = next_event(&c, from, &[EventType::ThreadProgress]).await;
    asked(&m, 1);
    p.inbox().args(["--agent", "lead", "shutdown", "--to", "w1", "--reason", "run over"]).run().ok();
    let ended = next_event(&c, up.event_id, &[EventType::LaunchExited]).await;
    let s = &ended.payload_json["session"];
    assert_eq!(s["state"].as_str(), Some("stopped"), "{s}\n{}", m.outputs());
    assert_eq!(s["reason"].as_str(), Some("stopped: shutdown approved"), "{s}\n{}", m.outputs());
    came_as_a_turn(&m, 2, "Shutdown requested");
    b.kill().unwrap();
    b.wait().unwrap();
}

/// Wait (bounded) until the session's log holds `needle`: the log is written by another
/// process as the session goes, with no event to wait on.
fn logged(log: &Path, needle: &str) {
    let t0 = std::time::Instant::now();
    while !std::fs::read_to_string(log).is_ok_and(|s| s.contains(needle)) {
        let log = std::fs::read_to_string(log).unwrap_or_default();
        assert!(t0.elapsed() < Duration::from_secs(120), "the log never held {needle}:\n{log}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A live Codex session whose Codex dies in the middle of a tool call: its attempt fails,
/// and its failure (the log's last lines) names that call; the raw output is kept beside
/// the log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_live_codex_sessions_failure_shows_its_last_tool_call() {
    let Some(program) = cli(Agent::Codex) else { return };
    let Busy { p, m: _m, mut b, c, up } = a_busy_session(Agent::Codex, &program, &[], &["--live"]).await;
    let first = sessions(&c).await.pop().expect("the session");
    // The session's process is the driver; Codex (the native binary, under npm's node
    // wrapper) is below it.
    let codex = descendants(first.pid)
        .into_iter()
        .find(|p| std::fs::read_link(format!("/proc/{p}/exe")).is_ok_and(|e| e.ends_with("codex")))
        .unwrap_or_else(|| panic!("no Codex under {first:?}"));
    // Codex 0.171 reports a command's `item/started` a while after the command started
    // (here: after the progress it sent), so the crash waits until the log shows the call.
    tokio::task::block_in_place(|| logged(Path::new(&first.log_path), "exec /bin/bash -lc 'if [ \"$COORD_ATTEMPT\""));
    assert!(std::process::Command::new("kill").args(["-KILL", &codex.to_string()]).status().unwrap().success());
    let ended = next_event(&c, up.event_id, &[EventType::LaunchExited]).await;
    let s = &ended.payload_json["session"];
    let tail = s["log_tail"].as_str().unwrap_or_default();
    let last = tail.lines().last().unwrap_or_default();
    let raw = Path::new(s["log_path"].as_str().unwrap()).with_extension("jsonl");
    let raw_lines = std::fs::read_to_string(&raw).unwrap_or_default();
    assert!(last.contains("unfinished tool call: exec ") && last.contains("COORD_ATTEMPT"), "{tail}\n{raw_lines}");
    assert!(tail.contains("codex app-server ended (killed by signal 9)"), "{tail}");
    assert_ne!(s["exit_code"], json!(0), "{s}");
    assert!(raw_lines.contains("\"item/started\""), "{}", raw.display());
    let t = orch(&p, &["task", "show", "--run", "R1", "--task", "T1"]);
    assert_eq!(t["attempts"][0]["status"], "failed", "{t}");
    b.kill().unwrap();
    b.wait().unwrap();
}

/// A live Claude Code session's log is readable lines (issue 33): killed in the middle of a
/// tool call, its failure (the session's log tail, the body of the attempt's result) ends
/// with that tool call and its command (cut short); the raw stream is kept beside the log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_live_claude_code_sessions_failure_shows_its_last_tool_call() {
    let Some(program) = cli(Agent::Claude) else { return };
    let Busy { p: _p, m, mut b, c, up } = a_busy_session(Agent::Claude, &program, &[], &["--live"]).await;
    let first = sessions(&c).await.pop().expect("the session");
    let st = std::process::Command::new("kill").args(["-KILL", &first.pid.to_string()]).status().unwrap();
    assert!(st.success());
    let ended = next_event(&c, up.event_id, &[EventType::LaunchExited]).await;
    let s = &ended.payload_json["session"];
    let tail = s["log_tail"].as_str().unwrap_or_default();
    let last = tail.lines().last().unwrap_or_default();
    assert!(last.contains("tool Bash: if [ \"$COORD_ATTEMPT\" != 1 ]"), "{tail}\n{}", m.outputs());
    assert!(tail.contains("claude session"), "{tail}");
    let raw = std::path::Path::new(s["log_path"].as_str().unwrap()).with_extension("jsonl");
    assert!(std::fs::read_to_string(&raw).unwrap_or_default().contains("\"tool_use\""), "{}", raw.display());
    b.kill().unwrap();
    b.wait().unwrap();
}

/// Issue 36: a live Claude Code session's work fails the run's verify command; the failure
/// (the command's last output lines) comes to the SAME session as its next user turn, with
/// the returned attempt's thread and worktree. The session fixes the work there, the verify
/// passes and the task merges: one process for both attempts (a session record each). (The
/// scripted model finds the new thread and worktree with `inbox`, where a model would read
/// them in the turn.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_claude_code_session_gets_its_failed_verify_as_a_turn_fixes_it_and_the_task_merges() {
    let Some(program) = cli(Agent::Claude) else { return };
    let p = git_project();
    launch_toml(&p, Agent::Claude, &program);
    // The first verify waits at a gate the test opens once the session's first turn ended,
    // so the failure meets an idle session (one written during a turn joins that turn).
    let gate = p.path().join("gate");
    assert!(std::process::Command::new("mkfifo").arg(&gate).status().unwrap().success());
    let verify = p.write(
        "verify.sh",
        &format!(
            "#!/bin/sh\nif [ ! -e {g}.seen ]; then touch {g}.seen; read x < {g}; fi\n\
             if grep -q BROKEN work.txt 2>/dev/null; then echo 'BROKEN in work.txt'; exit 1; fi\n",
            g = gate.display()
        ),
    );
    std::fs::set_permissions(&verify, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let v = verify.display().to_string();
    orch(&p, &["run", "create", "--goal", "g", "--id", "R1", "--auto-merge", "--verify", &v]);
    orch(&p, &["task", "add", "--run", "R1", "--id", "T1", "--title", "T1", "--assign-to", "w1"]);
    let commit = "git add -A && git -c user.email=w@e -c user.name=w commit -q -m";
    let inbox = bin("inbox").display().to_string();
    let py = |expr: &str| format!("python3 -c 'import json,sys; print(json.load(sys.stdin){expr})'");
    let fix = format!(
        "T=$({inbox} --json fetch --agent \"$COORD_AGENT\" | {}) && \
         W=$({inbox} --json show --thread \"$T\" | {}) && cd \"$W\" && \
         {inbox} claim --agent \"$COORD_AGENT\" --thread \"$T\" >/dev/null && echo fixed > work.txt && {commit} fixed && \
         {inbox} done --agent \"$COORD_AGENT\" --thread \"$T\" --summary fixed >/dev/null && echo worked",
        py("[\"threads\"][0][\"thread_id\"]"),
        py("[\"messages\"][0][\"payload_json\"][\"worktree_path\"]"),
    );
    let m = model(
        Agent::Claude,
        vec![
            Turn::reply(vec![shell(&worker(&format!("echo BROKEN > work.txt && {commit} broken")))]),
            Turn::reply(vec![text("Committed and done; ending my turn.")]),
            Turn::reply(vec![shell(&fix)]),
            Turn::reply(vec![text("Fixed.")]),
        ],
    );
    let c = p.client().await;
    let from = c.server_info().last_event_id;
    let b = bridge(&p, &m, &["--dispatch", "--until-done", "--live", "--merge-queue"]);
    // The session's log filter reports usage at each turn's end.
    next_event(&c, from, &[EventType::LaunchUsage]).await;
    std::fs::write(&gate, "go\n").unwrap();
    let out = finish(b);
    let list = sessions(&c).await;
    assert_eq!(out.code, 0, "{}\n{list:?}\n{}", out.stderr, m.outputs());
    // The failure came to the session as a user turn: the request that followed it.
    let back = m.mock.turn_requests().into_iter().find(|r| r.turn == Some(2)).expect("a request after the failure");
    assert!(
        back.user_input.iter().any(|u| u.contains("BROKEN in work.txt") && u.contains("came back to you")),
        "the failure did not come as a user turn: {:?}\n{}",
        back.user_input,
        m.mock.transcript()
    );
    // One process for both attempts, each attempt with its session record: the first
    // handed over to the second, which ended as the process did.
    assert_eq!(list.len(), 2, "a session record per attempt: {list:?}");
    assert_eq!((list[0].pid, list[0].attempt, list[1].attempt), (list[1].pid, 1, 2), "one process: {list:?}");
    let handed = list[0].reason.as_deref().unwrap_or_default();
    assert!(handed.contains("handed over") && handed.contains("T1 a2"), "{list:?}");
    assert_eq!(list[1].exit_code, Some(0), "{list:?}");
    let t = orch(&p, &["task", "show", "--run", "R1", "--task", "T1"]);
    assert_eq!(t["attempts"].as_array().unwrap().len(), 2, "{t}");
    assert_eq!(t["task"]["merge_state"], "merged", "{t}");
    assert_eq!(git_in(p.path(), &["show", "orch/R1/integration:work.txt"]), "fixed\n");
}

/// `--reuse-sessions` with the real Claude Code (issue 33): w1's T2, ready once T1 is done,
/// reaches the session that did T1 as a new user turn (the model's third request carries
/// T2's prompt); one process does both tasks, each attempt with its session record.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reused_claude_code_session_gets_the_next_task_as_a_new_turn() {
    let Some(program) = cli(Agent::Claude) else { return };
    let p = Project::new();
    launch_toml(&p, Agent::Claude, &program);
    orch(&p, &["run", "create", "--goal", "g", "--id", "R1"]);
    for (t, deps) in [("T1", None), ("T2", Some("T1"))] {
        let mut a =
            vec!["task", "add", "--run", "R1", "--id", t, "--title", t, "--kind", "thread", "--assign-to", "w1"];
        a.extend(deps.iter().flat_map(|d| ["--depends-on", *d]));
        orch(&p, &a);
    }
    let home = tempfile::Builder::new().prefix("agent-home").tempdir().expect("a home for the CLI");
    let scenario = coord_tests::mock_model::live::two_tasks_one_by_one(&bin("inbox"), "w1", p.path());
    let mock = MockModel::start(Anthropic, scenario);
    let m = Model { env: claude_env(&mock, home.path()), mock, agent: Agent::Claude, _home: home };
    let out = finish(bridge(&p, &m, &["--dispatch", "--until-done", "--reuse-sessions"]));
    let c = p.client().await;
    let list = sessions(&c).await;
    assert_eq!(out.code, 0, "{}\n{list:?}\n{}", out.stderr, m.outputs());
    assert_eq!(list.len(), 2, "a session record per attempt: {list:?}");
    assert_eq!((list[0].pid, &list[1].task_id), (list[1].pid, &"T2".to_string()), "one process: {list:?}");
    assert_eq!(list[1].exit_code, Some(0), "{list:?}");
    let reqs = m.mock.turn_requests();
    let t2 = reqs.iter().find(|r| r.user_input.iter().any(|u| u.contains("Your task is T2")));
    assert_eq!(t2.and_then(|r| r.turn), Some(2), "T2 came as the third request's user turn:\n{}", m.mock.transcript());
}

/// The spellings of the gated `rm VICTIM` the worker tries after its approval routes.
const SPELLINGS: [&str; 8] = [
    "/bin/rm VICTIM",
    "rm  VICTIM",
    "'rm' VICTIM",
    "bash -c 'rm VICTIM'",
    "sh -c \"rm VICTIM\"",
    "env rm VICTIM",
    "command rm VICTIM",
    "true && nohup rm VICTIM",
];

/// Issue 32's acceptance: with credentials required and `Bash(rm *)` gated, a real Claude
/// Code worker launched by the bridge (with the lead's secret) runs `rm` on a file and, while
/// its hook waits for the lead, tries every route on the socket to approve it itself, change
/// the gate or become the lead (support/self_approve.py): each is refused. The lead denies;
/// then the worker tries the same command under other spellings: each is gated and denied
/// (the test denies every request it sees). The file is never removed, and the worker still
/// finishes its task with its own secret.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_launched_claude_code_worker_cannot_approve_its_gated_command_or_respell_it() {
    let Some(program) = cli(Agent::Claude) else { return };
    let p = git_project();
    launch_toml(&p, Agent::Claude, &program);
    // A code task (dispatch installs the hooks in its worktree), merged when done.
    orch(&p, &["run", "create", "--goal", "g", "--id", "R1", "--auto-merge"]);
    orch(&p, &["task", "add", "--run", "R1", "--id", "T1", "--title", "T1", "--assign-to", "w-one"]);
    let lead = coord_tests::register(&p, "lead-one");
    coord_tests::ok_as(&p, "lead-one", &["policy", "lead", "lead-one"]);
    coord_tests::ok_as(&p, "lead-one", &["policy", "gate", "Bash(rm *)"]);
    coord_tests::ok_as(&p, "lead-one", &["policy", "timeout", "600"]);
    coord_tests::ok(&p, &["init", "--require-credentials", "--lead", "lead-one"]);
    let victim = p.path().join("victim.txt");
    std::fs::write(&victim, "keep me").unwrap();
    let script = p.path().join("self_approve.py");
    std::fs::write(&script, include_str!("support/self_approve.py")).unwrap();
    let routes = p.path().join("routes.out");
    let rm = |spelling: &str| spelling.replace("VICTIM", &victim.display().to_string());
    let start = format!(
        "{} && (setsid nohup python3 '{}' '{}' '{}' lead-one R1 T1 </dev/null >'{}.err' 2>&1 &)",
        worker_up("true"),
        script.display(),
        p.paths().socket.display(),
        routes.display(),
        routes.display()
    );
    let mut turns = vec![Turn::reply(vec![shell(&start)]), Turn::reply(vec![shell(&rm("rm VICTIM"))])];
    turns.extend(SPELLINGS.iter().map(|s| Turn::reply(vec![shell(&rm(s))])));
    let commit = "echo T1 > T1.txt && git add T1.txt && git -c user.email=w@e -c user.name=w commit -q -m T1";
    let finish_line = format!("test -f '{}' && echo victim-kept; {}", victim.display(), worker(commit));
    turns.extend([Turn::reply(vec![shell(&finish_line)]), Turn::reply(vec![text("Done.")])]);
    let m = model(Agent::Claude, turns);
    let c = p.client().await;
    let from = c.server_info().last_event_id;
    let mut run = p.launch().args(["--run", "R1", "--grace-seconds", "5", "--dispatch", "--until-done"]);
    run = run.env(AGENT_SECRET_ENV, &lead);
    for (k, v) in &m.env {
        run = run.env(k, v);
    }
    let b = run.spawn();
    // The first request waits for the lead while the worker tries its routes.
    let mut tried = from;
    let first = loop {
        let e = next_event(&c, tried, &[EventType::ThreadProgress]).await;
        if e.summary == "routes-tried" {
            break e;
        }
        tried = e.event_id;
    };
    let lead_c = Client::connect_socket_as(&p.paths().socket, Some(&lead)).await.unwrap();
    // Every request after the first comes once the first is answered.
    let mut after = from;
    for n in 0..=SPELLINGS.len() {
        let no = json!({"approved": false, "reason": "no"});
        let r = coord_tests::answer_permission(&lead_c, "lead-one", after, no).await;
        assert_eq!(r.from_agent, "w-one", "request {n}: {r:?}");
        after = r.event_id.max(first.event_id);
    }
    let out = finish(b);
    let seen = m.outputs();
    let tried = std::fs::read_to_string(&routes).unwrap_or_default();
    let tried = format!("{tried}{}", std::fs::read_to_string(routes.with_extension("out.err")).unwrap_or_default());
    assert!(victim.exists(), "the gated command ran:\n{tried}\n{seen}");
    assert_eq!(tried.lines().filter(|l| l.contains(" | ")).count(), 16, "every route was tried:\n{tried}");
    for line in tried.lines() {
        assert!(line.contains("| refused"), "a route got through (or the script failed): {line}\n{tried}");
    }
    assert!(seen.contains("Denied by lead-one: no"), "{seen}");
    assert!(seen.contains("victim-kept") && seen.contains("worked"), "{seen}");
    assert_eq!(out.code, 0, "the worker finished with its own secret: {}\n{seen}", out.stderr);
}
