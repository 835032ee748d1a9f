//! opencode and Gemini CLI as first-class workers (issue 37): `inbox hook install --client
//! opencode|gemini` writes their project files, and the real CLIs (from npm, found by
//! `agent_cli`), run against the scripted model servers, get the MCP tools, the reminder, the
//! lead's permission gate and the shutdown through what was installed, with no hand-written
//! configuration. The research these build on: docs/clients-research.md (tests `opencode.rs`,
//! `gemini.rs`).

use std::path::Path;

use coord_tests::mock_model::chat::{Chat, Opencode};
use coord_tests::mock_model::gemini::{Gemini, GeminiCli};
use coord_tests::mock_model::{MockModel, Scenario, Turn, shell, text, tool};
use coord_tests::*;
use serde_json::{Value, json};

/// A git repository with one commit, served by a daemon.
fn project() -> (Project, Daemon) {
    let p = Project::new();
    init_repo(&p);
    let d = p.serve();
    (p, d)
}

/// `inbox hook install` for w1's session of T1 with this client; its JSON answer.
fn install(p: &Project, client: &str) -> Value {
    ok_as(p, "w1", &["hook", "install", "--client", client, "--task", "T1"])
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))).unwrap()
}

/// The shell command that sends `w1` a message from `lead` (for a turn's `before`).
fn mail(p: &Project, subject: &str) -> String {
    format!(
        "{} --db {} --agent lead send --to w1 --subject {subject} --summary 'note-{subject}'",
        bin("inbox").display(),
        p.paths().db.display()
    )
}

fn shutdown(p: &Project) -> String {
    format!(
        "{} --db {} --agent lead shutdown --to w1 --reason rebasing",
        bin("inbox").display(),
        p.paths().db.display()
    )
}

