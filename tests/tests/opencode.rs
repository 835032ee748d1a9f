//! opencode as a worker, researched with the real CLI (`opencode-ai` from npm, found by
//! `agent_cli("opencode")`): headless (`opencode run --format json`, and `opencode serve`
//! driven over its HTTP API) against the scripted Chat Completions model
//! (`coord_tests::mock_model::chat`), with a throwaway HOME and XDG directories, in a git
//! repository served by the real daemon. What each test proves is written up in
//! docs/clients-research.md; the plugin is the one coordd installs
//! (`coordd/src/workspace/opencode_plugin.js`), which runs the mailbox hook handler
//! (`inbox hook claude EVENT --client opencode`).

use std::path::Path;

use coord_tests::mock_model::chat::{
    Chat, Opencode, Served, offered_tools, served_texts, served_tools, texts, tool_results,
};
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

/// The shell command that sends `w1` a message from `lead` (for a turn's `before`).
fn mail(p: &Project, subject: &str) -> String {
    format!(
        "{} --db {} --agent lead send --to w1 --subject {subject} --summary 'note-{subject}'",
        bin("inbox").display(),
        p.paths().db.display()
    )
}

/// `inbox mcp` for w1 on task T1, as dispatch registers it for Claude Code: opencode's
/// `mcp.coordd` entry (a local server, the command and its arguments in one array).
fn mcp_entry(p: &Project) -> Value {
    let db = p.paths().db.display().to_string();
    let inbox = bin("inbox").display().to_string();
    json!({ "type": "local", "command": [inbox, "--db", db, "--agent", "w1", "mcp", "--task", "T1"], "enabled": true })
}

/// The plugin, written where the design puts it (in the repository's git directory, so the
/// worktree holds no copy and opencode installs nothing next to it); its `plugin` entry, with
/// w1's identity as the plugin's options.
fn plugin_entry(p: &Project) -> Value {
    let dir = p.path().join(".git/coordd");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("opencode-plugin.js");
    std::fs::write(&file, include_str!("../../coordd/src/workspace/opencode_plugin.js")).unwrap();
    let options = json!({
        "inbox": bin("inbox").display().to_string(), "db": p.paths().db.display().to_string(),
        "agent": "w1", "task": "T1", "mcp": true,
    });
    json!([format!("file://{}", file.display()), options])
}

/// Write the project's `opencode.json` (the model's provider is in the throwaway global one).
fn project_config(p: &Project, mcp: bool, plugin: bool) {
    let mut config = json!({ "$schema": "https://opencode.ai/config.json" });
    if mcp {
        config["mcp"] = json!({ "coordd": mcp_entry(p) });
    }
    if plugin {
        config["plugin"] = json!([plugin_entry(p)]);
    }
    p.write("opencode.json", &config.to_string());
}

fn opencode(dir: &Path, mock: &MockModel) -> Option<Opencode> {
    let bin = agent_cli("opencode")?;
    Some(Opencode::new(&bin, dir, mock))
}

#[test]
fn the_scripted_model_drives_opencode_and_the_shell_output_reaches_it() {
    let p = Project::new();
    init_repo(&p);
    let turns = vec![Turn::reply(vec![shell("echo from-the-shell")]), Turn::reply(vec![text("Done.")])];
    let mock = MockModel::start(Chat, Scenario::new(turns));
    let Some(run) = mock.drive(|m| Some(opencode(p.path(), m)?.run(&[], "do it"))) else { return };
    let turns = mock.turn_requests();
    assert_eq!(turns.len(), 2, "{}", mock.transcript());
    assert_eq!(tool_results(&turns[1].body), vec!["from-the-shell\n".to_string()], "{}", mock.transcript());
    let used = run.stream.iter().find(|e| e["type"] == "tool_use").expect("a tool_use event");
    assert_eq!(used["part"]["state"]["status"], "completed", "{used}");
}

#[test]
fn opencode_reports_tokens_and_cost_for_each_step() {
    let p = Project::new();
    let turns = vec![Turn::reply(vec![shell("true")]), Turn::reply(vec![text("Done.")])];
    let mock = MockModel::start(Chat, Scenario::new(turns));
    let Some(oc) = opencode(p.path(), &mock) else { return };
    let run = oc.run(&[], "do it");
    let steps: Vec<&Value> = run.stream.iter().filter(|e| e["type"] == "step_finish").collect();
    assert_eq!(steps.len(), 2, "{}", run.describe());
    for s in steps {
        // The mock reports 100 input and 20 output tokens a reply, priced at $1 and $2 per
        // million: $0.00014 a step.
        assert_eq!(s["part"]["tokens"]["input"], 100, "{s}");
        assert_eq!(s["part"]["tokens"]["output"], 20, "{s}");
        assert!((s["part"]["cost"].as_f64().unwrap() - 0.00014).abs() < 1e-9, "{s}");
    }
}

