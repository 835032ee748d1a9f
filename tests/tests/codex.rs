//! Codex as a worker: the real `codex` CLI, run headless against the scripted model
//! (`coord_tests::mock_model`), in a worktree `orch dispatch` made, with no hand-written
//! configuration; and `inbox hook install --client codex`, `--trust-global` and
//! `hook doctor` in a person's checkout.

use std::path::{Path, PathBuf};

use coord_client::codex::{session_env, trust_args};
use coord_tests::mock_model::openai::{CodexExec, CodexRun, OpenAi, messages, offered_tools, tool_outputs};
use coord_tests::mock_model::{MockModel, Scenario, Turn, shell, text, tool};
use coord_tests::*;
use serde_json::{Value, json};

/// A project that is a git repository with one commit, served by a daemon that finds
/// `codex` on its PATH (so dispatch installs for Codex, as on a machine that has it).
fn codex_project(codex: &Path) -> (Project, Daemon) {
    let p = Project::new();
    init_repo(&p);
    let path = format!("{}:{}", codex.parent().unwrap().display(), std::env::var("PATH").unwrap_or_default());
    let d = p.serve_with(&[], &[("PATH", &path)]);
    (p, d)
}

/// Dispatch one code task of run R1 to `w1`: its worktree.
fn dispatched(p: &Project) -> PathBuf {
    let orch = |args: &[&str]| p.orch().json_flag().args(args).run().ok().json();
    orch(&["run", "create", "--goal", "g", "--id", "R1"]);
    orch(&["task", "add", "--run", "R1", "--id", "T1", "--title", "Schema", "--assign-to", "w1"]);
    let d = orch(&["dispatch", "--run", "R1", "--task", "T1"]);
    d["dispatches"][0]["worktree_path"].as_str().expect("a worktree").into()
}

/// The shell command that sends `w1` a message from `lead` (for a turn's `before`).
fn mail(p: &Project, subject: &str) -> String {
    format!(
        "{} --db {} --agent lead send --to w1 --subject {subject} --summary 'note-{subject}'",
        bin("inbox").display(),
        p.paths().db.display()
    )
}

/// Run codex in the dispatched worktree the way the launch bridge does: trusted for this
/// invocation only, with the session's identity in its environment, approvals and sandbox
/// off.
fn run_codex(db: &Path, codex: &Path, wt: &Path, mock: &MockModel) -> CodexRun {
    run_codex_with(db, codex, wt, mock, &[])
}

/// [`run_codex`], with more variables in Codex's environment.
fn run_codex_with(db: &Path, codex: &Path, wt: &Path, mock: &MockModel, env: &[(&str, &str)]) -> CodexRun {
    let mut args = trust_args(&[wt]);
    args.push("--dangerously-bypass-approvals-and-sandbox".into());
    let mut exec = CodexExec::new(codex, wt, mock).args(&args);
    let more = env.iter().map(|(k, v)| (k.to_string(), v.to_string()));
    for (k, v) in session_env(db, "w1", Some("T1"), Some("R1")).into_iter().chain(more) {
        exec = exec.env(&k, &v);
    }
    let run = exec.run("do the task");
    assert_eq!(run.status, Some(0), "{}\n{}", run.describe(), mock.transcript());
    run
}

/// Every text of `role` in the last turn request (it holds the whole conversation).
fn last_texts(mock: &MockModel, role: &str) -> Vec<String> {
    mock.turn_requests().last().map(|r| messages(&r.body, role)).unwrap_or_default()
}

#[test]
fn the_scripted_model_drives_codex() {
    let Some(codex) = agent_cli("codex") else { return };
    let p = Project::new();
    let mock = MockModel::start(
        OpenAi,
        Scenario::new(vec![Turn::reply(vec![shell("echo from-the-shell")]), Turn::reply(vec![text("Done.")])]),
    );
    let run =
        CodexExec::new(&codex, p.path(), &mock).args(&["--dangerously-bypass-approvals-and-sandbox"]).run("do it");
    assert_eq!(run.status, Some(0), "{}", run.describe());
    let turns = mock.turn_requests();
    assert_eq!(turns.len(), 2, "{}", mock.transcript());
    assert!(tool_outputs(&turns[1].body).iter().any(|o| o.contains("from-the-shell")), "{}", mock.transcript());
}

