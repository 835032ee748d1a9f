//! Live sessions of the real agent CLIs (issue 33's research, written up in
//! docs/live-sessions-research.md): Claude Code 2.1.x in stream-json mode and
//! `codex app-server`, each held open against a scripted model (`coord_tests::mock_model`),
//! taking user turns one after another in one process. Each test proves one finding the
//! launch bridge builds on. Every wait is on a line of the CLI's output, a request reaching
//! the mock, or a process's end: never a sleep.

use std::path::{Path, PathBuf};

use coord_tests::mock_model::anthropic::{Anthropic, claude_live, tool_results, user_turn};
use coord_tests::mock_model::live::LiveChild;
use coord_tests::mock_model::openai::{AppServer, CodexExec, OpenAi, tool_outputs};
use coord_tests::mock_model::{MockModel, Scenario, Turn, Usage, shell, text, tool};
use coord_tests::{Project, agent_cli, bin};
use serde_json::{Value, json};

/// A Claude Code session against `turns`, in `cwd` (a fresh directory when `None`).
struct Claude {
    mock: MockModel,
    live: LiveChild,
    dir: tempfile::TempDir,
    _config: tempfile::TempDir,
}

fn claude(turns: Vec<Turn>, cwd: Option<&Path>, extra: &[&str]) -> Option<Claude> {
    let program = agent_cli("claude")?;
    let mock = MockModel::start(Anthropic, Scenario::new(turns));
    let dir = tempfile::Builder::new().prefix("live-cc").tempdir().unwrap();
    let config = tempfile::Builder::new().prefix("live-cc-home").tempdir().unwrap();
    let live = claude_live(&program, cwd.unwrap_or(dir.path()), &mock, config.path(), extra);
    Some(Claude { mock, live, dir, _config: config })
}

fn is(kind: &'static str) -> impl Fn(&Value) -> bool {
    move |l| l["type"] == kind
}

fn lifecycle(uuid: &'static str, state: &'static str) -> impl Fn(&Value) -> bool {
    move |l| l["type"] == "command_lifecycle" && l["command_uuid"] == uuid && l["state"] == state
}

/// The `tool_use` blocks of an `assistant` line.
fn tool_uses(line: &Value) -> Vec<Value> {
    let content = line["message"]["content"].as_array().cloned().unwrap_or_default();
    content.into_iter().filter(|b| b["type"] == "tool_use").collect()
}

/// A tool call that blocks until the test lets it go: a fifo in a directory of its own, and
/// a shell line that reads it.
struct Gate {
    _dir: tempfile::TempDir,
    fifo: PathBuf,
}

impl Gate {
    fn new() -> Gate {
        let dir = tempfile::Builder::new().prefix("live-gate").tempdir().unwrap();
        let fifo = dir.path().join("go");
        let st = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(st.success());
        Gate { _dir: dir, fifo }
    }

    /// The shell line: it prints `waiting`, blocks, then prints `got-go`.
    fn command(&self) -> String {
        format!("echo waiting; read x < {}; echo got-$x", self.fifo.display())
    }

    /// Let the tool call go on: a thread writes to the fifo (the write waits for the tool to
    /// open it; should the tool never do so, the test fails on its own wait).
    fn release(&self) {
        let f = self.fifo.clone();
        std::thread::spawn(move || std::fs::write(f, "go\n"));
    }

    /// The processes still blocked on the fifo.
    fn waiting(&self) -> Vec<u32> {
        processes_with(&self.fifo.display().to_string())
    }

    /// Kill what is left of the tool call (a SIGKILL of the agent CLI leaves its tool's
    /// shell behind, once started).
    fn kill_left(&self) {
        for pid in self.waiting() {
            let _ = std::process::Command::new("kill").args(["-9", &pid.to_string()]).status();
        }
    }
}

/// Processes whose command line contains `needle`.
fn processes_with(needle: &str) -> Vec<u32> {
    let mut pids = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else { continue };
        let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmdline).contains(needle) && pid != std::process::id() {
            pids.push(pid);
        }
    }
    pids
}