#[test]
fn an_mcp_server_in_opencode_json_reaches_the_model_and_check_inbox_delivers() {
    let (p, _d) = project();
    project_config(&p, true, false);
    let turns = vec![
        Turn::reply(vec![tool("mcp__coordd__check_inbox", json!({}))]).before(&mail(&p, "first")),
        Turn::reply(vec![text("Done.")]),
    ];
    let mock = MockModel::start(Chat, Scenario::new(turns));
    let Some(_) = mock.drive(|m| Some(opencode(p.path(), m)?.run(&[], "do it"))) else { return };
    let reqs = mock.turn_requests();
    let tools = offered_tools(&reqs[0].body);
    assert!(
        tools.contains(&"coordd_check_inbox".to_string()) && tools.contains(&"coordd_send_message".to_string()),
        "{tools:?}"
    );
    assert!(tool_results(&reqs[1].body).iter().any(|o| o.contains("note-first")), "{}", mock.transcript());
    let left = ok_as(&p, "w1", &["check", "--task", "T1"]);
    assert_eq!(left["messages"].as_array().map(Vec::len), Some(0), "delivered once: {left}");
}

#[test]
fn an_mcp_call_longer_than_the_documented_five_second_timeout_completes() {
    // opencode's schema says an MCP entry's `timeout` (for "MCP server requests") defaults to
    // 5 s; a tool call is not cut by it: `wait_reply` may wait up to `--wait-seconds`.
    let (p, _d) = project();
    project_config(&p, true, false);
    let sent = ok_as(&p, "lead", &["send", "--to", "w1", "--summary", "a question"]);
    let thread = sent["thread"]["thread_id"].as_str().unwrap().to_string();
    let wait = tool("mcp__coordd__wait_reply", json!({ "thread_id": thread, "timeout_seconds": 8 }));
    let mock = MockModel::start(Chat, Scenario::new(vec![Turn::reply(vec![wait]), Turn::reply(vec![text("Done.")])]));
    let Some(oc) = opencode(p.path(), &mock) else { return };
    let run = oc.run(&[], "do it");
    assert_eq!(run.status, Some(0), "{}", run.describe());
    let results = mock.last_turn(tool_results);
    assert!(
        results.len() == 1 && results[0].contains("\"woke\":false,") && results[0].contains("\"waited_seconds\":8"),
        "{results:?}"
    );
}

#[test]
fn the_plugin_appends_the_reminder_after_a_tool_and_the_model_sees_it_once() {
    let (p, _d) = project();
    project_config(&p, true, true);
    let turns = vec![
        Turn::reply(vec![shell("echo one")]).before(&mail(&p, "first")),
        Turn::reply(vec![tool("mcp__coordd__inbox_status", json!({}))]),
        Turn::reply(vec![text("Done.")]),
    ];
    let mock = MockModel::start(Chat, Scenario::new(turns));
    let Some(_) = mock.drive(|m| Some(opencode(p.path(), m)?.run(&[], "do it"))) else { return };
    let results = mock.last_turn(tool_results);
    let reminded: Vec<&String> = results.iter().filter(|o| o.contains("pending message(s)")).collect();
    assert_eq!(reminded.len(), 1, "{results:?}");
    assert!(
        reminded[0].starts_with("one\n") && reminded[0].contains("check_inbox"),
        "after the shell's output: {results:?}"
    );
}

#[test]
fn the_plugin_appends_to_an_mcp_tools_result_too() {
    let (p, _d) = project();
    project_config(&p, true, true);
    let turns = vec![
        Turn::reply(vec![tool("mcp__coordd__inbox_status", json!({}))]).before(&mail(&p, "first")),
        Turn::reply(vec![text("Done.")]),
    ];
    let mock = MockModel::start(Chat, Scenario::new(turns));
    let Some(_) = mock.drive(|m| Some(opencode(p.path(), m)?.run(&[], "do it"))) else { return };
    let results = mock.last_turn(tool_results);
    assert!(results.iter().any(|o| o.contains("\"pending\":1") && o.contains("pending message(s)")), "{results:?}");
}