#[test]
fn the_mcp_tools_reach_codex_and_check_inbox_delivers() {
    let Some(codex) = agent_cli("codex") else { return };
    let (p, _d) = codex_project(&codex);
    let wt = dispatched(&p);
    let turns = vec![
        Turn::reply(vec![tool("mcp__coordd__check_inbox", json!({}))]).before(&mail(&p, "first")),
        Turn::reply(vec![text("Done.")]),
    ];
    let mock = MockModel::start(OpenAi, Scenario::new(turns));
    run_codex(&p.paths().db, &codex, &wt, &mock);
    let reqs = mock.turn_requests();
    let tools = offered_tools(&reqs[0].body);
    let ours: Vec<&String> = tools.iter().filter(|t| t.starts_with("mcp__coordd__")).collect();
    assert!(ours.len() >= 10 && tools.contains(&"mcp__coordd__check_inbox".to_string()), "{tools:?}");
    assert!(tool_outputs(&reqs[1].body).iter().any(|o| o.contains("note-first")), "{}", mock.transcript());
    // Delivered: nothing is left to check.
    let left = ok_as(&p, "w1", &["check"]);
    assert_eq!(left["messages"].as_array().map(Vec::len), Some(0), "{left}");
}

/// Codex gives MCP servers only some of its environment; dispatch's server config passes
/// on `COORD_MCP_WAIT_SECONDS`, so a project can change its sessions' wait_reply limit
/// (here: lower it to 1 s, which the result then reports).
#[test]
fn codex_passes_the_wait_limit_on_to_the_mcp_server_dispatch_registered() {
    let Some(codex) = agent_cli("codex") else { return };
    let (p, _d) = codex_project(&codex);
    let wt = dispatched(&p);
    let t = p.orch().json_flag().args(["task", "show", "--run", "R1", "--task", "T1"]).run().ok().json();
    let thread = t["attempts"][0]["thread_id"].as_str().expect("the attempt's thread");
    let wait = json!({"thread_id": thread, "timeout_seconds": 30});
    let turns = vec![Turn::reply(vec![tool("mcp__coordd__wait_reply", wait)]), Turn::reply(vec![text("Done.")])];
    let mock = MockModel::start(OpenAi, Scenario::new(turns));
    run_codex_with(&p.paths().db, &codex, &wt, &mock, &[("COORD_MCP_WAIT_SECONDS", "1")]);
    let outputs = tool_outputs(&mock.turn_requests()[1].body);
    assert!(outputs.iter().any(|o| o.contains("cut_to_seconds")), "{}", mock.transcript());
}

#[test]
fn the_post_tool_use_reminder_reaches_codex_once_and_names_the_mcp_tool() {
    let Some(codex) = agent_cli("codex") else { return };
    let (p, _d) = codex_project(&codex);
    let wt = dispatched(&p);
    let turns = vec![
        Turn::reply(vec![shell("echo one")]).before(&mail(&p, "first")),
        Turn::reply(vec![shell("echo two")]),
        Turn::reply(vec![text("Done.")]),
    ];
    let mock = MockModel::start(OpenAi, Scenario::new(turns));
    run_codex(&p.paths().db, &codex, &wt, &mock);
    let reminders: Vec<String> =
        last_texts(&mock, "developer").into_iter().filter(|m| m.contains("pending message(s)")).collect();
    assert_eq!(reminders.len(), 1, "{reminders:?}\n{}", mock.transcript());
    assert!(reminders[0].contains("mcp__coordd__check_inbox"), "{}", reminders[0]);
}

#[test]
fn a_stop_with_unread_mail_blocks_codex_once_per_batch() {
    let Some(codex) = agent_cli("codex") else { return };
    let (p, _d) = codex_project(&codex);
    let wt = dispatched(&p);
    let turns = vec![
        Turn::reply(vec![text("Done.")]).before(&mail(&p, "first")),
        // The first block's turn: a second batch arrives before its answer.
        Turn::reply(vec![text("Handled the first.")]).before(&mail(&p, "second")),
        Turn::reply(vec![text("Handled the second.")]),
    ];
    let mock = MockModel::start(OpenAi, Scenario::new(turns));
    run_codex(&p.paths().db, &codex, &wt, &mock);
    // Two blocks (one per batch), then the session ends: no loop.
    assert_eq!(mock.turn_requests().len(), 3, "{}", mock.transcript());
    let blocks: Vec<String> = last_texts(&mock, "user").into_iter().filter(|m| m.contains("Before stopping")).collect();
    assert_eq!(blocks.len(), 2, "{blocks:?}");
    assert!(blocks[0].contains("note-first") && blocks[1].contains("note-second"), "{blocks:?}");
}

