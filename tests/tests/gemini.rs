//! Gemini CLI as a worker, researched with the real CLI (`@google/gemini-cli` from npm, found
//! by `agent_cli("gemini")`): headless (`gemini -p … -o stream-json --approval-mode yolo`, and
//! `gemini --acp`) against the scripted Gemini API (`coord_tests::mock_model::gemini`), with a
//! throwaway HOME, in a git repository served by the real daemon. The project's
//! `.gemini/settings.json` holds the MCP server and the hooks; the hooks that coordd would
//! install are the Claude Code hook handler (`inbox hook claude EVENT`), whose answers Gemini
//! CLI reads as they are for AfterTool and AfterAgent. What each test proves is written up in
//! docs/clients-research.md.

use std::path::PathBuf;

use coord_tests::mock_model::gemini::{Gemini, GeminiCli, offered_tools, texts, tool_results};
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

fn inbox_cmd(p: &Project, agent: &str, rest: &str) -> String {
    format!("{} --db {} --agent {agent} {rest}", bin("inbox").display(), p.paths().db.display())
}

/// The shell command that sends `w1` a message from `lead` (for a turn's `before`).
fn mail(p: &Project, subject: &str) -> String {
    inbox_cmd(p, "lead", &format!("send --to w1 --subject {subject} --summary 'note-{subject}'"))
}

/// `inbox hook claude EVENT` for w1's session of T1, as a Gemini CLI hook group (timeouts
/// are in milliseconds).
fn claude_hook(p: &Project, event: &str) -> Value {
    let command = inbox_cmd(p, "w1", &format!("hook claude {event} --task T1 --mcp"));
    json!([{ "hooks": [{ "type": "command", "command": command, "timeout": 10_000 }] }])
}

/// A hook group running `script` (a shell line) for every tool.
fn script_hook(script: &str) -> Value {
    json!([{ "matcher": ".*", "hooks": [{ "type": "command", "command": script, "timeout": 10_000 }] }])
}

/// Write the project's `.gemini/settings.json`.
fn settings(p: &Project, settings: Value) {
    std::fs::create_dir_all(p.path().join(".gemini")).unwrap();
    p.write(".gemini/settings.json", &settings.to_string());
}

/// `inbox mcp` for w1 on task T1, as dispatch registers it for Claude Code.
fn mcp_servers(p: &Project) -> Value {
    let args = ["--db", &p.paths().db.display().to_string(), "--agent", "w1", "mcp", "--task", "T1"].map(String::from);
    json!({ "coordd": { "command": bin("inbox").display().to_string(), "args": args, "trust": true } })
}

fn gemini(dir: &std::path::Path, mock: &MockModel) -> Option<GeminiCli> {
    let bin = agent_cli("gemini")?;
    Some(GeminiCli::new(&bin, dir, mock))
}

#[test]
fn the_scripted_model_drives_gemini_and_the_shell_output_reaches_it() {
    let p = Project::new();
    init_repo(&p);
    let turns = vec![Turn::reply(vec![shell("echo from-the-shell")]), Turn::reply(vec![text("Done.")])];
    let mock = MockModel::start(Gemini, Scenario::new(turns));
    let Some(_) = mock.drive(|m| Some(gemini(p.path(), m)?.run(&[], "do it"))) else { return };
    assert_eq!(mock.turn_requests().len(), 2, "{}", mock.transcript());
    let results = mock.last_turn(tool_results);
    assert!(results.len() == 1 && results[0].contains("Output: from-the-shell"), "{results:?}");
}

#[test]
fn gemini_reports_tokens_per_model_in_its_stream_result() {
    let p = Project::new();
    let turns = vec![Turn::reply(vec![shell("true")]), Turn::reply(vec![text("Done.")])];
    let mock = MockModel::start(Gemini, Scenario::new(turns));
    let Some(g) = gemini(p.path(), &mock) else { return };
    let run = g.run(&[], "do it");
    let result = run.stream.iter().find(|e| e["type"] == "result").unwrap_or_else(|| panic!("{}", run.describe()));
    assert_eq!(result["status"], "success", "{result}");
    // Two replies of 100 input and 20 output tokens each; no cost anywhere.
    let stats = &result["stats"];
    assert_eq!((stats["input_tokens"].clone(), stats["output_tokens"].clone()), (json!(200), json!(40)), "{result}");
    assert_eq!(stats["models"]["gemini-2.5-flash"]["total_tokens"], 240, "{result}");
    assert_eq!(stats["tool_calls"], 1, "{result}");
    assert!(!result.to_string().contains("cost"), "{result}");
}