#[test]
fn hook_install_for_gemini_merges_its_settings_keeps_the_users_and_stays_out_of_git() {
    let (p, _d) = project();
    std::fs::create_dir(p.path().join(".gemini")).unwrap();
    let mine = json!({"ui": {"theme": "dark"}, "hooks": {"AfterTool": [{"hooks": [{"type": "command", "command": "mine.sh"}]}]}});
    p.write(".gemini/settings.json", &mine.to_string());
    let r = install(&p, "gemini");
    assert_eq!(r["clients"], json!(["gemini"]), "{r}");
    let path = p.path().join(".gemini/settings.json");
    let first = read_json(&path);
    assert_eq!(first["ui"]["theme"], "dark", "{first}");
    assert_eq!(first["mcpServers"]["coordd"]["trust"], true, "{first}");
    let args = first["mcpServers"]["coordd"]["args"].to_string();
    assert!(args.contains("\"--agent\",\"w1\",\"mcp\",\"--task\",\"T1\""), "{args}");
    let after: Vec<String> = first["hooks"]["AfterTool"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["hooks"][0]["command"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(after[0], "mine.sh");
    assert!(after[1].contains(" hook claude post-tool-use --task T1 --mcp --client gemini"), "{after:?}");
    assert_eq!(first["hooks"]["BeforeTool"][0]["hooks"][0]["timeout"], json!((3600 + 30) * 1000), "{first}");
    assert_eq!(first["context"]["fileName"], json!(["GEMINI.md", "AGENTS.md"]), "{first}");
    install(&p, "gemini");
    assert_eq!(read_json(&path), first, "installing twice changes nothing");
    git_in(p.path(), &["add", "-A"]);
    assert_eq!(git_in(p.path(), &["status", "--porcelain"]), "");
}

#[test]
fn hook_install_for_opencode_names_a_plugin_outside_the_worktree_and_keeps_the_users_entries() {
    let (p, _d) = project();
    p.write("opencode.json", &json!({"plugin": ["opencode-wakatime"], "theme": "opencode"}).to_string());
    let r = install(&p, "opencode");
    assert_eq!(r["clients"], json!(["opencode"]), "{r}");
    let config = read_json(&p.path().join("opencode.json"));
    assert_eq!(config["theme"], "opencode", "{config}");
    let command = config["mcp"]["coordd"]["command"].as_array().unwrap();
    assert!(command.ends_with(&[json!("w1"), json!("mcp"), json!("--task"), json!("T1")]), "{config}");
    let plugins = config["plugin"].as_array().unwrap();
    assert_eq!((plugins.len(), &plugins[0]), (2, &json!("opencode-wakatime")), "{config}");
    let url = plugins[1][0].as_str().unwrap();
    let file = url.strip_prefix("file://").unwrap();
    assert!(
        !file.starts_with(&std::fs::canonicalize(p.path()).unwrap().display().to_string())
            || file.contains("/.agents/")
    );
    assert!(std::fs::read_to_string(file).unwrap().contains("export const Coordd"), "{file}");
    assert_eq!(plugins[1][1]["agent"], "w1", "{config}");
    assert!(r["files"].to_string().contains("coordd-opencode-plugin.js"), "{r}");
    install(&p, "opencode");
    assert_eq!(read_json(&p.path().join("opencode.json")), config, "installing twice changes nothing");
    assert!(!p.path().join(".opencode").exists(), "no .opencode/: opencode would npm-install into it");
    git_in(p.path(), &["add", "-A"]);
    assert_eq!(git_in(p.path(), &["status", "--porcelain"]), "");
}

#[test]
fn gemini_with_the_installed_settings_gets_the_mcp_tools_and_the_reminder_once() {
    let (p, _d) = project();
    install(&p, "gemini");
    let turns = vec![
        Turn::reply(vec![shell("echo one")]).before(&mail(&p, "first")),
        Turn::reply(vec![tool("mcp__coordd__check_inbox", json!({}))]),
        Turn::reply(vec![text("Done.")]),
    ];
    let mock = MockModel::start(Gemini, Scenario::new(turns));
    let Some(bin) = agent_cli("gemini") else { return };
    let Some(_) = mock.drive(|m| Some(GeminiCli::new(&bin, p.path(), m).run(&[], "do it"))) else { return };
    use coord_tests::mock_model::gemini::tool_results;
    let results = mock.last_turn(tool_results);
    let reminded: Vec<&String> = results.iter().filter(|o| o.contains("pending message(s)")).collect();
    assert_eq!(reminded.len(), 1, "{results:?}");
    assert!(reminded[0].contains("mcp_coordd_check_inbox"), "names Gemini's tool: {results:?}");
    assert!(results.iter().any(|o| o.contains("note-first") && !o.contains("pending")), "{results:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_with_the_installed_hooks_is_denied_a_gated_command_with_the_leads_reason() {
    let (p, _d) = project();
    ok_as(&p, "lead", &["policy", "lead", "lead"]);
    ok_as(&p, "lead", &["policy", "gate", "Bash(git push*)"]);
    install(&p, "gemini");
    let after = p.client().await.server_info().last_event_id;
    let turns = vec![Turn::reply(vec![shell("git push origin main")]), Turn::reply(vec![text("Done.")])];
    let mock = std::sync::Arc::new(MockModel::start(Gemini, Scenario::new(turns)));
    let Some(bin) = agent_cli("gemini") else { return };
    let g = GeminiCli::new(&bin, p.path(), &mock);
    let session = tokio::task::spawn_blocking(move || g.run(&[], "do it"));
    let lead = p.client().await;
    answer_permission(&lead, "lead", after, json!({"approved": false, "reason": "no pushes today"})).await;
    let run = session.await.unwrap();
    assert_eq!(run.status, Some(0), "{}\n{}", run.describe(), mock.transcript());
    use coord_tests::mock_model::gemini::tool_results;
    let results = mock.last_turn(tool_results);
    assert!(results.iter().any(|r| r.contains("Denied by lead: no pushes today")), "{results:?}");
}

#[test]
fn gemini_with_the_installed_hooks_stops_on_a_shutdown() {
    let (p, _d) = project();
    install(&p, "gemini");
    let turns =
        vec![Turn::reply(vec![shell("echo one")]).before(&shutdown(&p)), Turn::reply(vec![text("Not reached.")])];
    let mock = MockModel::start(Gemini, Scenario::new(turns));
    let Some(bin) = agent_cli("gemini") else { return };
    let run = GeminiCli::new(&bin, p.path(), &mock).run(&[], "do it");
    assert_eq!(mock.turn_requests().len(), 1, "{}\n{}", run.describe(), mock.transcript());
    let lead = ok_as(&p, "lead", &["check"]);
    assert!(lead.to_string().contains("w1 is idle (shutdown)"), "{lead}");
}

#[test]
fn opencode_with_the_installed_config_gets_the_mcp_tools_and_the_reminder_once() {
    let (p, _d) = project();
    install(&p, "opencode");
    let turns = vec![
        Turn::reply(vec![shell("echo one")]).before(&mail(&p, "first")),
        Turn::reply(vec![tool("mcp__coordd__check_inbox", json!({}))]),
        Turn::reply(vec![text("Done.")]),
    ];
    let mock = MockModel::start(Chat, Scenario::new(turns));
    let Some(bin) = agent_cli("opencode") else { return };
    let Some(_) = mock.drive(|m| Some(Opencode::new(&bin, p.path(), m).run(&[], "do it"))) else { return };
    use coord_tests::mock_model::chat::tool_results;
    let results = mock.last_turn(tool_results);
    let reminded: Vec<&String> = results.iter().filter(|o| o.contains("pending message(s)")).collect();
    assert_eq!(reminded.len(), 1, "{results:?}");
    assert!(reminded[0].starts_with("one\n") && reminded[0].contains("coordd_check_inbox"), "{results:?}");
    assert!(results.iter().any(|o| o.contains("note-first") && !o.contains("pending")), "{results:?}");
    git_in(p.path(), &["add", "-A"]);
    assert_eq!(git_in(p.path(), &["status", "--porcelain"]), "");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opencode_with_the_installed_plugin_is_denied_a_gated_command_with_the_leads_reason() {
    let (p, _d) = project();
    ok_as(&p, "lead", &["policy", "lead", "lead"]);
    ok_as(&p, "lead", &["policy", "gate", "Bash(git push*)"]);
    install(&p, "opencode");
    let after = p.client().await.server_info().last_event_id;
    let turns = vec![Turn::reply(vec![shell("git push origin main")]), Turn::reply(vec![text("Done.")])];
    let mock = std::sync::Arc::new(MockModel::start(Chat, Scenario::new(turns)));
    let Some(bin) = agent_cli("opencode") else { return };
    let oc = Opencode::new(&bin, p.path(), &mock);
    let session = tokio::task::spawn_blocking(move || oc.run(&[], "do it"));
    let lead = p.client().await;
    answer_permission(&lead, "lead", after, json!({"approved": false, "reason": "no pushes today"})).await;
    let run = session.await.unwrap();
    assert_eq!(run.status, Some(0), "{}\n{}", run.describe(), mock.transcript());
    use coord_tests::mock_model::chat::tool_results;
    assert_eq!(mock.last_turn(tool_results), vec!["Denied by lead: no pushes today".to_string()]);
}

#[test]
fn opencode_with_the_installed_plugin_is_aborted_by_a_shutdown() {
    let (p, _d) = project();
    install(&p, "opencode");
    let turns =
        vec![Turn::reply(vec![shell("echo one")]).before(&shutdown(&p)), Turn::reply(vec![text("Not reached.")])];
    let mock = MockModel::start(Chat, Scenario::new(turns));
    let Some(bin) = agent_cli("opencode") else { return };
    let run = Opencode::new(&bin, p.path(), &mock).run(&[], "do it");
    assert_eq!(run.status, Some(1), "{}", run.describe());
    assert_eq!(mock.turn_requests().len(), 1, "{}", mock.transcript());
    let lead = ok_as(&p, "lead", &["check"]);
    assert!(lead.to_string().contains("w1 is idle (shutdown)"), "{lead}");
}