/// A first user turn with a tool call, then a second user turn.
fn two_user_turns() -> Vec<Turn> {
    vec![
        Turn::reply(vec![shell("echo first-tool")]),
        Turn::reply(vec![text("First turn done.")]),
        Turn::reply(vec![text("Second turn done.")]),
    ]
}

/// Two user turns with scripted usage: the first (a tool call and a text) reports `a` then
/// `b`, the second `c`.
fn usage_turns() -> ([Usage; 3], Vec<Turn>) {
    let (a, b, c) = (Usage::new(1000, 77, 300, 50), Usage::new(10, 5, 2000, 0), Usage::new(7, 9, 0, 3));
    let turns = vec![
        Turn::reply(vec![shell("echo one")]).usage(a),
        Turn::reply(vec![text("One.")]).usage(b),
        Turn::reply(vec![text("Two.")]).usage(c),
    ];
    ([a, b, c], turns)
}

const U1: &str = "11111111-1111-4111-8111-111111111111";
const U2: &str = "22222222-2222-4222-8222-222222222222";

#[test]
fn claude_code_takes_a_second_user_turn_in_the_same_process_after_its_first_turn_ended() {
    let turns = two_user_turns();
    let Some(mut c) = claude(turns, None, &[]) else { return };
    c.live.send(&user_turn("the task", Some(U1)));
    let first = c.live.wait_for("the first result", is("result"));
    assert_eq!(
        (&first["subtype"], &first["is_error"], &first["result"]),
        (&json!("success"), &json!(false), &json!("First turn done."))
    );
    c.live.wait_for("the first turn's completion", lifecycle(U1, "completed"));
    // The turn has ended and the process waits for more input; a new line starts a new turn.
    c.live.send(&user_turn("the answer", Some(U2)));
    let second = c.live.wait_nth(2, "the second result", is("result"));
    assert_eq!(second["result"], "Second turn done.", "{}", c.live.describe());
    assert_eq!(first["session_id"], second["session_id"]);
    let asked = c.mock.wait_for(std::time::Duration::ZERO, |r| r.turn == Some(2)).expect("the second turn's request");
    assert_eq!(asked.user_input, ["the answer"]);
    // A turn's `completed` comes just after its `result`.
    c.live.wait_for("the second turn's completion", lifecycle(U2, "completed"));
    for state in ["queued", "started", "completed"] {
        assert_eq!(c.live.count(lifecycle(U2, state)), 1, "{state}\n{}", c.live.describe());
    }
    c.live.close_stdin();
    assert_eq!(c.live.wait_exit().code(), Some(0), "{}", c.live.describe());
}

#[test]
fn claude_code_adds_a_user_turn_written_during_a_tool_call_to_the_running_turn() {
    let gate = Gate::new();
    let turns = vec![
        Turn::reply(vec![shell(&gate.command())]),
        Turn::reply(vec![text("After the tool.")]),
        Turn::reply(vec![text("Never: no second turn.")]),
    ];
    let Some(mut c) = claude(turns, None, &[]) else { return };
    c.live.send(&user_turn("the task", Some(U1)));
    c.live.wait_for("the tool call", |l| l["type"] == "assistant" && !tool_uses(l).is_empty());
    c.live.send(&user_turn("mail while you work", Some(U2)));
    c.live.wait_for("the mail's queueing", lifecycle(U2, "queued"));
    gate.release();
    c.live.wait_for("the mail's completion", lifecycle(U2, "completed"));
    let result = c.live.wait_for("the result", is("result"));
    assert_eq!(result["result"], "After the tool.", "{}", c.live.describe());
    // The model got the mail beside the tool's output, in the same turn.
    let next = c.mock.wait_for(std::time::Duration::ZERO, |r| r.turn == Some(1)).expect("the request after the tool");
    assert!(tool_results(&next.body).iter().any(|t| t.contains("got-go")), "{}", c.mock.transcript());
    assert!(
        next.user_input
            .iter()
            .any(|t| t.contains("sent a new message while you were working") && t.contains("mail while you work")),
        "{:?}",
        next.user_input
    );
    c.live.close_stdin();
    assert_eq!(c.live.wait_exit().code(), Some(0));
    assert_eq!(c.live.count(is("result")), 1, "one turn, one result\n{}", c.live.describe());
}