#[test]
fn an_mcp_server_in_gemini_settings_reaches_the_model_and_check_inbox_delivers() {
    let (p, _d) = project();
    settings(&p, json!({ "mcpServers": mcp_servers(&p) }));
    let turns = vec![
        Turn::reply(vec![tool("mcp__coordd__check_inbox", json!({}))]).before(&mail(&p, "first")),
        Turn::reply(vec![text("Done.")]),
    ];
    let mock = MockModel::start(Gemini, Scenario::new(turns));
    let Some(_) = mock.drive(|m| Some(gemini(p.path(), m)?.run(&[], "do it"))) else { return };
    let reqs = mock.turn_requests();
    let tools = offered_tools(&reqs[0].body);
    assert!(tools.contains(&"mcp_coordd_check_inbox".to_string()), "{tools:?}");
    assert!(tool_results(&reqs[1].body).iter().any(|o| o.contains("note-first")), "{}", mock.transcript());
    let left = ok_as(&p, "w1", &["check", "--task", "T1"]);
    assert_eq!(left["messages"].as_array().map(Vec::len), Some(0), "delivered once: {left}");
}

#[test]
fn skip_trust_does_not_load_the_project_settings_but_the_environment_does() {
    let (p, _d) = project();
    settings(&p, json!({ "mcpServers": mcp_servers(&p) }));
    let turns = || vec![Turn::reply(vec![text("Done.")])];
    let offered = |g: GeminiCli, args: &[&str], mock: &MockModel| {
        let run = g.run(args, "do it");
        assert_eq!(run.status, Some(0), "{}", run.describe());
        offered_tools(&mock.turn_requests()[0].body)
    };
    let mock = MockModel::start(Gemini, Scenario::new(turns()));
    let Some(g) = gemini(p.path(), &mock) else { return };
    let tools = offered(g.untrusted(), &["--skip-trust"], &mock);
    assert!(
        !tools.iter().any(|t| t.starts_with("mcp_coordd_")),
        "--skip-trust comes after the settings are read: {tools:?}"
    );
    let mock = MockModel::start(Gemini, Scenario::new(turns()));
    let Some(g) = gemini(p.path(), &mock) else { return };
    let tools = offered(g, &[], &mock);
    assert!(tools.iter().any(|t| t == "mcp_coordd_check_inbox"), "GEMINI_CLI_TRUST_WORKSPACE=true: {tools:?}");
}

#[test]
fn a_before_tool_hook_that_exits_2_denies_and_the_model_sees_its_stderr() {
    let p = Project::new();
    init_repo(&p);
    let script = "grep -q 'git push' && { echo 'Denied by lead: no pushes today' >&2; exit 2; }; exit 0";
    settings(&p, json!({ "hooks": { "BeforeTool": script_hook(&format!("sh -c \"{script}\"")) } }));
    let turns = vec![Turn::reply(vec![shell("git push origin main")]), Turn::reply(vec![text("Done.")])];
    let mock = MockModel::start(Gemini, Scenario::new(turns));
    let Some(_) = mock.drive(|m| Some(gemini(p.path(), m)?.run(&[], "do it"))) else { return };
    assert_eq!(
        mock.last_turn(tool_results),
        vec!["Tool execution blocked: Denied by lead: no pushes today".to_string()]
    );
}

