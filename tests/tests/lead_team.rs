//! Issue 35's acceptance with real agent CLIs in every seat: `coord-launch --lead claude
//! --goal …` runs the real Claude Code as the lead AND as its workers (all pinned,
//! `agent_cli`), against one scripted model server that tells the sessions apart by their
//! prompts (`mock_model::routes`); `--lead codex` runs the real Codex as the lead (live,
//! through its app-server driver) with Claude Code workers, each CLI on a model server of
//! its own. The lead plans two code tasks with a dependency through `orch mcp` and
//! dispatches them; T1's worker asks, the question is pushed into the lead's session and
//! the lead answers; the worker's gated `git push` goes to the lead, which approves it; the
//! lead merges each done task, dispatches T2 when it is ready, finishes the run once it is
//! done, and `coord-launch` exits 0.
//!
//! After its opening plan the lead's script only reacts to what reaches its session
//! (`routes::Reaction`): no `before` waits, no polling. The workers are live sessions: the
//! answer reaches T1's worker as a new turn. Every wait is on a process's end.

use std::time::Duration;

use coord_tests::mock_model::anthropic::{Anthropic, claude_env, tool_results};
use coord_tests::mock_model::openai::{OpenAi, codex_config, tool_outputs};
use coord_tests::mock_model::routes::{Route, on};
use coord_tests::mock_model::{MockModel, Request, Scenario, Turn, shell, text, tool};
use coord_tests::on_thread;
use coord_tests::{Project, agent_cli, finish_within, git_in, git_project, ok_as};
use serde_json::json;

/// The words of the lead's prompt that route its requests (lead_prompt.rs).
const LEAD: &str = "the lead of run R1";

/// The words of a worker's prompt that route its requests (client.rs).
fn worker_of(task: &str) -> String {
    format!("a worker of run R1. Your task is {task}:")
}

/// Commit `$COORD_TASK.txt` in the session's worktree.
const COMMIT: &str = "echo \"$COORD_TASK\" > \"$COORD_TASK.txt\" && git add \"$COORD_TASK.txt\" && \
                      git -c user.email=w@e -c user.name=w commit -q -m \"$COORD_TASK\"";

/// The lead: plan T1 and T2 (after T1), dispatch, then react to each pushed turn.
fn lead_script(tool_prefix: &str) -> Scenario {
    let t = |name: &str| format!("{tool_prefix}{name}");
    let t1 = json!({"task_id": "T1", "title": "Schema", "kind": "code", "assign_to": "w1",
                    "body": "Write T1.txt.", "acceptance": "T1.txt is committed"});
    let t2 = json!({"task_id": "T2", "title": "Login", "kind": "code", "assign_to": "w2",
                    "body": "Write T2.txt.", "depends_on": ["T1"]});
    let turns = vec![
        Turn::reply(vec![tool(&t("add_task"), t1)]),
        Turn::reply(vec![tool(&t("add_task"), t2)]),
        Turn::reply(vec![tool(&t("dispatch"), json!({}))]),
    ];
    let approve = json!({"request_id": "{captured}", "approve": true, "reason": "pushing your own branch is fine"});
    Scenario::new(turns)
        .on(on(
            "[attention] task.blocked T1",
            vec![tool(&t("answer"), json!({"task_id": "T1", "summary": "Use SQLite"}))],
        ))
        .on(on("[attention] permission_request", vec![tool(&t("respond"), approve)]).capture("request_id "))
        .on(on("[attention] task.done T1", vec![tool(&t("merge"), json!({"task_id": "T1"}))]))
        .on(on("[attention] task.ready T2", vec![tool(&t("dispatch"), json!({"task_id": "T2"}))]))
        .on(on("[attention] task.done T2", vec![tool(&t("merge"), json!({"task_id": "T2"}))]))
        .on(on("[attention] run.done", vec![tool(&t("finish_run"), json!({}))]))
}

/// T1's worker: asks and ends its turn; once the answer has reached it (a new turn, or
/// beside a tool result when it comes that fast) commits, pushes its branch (gated) and
/// finishes. T2's: commits and finishes.
fn worker_scripts() -> (Scenario, Scenario) {
    let ask = format!(
        "{} && {}",
        on_thread("claim", ">/dev/null"),
        on_thread("update", "--status blocked --summary 'Which db?' >/dev/null")
    );
    let push = format!(
        "{COMMIT} && git push -q origin HEAD:refs/heads/pushed-T1 && {} && echo pushed",
        on_thread("done", "--summary finished >/dev/null")
    );
    let t1 = Scenario::new(vec![Turn::reply(vec![shell(&ask)])]).on(on("Use SQLite", vec![shell(&push)]));
    let work = format!(
        "{} && {COMMIT} && {}",
        on_thread("claim", ">/dev/null"),
        on_thread("done", "--summary finished >/dev/null")
    );
    let t2 = vec![Turn::reply(vec![shell(&work)]), Turn::reply(vec![text("Done.")])];
    (t1, Scenario::new(t2))
}

/// A git project whose `origin` is a bare repository (returned), with `git push` gated for
/// every agent and the `lead` agent as the project's lead and approver.
fn gated_project() -> (Project, tempfile::TempDir) {
    let p = git_project();
    let origin = tempfile::Builder::new().prefix("origin").tempdir().unwrap();
    git_in(origin.path(), &["init", "-q", "--bare"]);
    git_in(p.path(), &["remote", "add", "origin", &origin.path().display().to_string()]);
    let _d = p.serve();
    ok_as(&p, "lead", &["policy", "lead", "lead"]);
    ok_as(&p, "lead", &["policy", "gate", "Bash(git push*)"]);
    ok_as(&p, "lead", &["policy", "timeout", "600"]);
    (p, origin)
}