#[test]
fn the_plugin_adds_queued_mail_to_the_prompt_as_user_prompt_submit_does() {
    let (p, _d) = project();
    project_config(&p, true, true);
    ok_as(&p, "lead", &["send", "--to", "w1", "--subject", "early", "--summary", "note-early"]);
    let turns = vec![Turn::reply(vec![text("Done.")])];
    let mock = MockModel::start(Chat, Scenario::new(turns));
    let Some(_) = mock.drive(|m| Some(opencode(p.path(), m)?.run(&[], "do it"))) else { return };
    let users = mock.last_turn(|r| texts(r, "user"));
    assert_eq!(users.len(), 1, "{users:?}");
    // `opencode run` quotes a message argument that holds spaces.
    assert!(
        users[0].starts_with("\"do it\"\n\nNew inbox messages (1)") && users[0].contains("note-early"),
        "{users:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gated_command_is_denied_by_the_plugin_and_the_model_sees_the_leads_reason() {
    let (p, _d) = project();
    ok_as(&p, "lead", &["policy", "lead", "lead"]);
    ok_as(&p, "lead", &["policy", "gate", "Bash(git push*)"]);
    project_config(&p, false, true);
    let after = p.client().await.server_info().last_event_id;
    let turns = vec![Turn::reply(vec![shell("git push origin main")]), Turn::reply(vec![text("Done.")])];
    let mock = std::sync::Arc::new(MockModel::start(Chat, Scenario::new(turns)));
    let Some(oc) = opencode(p.path(), &mock) else { return };
    let session = tokio::task::spawn_blocking(move || oc.run(&[], "do it"));
    let lead = p.client().await;
    answer_permission(&lead, "lead", after, json!({"approved": false, "reason": "no pushes today"})).await;
    let run = session.await.unwrap();
    assert_eq!(run.status, Some(0), "{}\n{}", run.describe(), mock.transcript());
    assert_eq!(
        mock.last_turn(tool_results),
        vec!["Denied by lead: no pushes today".to_string()],
        "{}",
        mock.transcript()
    );
    let failed = run.stream.iter().find(|e| e["type"] == "tool_use").expect("a tool_use event");
    assert_eq!(failed["part"]["state"]["status"], "error", "{failed}");
}

#[test]
fn a_shutdown_aborts_an_opencode_run_after_the_tool() {
    let (p, _d) = project();
    project_config(&p, false, true);
    // Requested while the first turn is under way, so the hook after its tool honours it.
    let shutdown = format!(
        "{} --db {} --agent lead shutdown --to w1 --reason rebasing",
        bin("inbox").display(),
        p.paths().db.display()
    );
    let turns = vec![Turn::reply(vec![shell("echo one")]).before(&shutdown), Turn::reply(vec![text("Not reached.")])];
    let mock = MockModel::start(Chat, Scenario::new(turns));
    let Some(oc) = opencode(p.path(), &mock) else { return };
    let run = oc.run(&[], "do it");
    // The abort ends the run with an error event and exit status 1; no other model turn.
    assert_eq!(run.status, Some(1), "{}", run.describe());
    let err = run.stream.iter().find(|e| e["type"] == "error").expect("an error event");
    assert_eq!(err["error"]["name"], "MessageAbortedError", "{err}");
    assert_eq!(mock.turn_requests().len(), 1, "{}", mock.transcript());
    let lead = ok_as(&p, "lead", &["check"]);
    assert!(lead.to_string().contains("w1 is idle (shutdown)"), "{lead}");
}

#[test]
fn opencode_run_rejects_a_permission_that_would_ask_and_ends_the_turn() {
    let p = Project::new();
    init_repo(&p);
    // Reading outside the worktree asks (`external_directory`); headless `run` rejects it.
    let turns = vec![Turn::reply(vec![shell("cat /etc/hostname")]), Turn::reply(vec![text("Not reached.")])];
    let mock = MockModel::start(Chat, Scenario::new(turns));
    let Some(run) = mock.drive(|m| Some(opencode(p.path(), m)?.run(&[], "do it"))) else { return };
    assert_eq!(mock.turn_requests().len(), 1, "the loop stops at the rejection: {}", mock.transcript());
    assert!(run.stderr.contains("auto-rejecting"), "{}", run.stderr);
}

#[test]
fn opencode_run_auto_allows_what_would_ask() {
    let p = Project::new();
    init_repo(&p);
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("note.txt"), "from-outside").unwrap();
    let cat = format!("cat {}", outside.path().join("note.txt").display());
    let turns = vec![Turn::reply(vec![shell(&cat)]), Turn::reply(vec![text("Done.")])];
    let mock = MockModel::start(Chat, Scenario::new(turns));
    let Some(_) = mock.drive(|m| Some(opencode(p.path(), m)?.run(&["--auto"], "do it"))) else { return };
    assert_eq!(mock.last_turn(tool_results), vec!["from-outside".to_string()], "{}", mock.transcript());
}