#[test]
fn a_before_tool_hook_that_answers_deny_denies_with_its_reason() {
    let p = Project::new();
    init_repo(&p);
    let deny = r#"{"decision":"deny","reason":"Denied by lead: not on fridays"}"#;
    settings(&p, json!({ "hooks": { "BeforeTool": script_hook(&format!("echo '{deny}'")) } }));
    let turns = vec![Turn::reply(vec![shell("echo should-not-run")]), Turn::reply(vec![text("Done.")])];
    let mock = MockModel::start(Gemini, Scenario::new(turns));
    let Some(_) = mock.drive(|m| Some(gemini(p.path(), m)?.run(&[], "do it"))) else { return };
    let results = mock.last_turn(tool_results);
    assert!(results.len() == 1 && results[0].contains("Denied by lead: not on fridays"), "{results:?}");
    assert!(!results[0].contains("should-not-run"), "{results:?}");
}

#[test]
fn the_claude_post_tool_use_handler_as_after_tool_reminds_gemini_once() {
    let (p, _d) = project();
    settings(&p, json!({ "mcpServers": mcp_servers(&p), "hooks": { "AfterTool": claude_hook(&p, "post-tool-use") } }));
    let turns = vec![
        Turn::reply(vec![shell("echo one")]).before(&mail(&p, "first")),
        Turn::reply(vec![shell("echo two")]),
        Turn::reply(vec![text("Done.")]),
    ];
    let mock = MockModel::start(Gemini, Scenario::new(turns));
    let Some(_) = mock.drive(|m| Some(gemini(p.path(), m)?.run(&[], "do it"))) else { return };
    let results = mock.last_turn(tool_results);
    let reminded: Vec<&String> = results.iter().filter(|o| o.contains("pending message(s)")).collect();
    assert_eq!(reminded.len(), 1, "{results:?}");
    // Appended to the tool's result, in a <hook_context> element.
    assert!(
        reminded[0].contains("Output: one") && reminded[0].contains("<hook_context>Inbox: 1 pending"),
        "{results:?}"
    );
}

#[test]
fn the_claude_stop_handler_as_after_agent_makes_gemini_go_on_once_per_batch() {
    let (p, _d) = project();
    settings(&p, json!({ "hooks": { "AfterAgent": claude_hook(&p, "stop") } }));
    let turns = vec![
        Turn::reply(vec![text("Done.")]).before(&mail(&p, "first")),
        Turn::reply(vec![text("Handled the first.")]).before(&mail(&p, "second")),
        Turn::reply(vec![text("Handled the second.")]),
    ];
    let mock = MockModel::start(Gemini, Scenario::new(turns));
    let Some(_) = mock.drive(|m| Some(gemini(p.path(), m)?.run(&[], "do it"))) else { return };
    // Two blocks (one per batch), each a new user prompt, then the session ends.
    assert_eq!(mock.turn_requests().len(), 3, "{}", mock.transcript());
    let last = mock.turn_requests().last().unwrap().body.clone();
    let blocks: Vec<String> = texts(&last, "user").into_iter().filter(|t| t.contains("Before stopping")).collect();
    assert_eq!(blocks.len(), 2, "{blocks:?}");
    assert!(blocks[0].contains("note-first") && blocks[1].contains("note-second"), "{blocks:?}");
}

#[test]
fn the_claude_session_start_handler_puts_queued_mail_before_geminis_prompt() {
    let (p, _d) = project();
    settings(&p, json!({ "hooks": { "SessionStart": claude_hook(&p, "session-start") } }));
    ok_as(&p, "lead", &["send", "--to", "w1", "--subject", "early", "--summary", "note-early"]);
    let turns = vec![Turn::reply(vec![text("Done.")])];
    let mock = MockModel::start(Gemini, Scenario::new(turns));
    let Some(_) = mock.drive(|m| Some(gemini(p.path(), m)?.run(&[], "do it"))) else { return };
    let users = mock.last_turn(|r| texts(r, "user"));
    let prompt = users.iter().find(|t| t.ends_with("do it")).unwrap_or_else(|| panic!("{users:?}"));
    assert!(prompt.starts_with("<hook_context>New inbox messages (1)") && prompt.contains("note-early"), "{prompt}");
}