/// With `Bash(git push*)` gated, Codex calls its shell tool with `call`; the lead denies
/// the request with "no pushes today": what the model got back as the tool's output.
async fn denied_by_the_lead(call: coord_tests::mock_model::Block) -> Option<Vec<String>> {
    let codex = agent_cli("codex")?;
    let (p, _d) = codex_project(&codex);
    ok_as(&p, "lead", &["policy", "lead", "lead"]);
    ok_as(&p, "lead", &["policy", "gate", "Bash(git push*)"]);
    let wt = dispatched(&p);
    let after = p.client().await.server_info().last_event_id;
    let turns = vec![Turn::reply(vec![call]), Turn::reply(vec![text("Done.")])];
    let mock = std::sync::Arc::new(MockModel::start(OpenAi, Scenario::new(turns)));
    let m = mock.clone();
    let db = p.paths().db;
    let session = tokio::task::spawn_blocking(move || run_codex(&db, &codex, &wt, &m));
    let lead = p.client().await;
    answer_permission(&lead, "lead", after, json!({"approved": false, "reason": "no pushes today"})).await;
    session.await.unwrap();
    Some(tool_outputs(&mock.turn_requests()[1].body))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gated_command_is_denied_and_codex_sees_the_leads_reason() {
    let Some(outputs) = denied_by_the_lead(shell("git push origin main")).await else { return };
    assert!(outputs.iter().any(|o| o.contains("Denied by lead: no pushes today")), "{outputs:?}");
}

/// Issue 32: `bash -c 'git push …'` pushed through Codex; now it is gated like the push
/// itself, and the model is told what it ran.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_push_inside_bash_c_is_denied_and_codex_sees_the_leads_reason() {
    let Some(outputs) = denied_by_the_lead(shell("bash -c 'git push origin main'")).await else { return };
    let why = "(gated by Bash(git push*): `bash -c 'git push origin main'` runs `git push origin main`)";
    assert!(outputs.iter().any(|o| o.contains(&format!("Denied by lead: no pushes today {why}"))), "{outputs:?}");
}

/// Issue 32: an interactive shell (`exec_command` with `tty: true`, fed later with
/// `write_stdin`, which runs no hook) is gated in a session where a Bash rule is: Codex's
/// hook sees only `{"command": "bash"}`, a shell that reads its commands from its input.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interactive_shell_is_gated_when_a_bash_rule_is() {
    let Some(outputs) = denied_by_the_lead(tool("shell", json!({"command": "bash", "tty": true}))).await else {
        return;
    };
    assert!(
        outputs.iter().any(|o| o.contains("Denied by lead: no pushes today") && o.contains("which no hook sees")),
        "{outputs:?}"
    );
}

#[test]
fn codexs_install_adds_nothing_to_git_status() {
    let Some(codex) = agent_cli("codex") else { return };
    let (p, _d) = codex_project(&codex);
    let wt = dispatched(&p);
    let config = std::fs::read_to_string(wt.join(".codex/config.toml")).expect("dispatch wrote Codex's config");
    assert!(config.contains("[mcp_servers.coordd]") && config.contains("default_tools_approval_mode = \"approve\""));
    // Codex reads the hooks of a linked worktree from the main checkout.
    assert!(p.path().join(".codex/hooks.json").is_file());
    let doctor = p.inbox().args(["hook", "doctor", "--dir", &wt.display().to_string(), "--json"]).run().ok().json();
    let hooks = format!("hooks in {}", std::fs::canonicalize(p.path()).unwrap().join(".codex/hooks.json").display());
    assert!(doctor["checks"].as_array().unwrap().iter().any(|c| c["message"] == hooks), "{doctor}");
    assert_eq!(git_in(&wt, &["status", "--porcelain"]), "", "the worktree");
    assert_eq!(git_in(p.path(), &["status", "--porcelain"]), "", "the repository root");
}

/// A person's checkout (a git repository), its daemon, and a throwaway CODEX_HOME.
fn checkout() -> (Project, tempfile::TempDir) {
    let p = Project::new();
    git_in(p.path(), &["init", "-q", "-b", "main"]);
    (p, tempfile::tempdir().unwrap())
}

fn inbox_in(p: &Project, home: &Path, args: &[&str]) -> Out {
    p.inbox().env("CODEX_HOME", &home.display().to_string()).args(args).run()
}

#[test]
fn hook_install_for_codex_merges_its_files_and_keeps_them_out_of_git() {
    let (p, home) = checkout();
    std::fs::create_dir(p.path().join(".codex")).unwrap();
    p.write(".codex/config.toml", "# mine\nmodel = \"o3\"\n\n[shell_environment_policy]\ninherit = \"core\"\n");
    let r = inbox_in(&p, home.path(), &["--agent", "me", "hook", "install", "--client", "codex", "--json"]).ok().json();
    assert_eq!(r["clients"], json!(["codex"]), "{r}");
    let config = std::fs::read_to_string(p.path().join(".codex/config.toml")).unwrap();
    assert!(config.starts_with("# mine\nmodel = \"o3\""), "the person's settings stay: {config}");
    assert!(config.contains("inherit = \"core\"") && config.contains("COORD_AGENT = \"me\""), "{config}");
    let hooks: Value =
        serde_json::from_str(&std::fs::read_to_string(p.path().join(".codex/hooks.json")).unwrap()).unwrap();
    assert!(hooks["hooks"]["Stop"][0]["hooks"][0]["command"].as_str().unwrap().ends_with("--client codex"), "{hooks}");
    assert!(!p.path().join(".claude").exists() && !p.path().join(".mcp.json").exists(), "no Claude Code files");
    git_in(p.path(), &["add", "-A"]);
    assert_eq!(git_in(p.path(), &["status", "--porcelain"]), "");
}