/// Serve opencode in the project, with the mock's provider; a session of it.
fn serve(p: &Project, mock: &MockModel) -> Option<(Opencode, Served, String)> {
    let oc = opencode(p.path(), mock)?;
    let served = oc.serve();
    let session = served.new_session();
    Some((oc, served, session))
}

#[test]
fn a_served_session_takes_a_prompt_sent_while_a_tool_runs_in_the_same_loop() {
    let p = Project::new();
    init_repo(&p);
    // The first turn's command waits for a file the test writes once the second prompt is in.
    let gate = p.path().join("go");
    let wait = format!("while [ ! -e {} ]; do sleep 0.1; done; echo released", gate.display());
    let turns = vec![Turn::reply(vec![shell(&wait)]), Turn::reply(vec![text("Done.")])];
    let mock = MockModel::start(Chat, Scenario::new(turns));
    let Some((_oc, served, s)) = serve(&p, &mock) else { return };
    served.prompt(&s, "first prompt");
    served.wait_for(&s, "running tool", |m| served_tools(m).iter().any(|(t, st)| t == "bash" && st == "running"));
    served.prompt(&s, "LIVE: a new instruction");
    std::fs::write(&gate, "").unwrap();
    let m =
        served.wait_for(&s, "the answer after the tool", |m| served_texts(m, "assistant").iter().any(|t| t == "Done."));
    assert!(served_texts(&m, "user").iter().any(|t| t == "LIVE: a new instruction"), "{m:?}");
    // The model got it in the next request of the same loop, right after the tool's result.
    let reqs = mock.turn_requests();
    assert_eq!(reqs.len(), 2, "{}", mock.transcript());
    let messages = reqs[1].body["messages"].as_array().unwrap().clone();
    let last_two: Vec<(Value, Value)> =
        messages.iter().rev().take(2).map(|m| (m["role"].clone(), m["content"].clone())).collect();
    assert_eq!(
        last_two,
        vec![(json!("user"), json!("LIVE: a new instruction")), (json!("tool"), json!("released\n"))],
        "{}",
        mock.transcript()
    );
}

#[test]
fn the_plugin_prompts_a_served_session_on_idle_when_mail_came_once_per_batch() {
    let (p, _d) = project();
    project_config(&p, true, true);
    let turns = vec![
        Turn::reply(vec![text("Done.")]).before(&mail(&p, "first")),
        Turn::reply(vec![text("Handled the first.")]),
        Turn::reply(vec![text("Nothing more.")]),
    ];
    let mock = MockModel::start(Chat, Scenario::new(turns));
    let Some((_oc, served, s)) = serve(&p, &mock) else { return };
    served.prompt(&s, "do it");
    let m = served.wait_for(&s, "answer to the stop block", |m| {
        served_texts(m, "assistant").iter().any(|t| t == "Handled the first.")
    });
    let blocks: Vec<String> = served_texts(&m, "user").into_iter().filter(|t| t.contains("Before stopping")).collect();
    assert_eq!(blocks.len(), 1, "{m:?}");
    assert!(blocks[0].contains("note-first"), "{blocks:?}");
    // No second block: the mail was delivered by the first. The session then stays idle.
    assert_eq!(mock.turn_requests().len(), 2, "{}", mock.transcript());
}

#[test]
fn the_plugin_and_the_mcp_server_leave_only_opencode_json_in_the_worktree() {
    let (p, _d) = project();
    project_config(&p, true, true);
    let turns = vec![Turn::reply(vec![shell("echo one")]), Turn::reply(vec![text("Done.")])];
    let mock = MockModel::start(Chat, Scenario::new(turns));
    let Some(_) = mock.drive(|m| Some(opencode(p.path(), m)?.run(&[], "do it"))) else { return };
    assert_eq!(git_in(p.path(), &["status", "--porcelain", "--untracked-files=all"]), "?? opencode.json\n");
    assert!(!p.path().join(".opencode").exists(), "opencode made no .opencode/ in the worktree");
    let exclude = p.path().join(".git/info/exclude");
    let excluded = std::fs::read_to_string(&exclude).unwrap() + "/opencode.json\n";
    std::fs::write(&exclude, excluded).unwrap();
    assert_eq!(git_in(p.path(), &["status", "--porcelain", "--untracked-files=all"]), "");
}