/// `usage` and the models' figures of a `result`, as a [`Usage`].
fn usage_of(u: &Value) -> Usage {
    let n = |k: &str| u[k].as_u64().unwrap_or_else(|| panic!("{k} in {u}"));
    Usage::new(n("input_tokens"), n("output_tokens"), n("cache_read_input_tokens"), n("cache_creation_input_tokens"))
}

/// The sum over models of a `modelUsage`-shaped object, and its cost.
fn models_usage(m: &Value) -> (Usage, f64) {
    let mut total = (Usage::default(), 0.0);
    for u in m.as_object().expect("per-model usage").values() {
        let n = |k: &str| u[k].as_u64().unwrap_or_else(|| panic!("{k} in {u}"));
        total.0 = total.0
            + Usage::new(n("inputTokens"), n("outputTokens"), n("cacheReadInputTokens"), n("cacheCreationInputTokens"));
        total.1 += u["costUSD"].as_f64().unwrap();
    }
    total
}

#[test]
fn claude_code_results_carry_each_turns_usage_and_the_sessions_cumulative_cost() {
    let ([a, b, c2], turns) = usage_turns();
    let Some(mut c) = claude(turns, None, &["--model", "claude-sonnet-4-5"]) else { return };
    c.live.send(&user_turn("one", None));
    let r1 = c.live.wait_for("the first result", is("result"));
    c.live.send(&user_turn("two", None));
    let r2 = c.live.wait_nth(2, "the second result", is("result"));
    // `usage` and `model_usage_since_last_result` are the turn's; `modelUsage` and
    // `total_cost_usd` the session's so far.
    assert_eq!(usage_of(&r1["usage"]), a + b, "{r1}");
    assert_eq!(usage_of(&r2["usage"]), c2, "{r2}");
    let (since1, cost1) = models_usage(&r1["model_usage_since_last_result"]);
    let (since2, cost2) = models_usage(&r2["model_usage_since_last_result"]);
    assert_eq!((since1, since2), (a + b, c2));
    let (all, cost_all) = models_usage(&r2["modelUsage"]);
    assert_eq!(all, c.mock.reported_usage(), "everything the mock reported, side requests included");
    let total = r2["total_cost_usd"].as_f64().unwrap();
    assert!(cost1 > 0.0 && cost2 > 0.0, "{r1}\n{r2}");
    assert!((r1["total_cost_usd"].as_f64().unwrap() - cost1).abs() < 1e-9, "{r1}");
    assert!((total - (cost1 + cost2)).abs() < 1e-9 && (total - cost_all).abs() < 1e-9, "{r2}");
}

/// `.claude/settings.local.json` with one command hook per event.
fn claude_hooks(dir: &Path, hooks: &[(&str, &str)]) {
    let mut h = serde_json::Map::new();
    for (event, command) in hooks {
        h.insert(event.to_string(), json!([{ "hooks": [{ "type": "command", "command": command, "timeout": 10 }] }]));
    }
    std::fs::create_dir_all(dir.join(".claude")).unwrap();
    std::fs::write(dir.join(".claude/settings.local.json"), json!({ "hooks": h }).to_string()).unwrap();
}