#[test]
fn trust_global_shows_what_it_adds_then_writes_it_once() {
    let (p, home) = checkout();
    let args = ["--agent", "me", "hook", "install", "--client", "codex", "--trust-global"];
    let out = inbox_in(&p, home.path(), &args).ok();
    let config = std::fs::read_to_string(home.path().join("config.toml")).unwrap();
    let dir = std::fs::canonicalize(p.path()).unwrap();
    let entry = format!("[projects.\"{}\"]\ntrust_level = \"trusted\"", dir.display());
    assert!(config.contains(&entry), "{config}");
    assert!(out.stdout.contains(&entry), "shown: {}", out.stdout);
    inbox_in(&p, home.path(), &args).ok();
    let again = std::fs::read_to_string(home.path().join("config.toml")).unwrap();
    assert_eq!(again, config, "trusted once");
}

#[test]
fn hook_doctor_tells_when_codex_would_skip_the_project() {
    let (p, home) = checkout();
    inbox_in(&p, home.path(), &["--agent", "me", "hook", "install", "--client", "codex"]).ok();
    let doctor = |p: &Project| inbox_in(p, home.path(), &["hook", "doctor", "--json"]).ok().json();
    let skip = |d: &Value| {
        d["checks"].as_array().unwrap().iter().any(|c| c["message"].as_str().unwrap().contains("skips .codex/"))
    };
    assert!(skip(&doctor(&p)), "{}", doctor(&p));
    inbox_in(&p, home.path(), &["--agent", "me", "hook", "install", "--client", "codex", "--trust-global"]).ok();
    assert!(!skip(&doctor(&p)), "{}", doctor(&p));
}

#[test]
fn a_shutdown_tells_a_codex_session_to_stop_with_a_block() {
    // Codex goes on after a PostToolUse `continue: false`; a block's reason reaches the model.
    let p = Project::new();
    let _d = p.serve();
    p.inbox().args(["--agent", "lead", "shutdown", "--to", "w1", "--reason", "rebasing"]).run().ok();
    let hook = |event: &str| {
        let args = ["--agent", "w1", "hook", "claude", event, "--client", "codex"];
        p.inbox().args(args).stdin(json!({"hook_event_name": "PostToolUse"}).to_string().as_bytes()).run().ok()
    };
    let out = hook("post-tool-use").json();
    assert_eq!(out["decision"], "block", "{out}");
    let reason = out["reason"].as_str().unwrap();
    assert!(reason.starts_with("Shutdown requested by lead: rebasing") && reason.contains("Stop now"), "{reason}");
    // Answered once: the next Stop lets the session end.
    assert_eq!(hook("stop").stdout.trim(), "");
}

#[test]
fn a_codex_config_that_is_not_toml_is_refused_and_left_as_it_was() {
    let (p, home) = checkout();
    std::fs::create_dir(p.path().join(".codex")).unwrap();
    p.write(".codex/config.toml", "model = = broken\n");
    let out = inbox_in(&p, home.path(), &["--agent", "me", "hook", "install", "--client", "codex", "--json"]);
    let v = out.json();
    assert_eq!(v["error"]["code"], "invalid_input", "{v}");
    assert!(v["error"]["message"].as_str().unwrap().contains("not valid TOML"), "{v}");
    assert_eq!(std::fs::read_to_string(p.path().join(".codex/config.toml")).unwrap(), "model = = broken\n");
    assert!(!p.path().join(".codex/hooks.json").exists() && !p.path().join("AGENTS.md").exists(), "nothing written");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_client_is_refused() {
    use coord_proto::api::MailApiClient;
    let p = Project::new();
    let _d = p.serve();
    let params = coord_proto::types::InstallHooksParams {
        dir: std::fs::canonicalize(p.path()).unwrap().display().to_string(),
        agent: Some("me".into()),
        clients: vec!["vim".into()],
        ..Default::default()
    };
    let e = p.client().await.install_hooks(params).await.unwrap_err().to_string();
    assert!(e.contains("unknown client 'vim'"), "{e}");
    assert!(!p.path().join("AGENTS.md").exists());
}