#[test]
fn a_shutdown_from_the_after_tool_hook_stops_gemini() {
    let (p, _d) = project();
    settings(&p, json!({ "hooks": { "AfterTool": claude_hook(&p, "post-tool-use") } }));
    let shutdown = inbox_cmd(&p, "lead", "shutdown --to w1 --reason rebasing");
    let turns = vec![Turn::reply(vec![shell("echo one")]).before(&shutdown), Turn::reply(vec![text("Not reached.")])];
    let mock = MockModel::start(Gemini, Scenario::new(turns));
    let Some(g) = gemini(p.path(), &mock) else { return };
    let run = g.run(&[], "do it");
    assert_eq!(mock.turn_requests().len(), 1, "no turn after the tool: {}\n{}", run.describe(), mock.transcript());
    assert!(run.describe().contains("Shutdown requested by lead: rebasing"), "{}", run.describe());
    let lead = ok_as(&p, "lead", &["check"]);
    assert!(lead.to_string().contains("w1 is idle (shutdown)"), "{lead}");
}

#[test]
fn gemini_acp_takes_a_second_prompt_in_the_same_process() {
    let p = Project::new();
    init_repo(&p);
    let turns = vec![
        Turn::reply(vec![shell("echo from-acp")]),
        Turn::reply(vec![text("First done.")]),
        Turn::reply(vec![text("Second done.")]),
    ];
    let mock = MockModel::start(Gemini, Scenario::new(turns));
    let Some(g) = gemini(p.path(), &mock) else { return };
    let mut acp = g.acp();
    acp.call("initialize", json!({ "protocolVersion": 1, "clientCapabilities": {} }));
    let cwd = std::fs::canonicalize(p.path()).unwrap().display().to_string();
    let session = acp.call("session/new", json!({ "cwd": cwd, "mcpServers": [] }))["sessionId"].clone();
    let prompt = |acp: &mut coord_tests::mock_model::gemini::Acp, text: &str| {
        acp.call("session/prompt", json!({ "sessionId": session, "prompt": [{ "type": "text", "text": text }] }))
    };
    let first = prompt(&mut acp, "first prompt");
    assert_eq!(first["stopReason"], "end_turn", "{first}");
    let second = prompt(&mut acp, "SECOND: a new instruction");
    assert_eq!(second["stopReason"], "end_turn", "{second}");
    // Usage comes with each answer.
    assert_eq!(second["_meta"]["quota"]["token_count"]["input_tokens"], 100, "{second}");
    let last = mock.turn_requests().last().unwrap().body.clone();
    assert!(texts(&last, "user").iter().any(|t| t.contains("SECOND: a new instruction")), "{}", mock.transcript());
    let said: Vec<&Value> =
        acp.seen.iter().filter(|m| m["params"]["update"]["sessionUpdate"] == "agent_message_chunk").collect();
    assert_eq!(said.len(), 2, "{:?}", acp.seen);
    assert_eq!(acp.close(), Some(0));
}

#[test]
fn gemini_writes_nothing_in_the_worktree_but_the_settings_it_is_given() {
    let (p, _d) = project();
    settings(&p, json!({ "mcpServers": mcp_servers(&p), "hooks": { "AfterTool": claude_hook(&p, "post-tool-use") } }));
    let turns = vec![Turn::reply(vec![shell("echo one")]), Turn::reply(vec![text("Done.")])];
    let mock = MockModel::start(Gemini, Scenario::new(turns));
    let Some(g) = gemini(p.path(), &mock) else { return };
    let run = g.run(&[], "do it");
    assert_eq!(run.status, Some(0), "{}", run.describe());
    assert_eq!(git_in(p.path(), &["status", "--porcelain", "--untracked-files=all"]), "?? .gemini/settings.json\n");
    let exclude = p.path().join(".git/info/exclude");
    std::fs::write(&exclude, std::fs::read_to_string(&exclude).unwrap() + "/.gemini/settings.json\n").unwrap();
    assert_eq!(git_in(p.path(), &["status", "--porcelain", "--untracked-files=all"]), "");
    // Its own state goes to the (throwaway) home: the hooks it trusted, the chats.
    let home: PathBuf = g.home().join(".gemini");
    assert!(home.join("trusted_hooks.json").is_file() && home.join("projects.json").is_file(), "{home:?}");
}