#[test]
fn a_hooks_continue_false_ends_only_the_turn_of_a_live_claude_code_session() {
    let dir = tempfile::Builder::new().prefix("live-cc-hooks").tempdir().unwrap();
    claude_hooks(
        dir.path(),
        &[
            ("PreToolUse", "cat > pre-tool-use.json"),
            ("PostToolUse", r#"echo '{"continue":false,"stopReason":"Shutdown requested by lead"}'"#),
        ],
    );
    let turns = vec![Turn::reply(vec![shell("echo tool-ran")]), Turn::reply(vec![text("Next turn.")])];
    let Some(mut c) = claude(turns, Some(dir.path()), &["--include-hook-events"]) else { return };
    c.live.send(&user_turn("the task", None));
    let stopped = c.live.wait_for("the first result", is("result"));
    assert_eq!(
        (&stopped["terminal_reason"], &stopped["is_error"]),
        (&json!("hook_stopped"), &json!(false)),
        "{stopped}"
    );
    assert!(dir.path().join("pre-tool-use.json").is_file(), "PreToolUse ran");
    // The process did not end: it takes the next turn.
    c.live.send(&user_turn("go on", None));
    let next = c.live.wait_nth(2, "the second result", is("result"));
    assert_eq!(next["result"], "Next turn.", "{}", c.live.describe());
    let hooks: Vec<Value> = c.live.lines().into_iter().filter(|l| l["subtype"] == "hook_response").collect();
    assert!(hooks.iter().any(|h| h["hook_event"] == "PostToolUse" && h["exit_code"] == 0), "{hooks:?}");
}

#[test]
fn a_stop_hooks_block_continues_the_same_turn_of_a_live_claude_code_session() {
    let dir = tempfile::Builder::new().prefix("live-cc-stop").tempdir().unwrap();
    // Blocks the first stop only.
    let stop =
        r#"[ -e blocked ] || { touch blocked; echo '{"decision":"block","reason":"Handle the new mail first."}'; }"#;
    claude_hooks(dir.path(), &[("Stop", stop)]);
    let turns = vec![Turn::reply(vec![text("Done, I think.")]), Turn::reply(vec![text("Mail handled.")])];
    let Some(mut c) = claude(turns, Some(dir.path()), &[]) else { return };
    c.live.send(&user_turn("the task", None));
    let result = c.live.wait_for("the result", is("result"));
    assert_eq!(result["result"], "Mail handled.", "{}", c.live.describe());
    let feedback = c.mock.wait_for(std::time::Duration::ZERO, |r| r.turn == Some(1)).expect("the second request");
    // The model gets it as a user message, inside a reminder that a hook's output is data,
    // not the user's words.
    assert_eq!(feedback.user_input.len(), 1, "{:?}", feedback.user_input);
    let said = &feedback.user_input[0];
    assert!(
        said.starts_with("<system-reminder>") && said.contains("Stop hook feedback:\nHandle the new mail first."),
        "{said}"
    );
    c.live.close_stdin();
    c.live.wait_exit();
    assert_eq!(c.live.count(is("result")), 1, "{}", c.live.describe());
}

#[test]
fn claude_codes_budget_ends_the_turn_with_an_error_and_refuses_every_later_turn() {
    // A million input tokens cost more than a cent at any model's price.
    let turns = vec![
        Turn::reply(vec![shell("touch tool-ran")]).usage(Usage::new(1_000_000, 10, 0, 0)),
        Turn::reply(vec![text("Never.")]),
    ];
    let Some(mut c) = claude(turns, None, &["--max-budget-usd", "0.01"]) else { return };
    c.live.send(&user_turn("the task", None));
    let over = c.live.wait_for("the first result", is("result"));
    assert_eq!(
        (&over["subtype"], &over["is_error"], &over["terminal_reason"]),
        (&json!("error_max_budget_usd"), &json!(true), &json!("budget_exhausted")),
        "{over}"
    );
    assert!(!c.dir.path().join("tool-ran").exists(), "the reply's tool call did not run");
    c.live.send(&user_turn("more", None));
    let refused = c.live.wait_nth(2, "the second result", is("result"));
    assert_eq!(refused["subtype"], "error_max_budget_usd", "{refused}");
    assert_eq!(c.mock.turn_requests().len(), 1, "no model request after the budget: {}", c.mock.transcript());
    c.live.close_stdin();
    assert_eq!(c.live.wait_exit().code(), Some(1), "{}", c.live.describe());
}

#[test]
fn claude_code_loads_the_projects_mcp_server_in_a_live_session() {
    let p = Project::new();
    let mcp = json!({ "mcpServers": { "coordd": { "type": "stdio", "command": bin("inbox"),
        "args": ["--db", p.paths().db, "--agent", "w1", "mcp"] } } });
    std::fs::write(p.path().join(".mcp.json"), mcp.to_string()).unwrap();
    std::fs::create_dir_all(p.path().join(".claude")).unwrap();
    std::fs::write(p.path().join(".claude/settings.local.json"), r#"{"enabledMcpjsonServers":["coordd"]}"#).unwrap();
    let turns =
        vec![Turn::reply(vec![tool("mcp__coordd__list_agents", json!({}))]), Turn::reply(vec![text("Listed.")])];
    let Some(mut c) = claude(turns, Some(p.path()), &[]) else { return };
    c.live.send(&user_turn("list the agents", None));
    let init = c.live.wait_for("system init", |l| l["type"] == "system" && l["subtype"] == "init");
    assert!(
        init["mcp_servers"].as_array().unwrap().iter().any(|s| s["name"] == "coordd" && s["status"] == "connected"),
        "{}",
        init["mcp_servers"]
    );
    let result = c.live.wait_for("the result", is("result"));
    assert_eq!(result["result"], "Listed.", "{}", c.live.describe());
    let outputs = tool_results(&c.mock.turn_requests()[1].body);
    assert!(outputs.iter().any(|o| o.contains("agents")), "{outputs:?}");
}

#[test]
fn closing_claude_codes_stdin_lets_the_running_turn_finish_before_it_exits() {
    let gate = Gate::new();
    let turns =
        vec![Turn::reply(vec![shell(&gate.command())]), Turn::reply(vec![text("Finished after the end of input.")])];
    let Some(mut c) = claude(turns, None, &[]) else { return };
    c.live.send(&user_turn("the task", None));
    c.live.wait_for("the tool call", |l| l["type"] == "assistant" && !tool_uses(l).is_empty());
    c.live.close_stdin();
    gate.release();
    let status = c.live.wait_exit();
    assert_eq!(status.code(), Some(0), "{}", c.live.describe());
    let results: Vec<Value> = c.live.lines().into_iter().filter(is("result")).collect();
    assert_eq!(results.len(), 1, "{}", c.live.describe());
    assert_eq!(results[0]["result"], "Finished after the end of input.");
}

#[test]
fn a_sigterm_ends_a_claude_code_session_and_its_running_tool() {
    let gate = Gate::new();
    let Some(mut c) = claude(vec![Turn::reply(vec![shell(&gate.command())])], None, &[]) else {
        return;
    };
    c.live.send(&user_turn("the task", None));
    c.live.wait_for("the tool call", |l| l["type"] == "assistant" && !tool_uses(l).is_empty());
    c.live.signal(15);
    let status = c.live.wait_exit();
    assert_eq!(status.code(), Some(143), "{}", c.live.describe());
    assert_eq!(c.live.count(is("result")), 0);
    assert!(gate.waiting().is_empty(), "the tool's shell was stopped too");
}

#[test]
fn a_killed_claude_code_sessions_stream_ends_with_its_last_tool_call() {
    let gate = Gate::new();
    let command = gate.command();
    let Some(mut c) = claude(vec![Turn::reply(vec![text("Let me check."), shell(&command)])], None, &[]) else {
        return;
    };
    c.live.send(&user_turn("the task", None));
    c.live.wait_for("the tool call", |l| l["type"] == "assistant" && !tool_uses(l).is_empty());
    c.live.signal(9);
    c.live.wait_exit();
    let lines = c.live.lines();
    let last = lines.last().unwrap();
    let calls = tool_uses(last);
    assert_eq!((calls.len(), &calls[0]["name"]), (1, &json!("Bash")), "{last}");
    assert_eq!(calls[0]["input"]["command"], command.as_str());
    // A shell that had started outlives a SIGKILL of Claude Code.
    gate.kill_left();
}

/// A Codex app-server against `turns` in a fresh directory (or `cwd`), initialized.
struct Codex {
    mock: MockModel,
    server: AppServer,
    dir: tempfile::TempDir,
    _exec: CodexExec,
}

fn codex(turns: Vec<Turn>, cwd: Option<&Path>, args: &[String]) -> Option<Codex> {
    let program = agent_cli("codex")?;
    let mock = MockModel::start(OpenAi, Scenario::new(turns));
    let dir = tempfile::Builder::new().prefix("live-cx").tempdir().unwrap();
    let exec = CodexExec::new(&program, cwd.unwrap_or(dir.path()), &mock);
    let mut server = exec.app_server(args);
    server.initialize();
    Some(Codex { mock, server, dir, _exec: exec })
}

fn method(m: &'static str) -> impl Fn(&Value) -> bool {
    move |l| l["method"] == m
}

#[test]
fn codex_app_server_takes_a_second_turn_in_the_same_thread_after_the_first_completed() {
    let turns = two_user_turns();
    let Some(mut c) = codex(turns, None, &[]) else { return };
    let thread = c.server.start_thread(c.dir.path(), Value::Null);
    let t1 = c.server.start_turn(&thread, "the task");
    let done = c.server.turn_completed(1);
    assert_eq!((&done["params"]["turn"]["id"], &done["params"]["turn"]["status"]), (&json!(t1), &json!("completed")));
    let idle = c
        .server
        .live
        .wait_for("idle", |l| l["method"] == "thread/status/changed" && l["params"]["status"]["type"] == "idle");
    assert_eq!(idle["params"]["threadId"], thread.as_str());
    let t2 = c.server.start_turn(&thread, "the answer");
    assert_ne!(t1, t2);
    let done = c.server.turn_completed(2);
    assert_eq!(done["params"]["threadId"], thread.as_str());
    let asked = c.mock.wait_for(std::time::Duration::ZERO, |r| r.turn == Some(2)).expect("the second turn's request");
    assert_eq!(asked.user_input, ["the answer"]);
    // A command's item carries its command line and output.
    let item = c.server.live.wait_for("the command", |l| {
        l["method"] == "item/completed" && l["params"]["item"]["type"] == "commandExecution"
    });
    assert!(item["params"]["item"]["aggregatedOutput"].as_str().unwrap().contains("first-tool"), "{item}");
    c.server.live.close_stdin();
    assert_eq!(c.server.live.wait_exit().code(), Some(0), "{}", c.server.live.describe());
}

#[test]
fn codex_turn_start_and_steer_during_a_tool_call_join_the_running_turn() {
    let gate = Gate::new();
    let turns = vec![Turn::reply(vec![shell(&gate.command())]), Turn::reply(vec![text("After the tool.")])];
    let Some(mut c) = codex(turns, None, &[]) else { return };
    let thread = c.server.start_thread(c.dir.path(), Value::Null);
    let running = c.server.start_turn(&thread, "the task");
    c.server.live.wait_for("the command", |l| {
        l["method"] == "item/started" && l["params"]["item"]["type"] == "commandExecution"
    });
    let steer =
        json!({ "threadId": thread, "expectedTurnId": running, "input": [{ "type": "text", "text": "steered" }] });
    let steered = c.server.request("turn/steer", steer).expect("turn/steer");
    assert_eq!(steered["turnId"], running.as_str());
    assert_eq!(c.server.start_turn(&thread, "started"), running, "turn/start joined the running turn");
    gate.release();
    c.server.turn_completed(1);
    let after = c.mock.wait_for(std::time::Duration::ZERO, |r| r.turn == Some(1)).expect("the request after the tool");
    assert!(tool_outputs(&after.body).iter().any(|o| o.contains("got-go")), "{}", c.mock.transcript());
    assert_eq!(after.user_input, ["steered", "started"]);
    // Idle now: there is no turn to steer, but turn/start starts one.
    let steer = json!({ "threadId": thread, "expectedTurnId": running, "input": [{ "type": "text", "text": "late" }] });
    let err = c.server.request("turn/steer", steer).expect_err("no active turn");
    assert_eq!(err["code"], -32600, "{err}");
    assert_eq!(c.server.live.count(method("turn/completed")), 1);
}

/// The fields of a Codex `TokenUsageBreakdown` as a [`Usage`] (uncached input is what is
/// left of `inputTokens`).
fn codex_usage(b: &Value) -> Usage {
    let n = |k: &str| b[k].as_u64().unwrap_or_else(|| panic!("{k} in {b}"));
    let (cached, written) = (n("cachedInputTokens"), n("cacheWriteInputTokens"));
    Usage::new(n("inputTokens") - cached - written, n("outputTokens"), cached, written)
}

#[test]
fn codex_app_server_token_usage_totals_add_up_to_what_the_model_reported() {
    let ([a, b, c2], turns) = usage_turns();
    let Some(mut c) = codex(turns, None, &[]) else { return };
    let thread = c.server.start_thread(c.dir.path(), Value::Null);
    c.server.start_turn(&thread, "one");
    c.server.turn_completed(1);
    c.server.start_turn(&thread, "two");
    c.server.turn_completed(2);
    let updates: Vec<Value> = c.server.live.lines().into_iter().filter(method("thread/tokenUsage/updated")).collect();
    // One update per model response: `last` is that response's, `total` the thread's so far.
    let lasts: Vec<Usage> = updates.iter().map(|u| codex_usage(&u["params"]["tokenUsage"]["last"])).collect();
    assert_eq!(lasts, [a, b, c2]);
    let total = codex_usage(&updates.last().unwrap()["params"]["tokenUsage"]["total"]);
    assert_eq!(total, c.mock.reported_usage());
    assert_eq!(total, a + b + c2);
}

#[test]
fn codex_exec_resume_reports_the_threads_cumulative_usage_at_each_turn_completed() {
    let Some(program) = agent_cli("codex") else { return };
    let turns = vec![Turn::reply(vec![text("One.")]), Turn::reply(vec![text("Two.")])];
    let mock = MockModel::start(OpenAi, Scenario::new(turns));
    let dir = tempfile::Builder::new().prefix("live-cx-resume").tempdir().unwrap();
    let bypass = "--dangerously-bypass-approvals-and-sandbox";
    let first = CodexExec::new(&program, dir.path(), &mock).args(&[bypass]);
    let run = first.run("one");
    let thread =
        run.stream.iter().find(|l| l["type"] == "thread.started").expect("thread.started")["thread_id"].clone();
    let completed =
        |s: &[Value]| s.iter().find(|l| l["type"] == "turn.completed").map(|l| l["usage"]["input_tokens"].clone());
    assert_eq!(completed(&run.stream), Some(json!(100)), "{}", run.describe());
    // The same CODEX_HOME, where the thread was saved.
    let resumed = first.args(&["resume", thread.as_str().unwrap()]).run("two");
    assert_eq!(completed(&resumed.stream), Some(json!(200)), "both processes' usage\n{}", resumed.describe());
    assert_eq!(mock.reported_usage().input, 200);
}

#[test]
fn codex_app_server_runs_a_trusted_projects_mcp_server_and_the_hooks_trusted_for_its_thread() {
    let p = Project::new();
    let dir = p.path();
    let config = format!(
        "[mcp_servers.coordd]\ncommand = {:?}\nargs = [\"--db\", {:?}, \"--agent\", \"w1\", \"mcp\"]\ndefault_tools_approval_mode = \"approve\"\n",
        bin("inbox").display().to_string(),
        p.paths().db.display().to_string()
    );
    std::fs::create_dir_all(dir.join(".codex")).unwrap();
    std::fs::write(dir.join(".codex/config.toml"), config).unwrap();
    let hook = json!({ "hooks": { "PostToolUse": [{ "hooks": [{ "type": "command", "command": "cat >> post-tool-use.jsonl", "timeout": 10 }] }] } });
    std::fs::write(dir.join(".codex/hooks.json"), hook.to_string()).unwrap();
    // trust_args without --dangerously-bypass-hook-trust, which app-server refuses.
    let trust: Vec<String> = coord_client::codex::trust_args(&[dir]).into_iter().take(2).collect();
    let turns =
        vec![Turn::reply(vec![tool("mcp__coordd__list_agents", json!({}))]), Turn::reply(vec![text("Listed.")])];
    let Some(mut c) = codex(turns, Some(dir), &trust) else { return };
    // The hooks load untrusted; trusting their current hashes for the thread runs them.
    let listed = c.server.request("hooks/list", json!({ "cwds": [dir] })).expect("hooks/list");
    let hooks = listed["data"][0]["hooks"].as_array().cloned().unwrap_or_default();
    assert_eq!(hooks.len(), 1, "{listed}");
    assert_eq!(hooks[0]["trustStatus"], "untrusted");
    let state: serde_json::Map<String, Value> = hooks
        .iter()
        .map(|h| (h["key"].as_str().unwrap().to_string(), json!({ "trusted_hash": h["currentHash"] })))
        .collect();
    let thread = c.server.start_thread(dir, json!({ "hooks": { "state": state } }));
    c.server.start_turn(&thread, "list the agents");
    c.server.turn_completed(1);
    let outputs = tool_outputs(&c.mock.turn_requests()[1].body);
    assert!(outputs.iter().any(|o| o.contains("agents")), "{outputs:?}\n{}", c.server.live.describe());
    let ran = std::fs::read_to_string(dir.join("post-tool-use.jsonl")).unwrap_or_default();
    assert!(ran.contains("mcp__coordd__list_agents"), "the PostToolUse hook ran: {ran}");
}

#[test]
fn closing_codex_app_servers_stdin_ends_it_at_once_even_in_a_turn() {
    let gate = Gate::new();
    let Some(mut c) = codex(vec![Turn::reply(vec![shell(&gate.command())])], None, &[]) else {
        return;
    };
    let thread = c.server.start_thread(c.dir.path(), Value::Null);
    c.server.start_turn(&thread, "the task");
    c.server.live.wait_for("the command", |l| {
        l["method"] == "item/started" && l["params"]["item"]["type"] == "commandExecution"
    });
    c.server.live.close_stdin();
    assert_eq!(c.server.live.wait_exit().code(), Some(0), "{}", c.server.live.describe());
    assert_eq!(c.server.live.count(method("turn/completed")), 0, "the turn was abandoned");
    assert!(gate.waiting().is_empty(), "its command was stopped");
}

#[test]
fn a_killed_codex_app_servers_stream_ends_with_its_last_tool_call() {
    let gate = Gate::new();
    let command = gate.command();
    let Some(mut c) = codex(vec![Turn::reply(vec![shell(&command)])], None, &[]) else { return };
    let thread = c.server.start_thread(c.dir.path(), Value::Null);
    c.server.start_turn(&thread, "the task");
    c.server.live.wait_for("the command", |l| {
        l["method"] == "item/started" && l["params"]["item"]["type"] == "commandExecution"
    });
    c.server.live.signal(9);
    c.server.live.wait_exit();
    let lines = c.server.live.lines();
    let last = lines.last().unwrap();
    assert_eq!(
        (&last["method"], &last["params"]["item"]["type"]),
        (&json!("item/started"), &json!("commandExecution")),
        "{last}"
    );
    assert!(last["params"]["item"]["command"].as_str().unwrap().contains(&command), "{last}");
    // A command that had started outlives a SIGKILL of Codex.
    gate.kill_left();
}