/// The requests of route `route` whose new user input holds every one of `needles`.
fn pushed(mock: &MockModel, route: usize, needles: &[&str]) -> Vec<Request> {
    let holds = |u: &String| needles.iter().all(|n| u.contains(n));
    mock.requests().into_iter().filter(|r| r.route == route && r.user_input.iter().any(holds)).collect()
}

/// `.agents/launch.toml`: the workers run the real Claude Code, the lead the `lead` CLI.
fn launch_toml(p: &Project, lead: &std::path::Path) {
    let claude = agent_cli("claude").expect("claude");
    let toml = format!(
        "[defaults]\nclient = \"claude\"\nprogram = {:?}\n\n[agents.lead]\nprogram = {:?}\n",
        claude.display().to_string(),
        lead.display().to_string()
    );
    std::fs::write(p.path().join(".agents/launch.toml"), toml).unwrap();
}

/// Where a session's requests went: its mock and its route there.
type Seat<'a> = (&'a MockModel, usize);

/// `coord-launch --lead LEAD --goal …` on R1 with live workers and `env`, to its end (a
/// guard stops it after 15 minutes); then what the acceptance asks, checked.
fn team(p: &Project, origin: &std::path::Path, lead: &str, env: &[(String, String)], seats: [Seat<'_>; 2]) {
    let [(lead_mock, lead_route), (w1_mock, w1_route)] = seats;
    let args = ["--lead", lead, "--goal", "Ship login", "--run", "R1", "--live", "--grace-seconds", "60"];
    let mut l = p.launch().args(args);
    for (k, v) in env {
        l = l.env(k, v);
    }
    let out = finish_within(l.spawn(), Duration::from_secs(900));
    let results: Vec<String> = lead_mock
        .turn_requests()
        .iter()
        .flat_map(|r| [tool_results(&r.body), tool_outputs(&r.body)].concat())
        .collect();
    let why = || format!("{}\n{}\n{results:#?}", out.stdout, out.stderr);
    assert_eq!(out.code, 0, "{}", why());

    // The plan went through orch mcp: T2 after T1, both merged, and the run finished.
    let view = p.orch().json_flag().args(["run", "show", "--run", "R1"]).run().ok().json();
    assert_eq!(view["run"]["status"], "done", "{view}");
    let tasks = view["tasks"].as_array().unwrap();
    assert_eq!(tasks[1]["depends_on"], json!(["T1"]), "{view}");
    let main = git_in(p.path(), &["log", "--format=%s", "main"]);
    assert!(main.contains("T1") && main.contains("T2"), "finish_run put both into main: {main}\n{}", why());
    // The question reached the lead's session pushed, and the answer T1's worker as a turn.
    let asked = pushed(lead_mock, lead_route, &["[attention] task.blocked T1", "question: Which db?"]);
    assert!(!asked.is_empty(), "{}", why());
    assert!(!pushed(w1_mock, w1_route, &["Use SQLite"]).is_empty(), "{}", why());
    // The gated push was pushed to the lead, approved by it, and ran.
    assert!(!pushed(lead_mock, lead_route, &["[attention] permission_request", "git push"]).is_empty(), "{}", why());
    git_in(origin, &["rev-parse", "--verify", "refs/heads/pushed-T1"]);
    assert!(results.iter().any(|r| r.contains("\"answered\"")), "{}", why());
}

#[test]
fn claude_leads_claude_workers_from_a_goal_to_a_finished_run() {
    let Some(claude) = agent_cli("claude") else { return };
    let (p, origin) = gated_project();
    launch_toml(&p, &claude);
    let (w1, w2) = worker_scripts();
    let routes = vec![
        Route::new(LEAD, lead_script("mcp__orch__").cwd(p.path())),
        Route::new(&worker_of("T1"), w1),
        Route::new(&worker_of("T2"), w2),
    ];
    let mock = MockModel::routed(Anthropic, routes);
    let config = tempfile::tempdir().unwrap();
    team(&p, origin.path(), "claude", &claude_env(&mock, config.path()), [(&mock, 0), (&mock, 1)]);
}

/// The same with the real Codex as the lead, live through its app-server driver (the
/// workers are Claude Code, on a model server of their own).
#[test]
fn codex_leads_claude_workers_from_a_goal_to_a_finished_run() {
    let (Some(codex), Some(_)) = (agent_cli("codex"), agent_cli("claude")) else { return };
    let (p, origin) = gated_project();
    launch_toml(&p, &codex);
    let lead = MockModel::start(OpenAi, lead_script("mcp__orch__").cwd(p.path()));
    let (w1, w2) = worker_scripts();
    let workers =
        MockModel::routed(Anthropic, vec![Route::new(&worker_of("T1"), w1), Route::new(&worker_of("T2"), w2)]);
    let config = tempfile::tempdir().unwrap();
    let codex_home = tempfile::tempdir().unwrap();
    std::fs::write(codex_home.path().join("config.toml"), codex_config(&lead)).unwrap();
    let mut env = claude_env(&workers, config.path());
    env.push(("CODEX_HOME".into(), codex_home.path().display().to_string()));
    env.push(("CODEX_MOCK_API_KEY".into(), "dummy".into()));
    team(&p, origin.path(), "codex", &env, [(&lead, 0), (&workers, 0)]);
}
