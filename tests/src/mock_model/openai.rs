//! The OpenAI Responses API as Codex speaks it (CLI 0.169), and running `codex exec`
//! headless against it.
//!
//! Codex POSTs `/v1/responses` with `stream: true` and reads SSE: `response.created`, one
//! `response.output_item.done` per output item (`message` or `function_call`), then
//! `response.completed`. A main-loop request is one whose tools include Codex's shell tool;
//! its turn is how many of the mock's replies its `input` holds (the mock tags its item ids
//! and `call_id`s with `_t<turn>_`, and Codex sends them back unchanged). MCP tools are
//! offered inside a tool of `type: "namespace"` named `mcp__SERVER`, and called with
//! `namespace` set; the shell tool is `exec_command`, input `{"cmd": …}`.
//!
//! Usage rides on `response.completed`: `input_tokens` (every input token, cached or not),
//! `input_tokens_details.cached_tokens` and `.cache_write_tokens`, `output_tokens`,
//! `total_tokens`. Codex 0.171 adds them up per thread as they are.
//!
//! [`CodexExec`] writes a throwaway `CODEX_HOME` whose `config.toml` points a custom provider
//! (`wire_api = "responses"`, no retries) at the mock, and runs `codex exec --json`.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

use super::live::LiveChild;
use super::{Block, CliRun, Dialect, MockModel, Response, Usage, run_limited};

/// The shell tools Codex versions have offered, by name.
const SHELLS: &[&str] = &["exec_command", "shell_command", "shell", "local_shell"];

/// The Responses API.
pub struct OpenAi;

static IDS: AtomicU64 = AtomicU64::new(0);

fn id(prefix: &str, turn: &str) -> String {
    format!("{prefix}_t{turn}_{:012x}", IDS.fetch_add(1, Ordering::Relaxed) + 0x1000)
}

/// The name of the shell tool a request offers.
fn shell_tool(body: &Value) -> Option<&'static str> {
    let tools = body["tools"].as_array()?;
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str().or(t["type"].as_str())).collect();
    SHELLS.iter().copied().find(|s| names.contains(s))
}

/// Whether an input item was written by the model (the mock).
fn from_model(item: &Value) -> bool {
    matches!(item["type"].as_str(), Some("function_call" | "custom_tool_call" | "local_shell_call" | "reasoning"))
        || (item["type"] == "message" && item["role"] == "assistant")
}

/// The turn tag (`_t<N>_`) in an item's ids.
fn tag(item: &Value) -> Option<usize> {
    let ids = format!("{} {}", item["call_id"].as_str().unwrap_or(""), item["id"].as_str().unwrap_or(""));
    let at = ids.find("_t")?;
    let digits: String = ids[at + 2..].chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

impl Dialect for OpenAi {
    fn is_model_path(&self, path: &str) -> bool {
        path.ends_with("/responses")
    }

    fn turn_of(&self, body: &Value) -> Option<usize> {
        shell_tool(body)?;
        let (mut seen, mut untagged, mut prev) = (HashSet::new(), 0, false);
        for item in body["input"].as_array().into_iter().flatten() {
            let mine = from_model(item);
            if mine {
                match tag(item) {
                    Some(t) => {
                        seen.insert(t);
                    }
                    // An untagged run of model items (say, from an earlier session) counts once.
                    None if !prev => untagged += 1,
                    None => {}
                }
            }
            prev = mine;
        }
        Some(seen.len() + untagged)
    }

    fn respond(&self, body: &Value, turn: Option<usize>, blocks: &[Block]) -> Response {
        self.reply("", body, turn, blocks, &Usage::STANDARD)
    }

    fn user_input(&self, body: &Value) -> Vec<String> {
        let items = body["input"].as_array().map(Vec::as_slice).unwrap_or_default();
        let from = items.iter().rposition(from_model).map_or(0, |i| i + 1);
        items[from..].iter().filter(|i| i["type"] == "message" && i["role"] == "user").map(message_text).collect()
    }

    fn conversation_input(&self, body: &Value) -> Vec<String> {
        messages(body, "user")
    }

    fn reply(&self, _path: &str, body: &Value, turn: Option<usize>, blocks: &[Block], usage: &Usage) -> Response {
        let turn = turn.map_or("x".to_string(), |t| t.to_string());
        let output: Vec<Value> = blocks.iter().map(|b| item(body, &turn, b)).collect();
        let model = body["model"].as_str().unwrap_or("mock-model");
        let rid = id("resp", &turn);
        let mut sse = String::new();
        let mut event = |name: &str, mut data: Value| {
            data["type"] = json!(name);
            sse += &format!("event: {name}\ndata: {data}\n\n");
        };
        event("response.created", json!({ "response": response(&rid, model, &[], "in_progress", usage) }));
        for (i, it) in output.iter().enumerate() {
            event("response.output_item.added", json!({ "output_index": i, "item": it }));
            event("response.output_item.done", json!({ "output_index": i, "item": it }));
        }
        event("response.completed", json!({ "response": response(&rid, model, &output, "completed", usage) }));
        Response { status: 200, content_type: "text/event-stream", body: sse.into_bytes() }
    }
}

fn response(rid: &str, model: &str, output: &[Value], status: &str, usage: &Usage) -> Value {
    let input = usage.all_input();
    json!({
        "id": rid, "object": "response", "status": status, "model": model, "output": output,
        "usage": { "input_tokens": input,
                   "input_tokens_details": { "cached_tokens": usage.cache_read, "cache_write_tokens": usage.cache_write },
                   "output_tokens": usage.output, "output_tokens_details": { "reasoning_tokens": 0 },
                   "total_tokens": input + usage.output },
    })
}

/// One output item for a block.
fn item(body: &Value, turn: &str, block: &Block) -> Value {
    let (name, input) = match block {
        Block::Text(s) => {
            return json!({
                "type": "message", "id": id("msg", turn), "role": "assistant", "status": "completed",
                "content": [{ "type": "output_text", "text": s, "annotations": [] }],
            });
        }
        Block::Tool { name, input } => (name.as_str(), input.clone()),
    };
    let mut call =
        json!({ "type": "function_call", "id": id("fc", turn), "call_id": id("call", turn), "status": "completed" });
    let mut args = input;
    let name = if name == "shell" {
        let shell = shell_tool(body).unwrap_or("exec_command");
        if let Some(c) = args.as_object_mut().filter(|_| shell == "exec_command").and_then(|o| o.remove("command")) {
            args["cmd"] = c;
            // Codex hands back what a command printed within `yield_time_ms` (10 s by
            // default) and, if it still runs, no more; it returns at once when the command
            // ends. On a loaded machine a command can take longer: wait for it.
            args["yield_time_ms"] = json!(120_000);
        }
        shell.to_string()
    } else if let Some(rest) = name.strip_prefix("mcp__") {
        // `mcp__SERVER__TOOL`: a call in the namespace tool `mcp__SERVER`.
        let (server, tool) = rest.split_once("__").unwrap_or((rest, ""));
        call["namespace"] = json!(format!("mcp__{server}"));
        tool.to_string()
    } else {
        name.to_string()
    };
    call["name"] = json!(name);
    call["arguments"] = json!(args.to_string());
    call
}

/// The texts of a request's input messages with `role` (`developer` carries hook context,
/// `user` the prompt and Stop-hook feedback).
pub fn messages(req: &Value, role: &str) -> Vec<String> {
    let items = req["input"].as_array().into_iter().flatten();
    items.filter(|i| i["type"] == "message" && i["role"] == role).map(message_text).collect()
}

/// A message item's text (its parts joined by newlines).
fn message_text(item: &Value) -> String {
    match &item["content"] {
        Value::String(s) => s.clone(),
        c => c.as_array().into_iter().flatten().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join("\n"),
    }
}

/// The outputs of tool calls a request's input holds (`function_call_output`), as text.
pub fn tool_outputs(req: &Value) -> Vec<String> {
    let items = req["input"].as_array().into_iter().flatten();
    items
        .filter(|i| i["type"] == "function_call_output")
        .map(|i| i["output"].as_str().map_or_else(|| i["output"].to_string(), str::to_string))
        .collect()
}

/// The tool names a request offers, MCP ones as `mcp__SERVER__TOOL`.
pub fn offered_tools(req: &Value) -> Vec<String> {
    let mut names = Vec::new();
    for t in req["tools"].as_array().into_iter().flatten() {
        let name = t["name"].as_str().or(t["type"].as_str()).unwrap_or("").to_string();
        match t["tools"].as_array() {
            Some(inner) if t["type"] == "namespace" => {
                names.extend(inner.iter().filter_map(|i| i["name"].as_str()).map(|i| format!("{name}__{i}")))
            }
            _ => names.push(name),
        }
    }
    names
}

/// A `CODEX_HOME/config.toml` whose provider is `mock` (`wire_api = "responses"`, no
/// retries, so a bad reply fails at once; approvals off). Its key is read from
/// `CODEX_MOCK_API_KEY` (any value).
pub fn codex_config(mock: &MockModel) -> String {
    format!(
        r#"model = "mock-model"
model_provider = "mock"
approval_policy = "never"

[model_providers.mock]
name = "scripted mock"
base_url = "{}/v1"
wire_api = "responses"
env_key = "CODEX_MOCK_API_KEY"
request_max_retries = 0
stream_max_retries = 0
"#,
        mock.base_url()
    )
}

/// How long a `codex exec` may run before the harness kills it: a guard against a hang
/// (a Stop hook that blocks for ever), not a speed target.
pub const CODEX_LIMIT: Duration = Duration::from_secs(300);

/// `codex exec` against a [`MockModel`], with a throwaway `CODEX_HOME` (the user's own
/// `~/.codex` is never read or written).
pub struct CodexExec {
    codex: PathBuf,
    cwd: PathBuf,
    home: tempfile::TempDir,
    config: String,
    args: Vec<String>,
    env: Vec<(String, String)>,
}

/// What a `codex exec` did.
pub type CodexRun = CliRun;

impl CodexExec {
    /// Codex at `codex`, run in `cwd`, talking to `mock`. The provider has no retries, so a
    /// bad reply fails at once; approvals are off (`never`).
    pub fn new(codex: &Path, cwd: &Path, mock: &MockModel) -> CodexExec {
        let config = codex_config(mock);
        CodexExec {
            codex: codex.to_path_buf(),
            cwd: cwd.to_path_buf(),
            home: tempfile::Builder::new().prefix("cxh").tempdir().expect("CODEX_HOME"),
            config,
            args: Vec::new(),
            env: Vec::new(),
        }
    }

    /// The throwaway `CODEX_HOME`.
    pub fn home(&self) -> &Path {
        self.home.path()
    }

    /// Append TOML (whole tables) to the generated `config.toml`.
    pub fn config(mut self, toml: &str) -> CodexExec {
        self.config.push('\n');
        self.config += toml;
        self
    }

    /// Add arguments to `codex exec` (before the prompt).
    pub fn args<S: AsRef<str>>(mut self, args: &[S]) -> CodexExec {
        self.args.extend(args.iter().map(|a| a.as_ref().to_string()));
        self
    }

    pub fn env(mut self, k: &str, v: &str) -> CodexExec {
        self.env.push((k.to_string(), v.to_string()));
        self
    }

    /// Write `config.toml` and a `codex` command with the throwaway home and environment.
    fn command(&self) -> Command {
        std::fs::write(self.home.path().join("config.toml"), &self.config).expect("write CODEX_HOME/config.toml");
        let mut cmd = Command::new(&self.codex);
        cmd.current_dir(&self.cwd).env("CODEX_HOME", self.home.path()).env("CODEX_MOCK_API_KEY", "dummy");
        // Its login shells must not run the machine's own profile (see `claude_env`).
        cmd.env("HOME", self.home.path());
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        cmd
    }

    /// Start `codex app-server` (JSON-RPC over stdio) with `args` (not those of
    /// [`CodexExec::args`], which are `exec`'s), with the same home and environment.
    pub fn app_server<S: AsRef<str>>(&self, args: &[S]) -> AppServer {
        let mut cmd = self.command();
        cmd.arg("app-server").args(args.iter().map(AsRef::as_ref));
        AppServer { live: LiveChild::spawn(cmd), next_id: 0 }
    }

    /// Write `config.toml` and run `codex exec --json PROMPT` to its end (stdin empty).
    pub fn run(&self, prompt: &str) -> CodexRun {
        let mut cmd = self.command();
        cmd.arg("exec").args(&self.args).args(["--skip-git-repo-check", "--json", prompt]);
        run_limited(cmd, CODEX_LIMIT, "codex exec")
    }
}

/// A `codex app-server` session: newline-delimited JSON-RPC over its stdin and stdout (Codex
/// writes no `"jsonrpc"` member and needs none). Requests are answered in order of their
/// ids; notifications (`turn/completed`, `item/started`, ...) are read from [`AppServer::live`].
pub struct AppServer {
    pub live: LiveChild,
    next_id: u64,
}

impl AppServer {
    /// Send a request and wait for its response: `Ok(result)` or `Err(error)`.
    #[track_caller]
    pub fn request(&mut self, method: &str, params: Value) -> Result<Value, Value> {
        self.next_id += 1;
        let id = self.next_id;
        self.live.send(&json!({ "id": id, "method": method, "params": params }));
        let what = format!("the response to {method} (id {id})");
        let resp = self.live.wait_for(&what, |l| l["id"] == id && l.get("method").is_none());
        match resp.get("error") {
            Some(e) => Err(e.clone()),
            None => Ok(resp["result"].clone()),
        }
    }

    /// `initialize` then `initialized`.
    #[track_caller]
    pub fn initialize(&mut self) -> Value {
        let info = json!({ "clientInfo": { "name": "coord-tests", "version": "0" } });
        let r = self.request("initialize", info).expect("initialize");
        self.live.send(&json!({ "method": "initialized" }));
        r
    }

    /// `thread/start` in `cwd`, unattended (approvals `never`, no sandbox), with per-thread
    /// configuration overrides `config` (or `null`); the new thread's id.
    #[track_caller]
    pub fn start_thread(&mut self, cwd: &Path, config: Value) -> String {
        let params =
            json!({ "cwd": cwd, "approvalPolicy": "never", "sandbox": "danger-full-access", "config": config });
        let r = self.request("thread/start", params).expect("thread/start");
        r["thread"]["id"].as_str().expect("a thread id").to_string()
    }

    /// `turn/start` with one text input: the id of the turn it started, or of the running
    /// turn it joined.
    #[track_caller]
    pub fn start_turn(&mut self, thread: &str, text: &str) -> String {
        let params = json!({ "threadId": thread, "input": [{ "type": "text", "text": text }] });
        let r = self.request("turn/start", params).expect("turn/start");
        r["turn"]["id"].as_str().expect("a turn id").to_string()
    }

    /// Wait for the `n`-th `turn/completed` notification (from 1).
    #[track_caller]
    pub fn turn_completed(&self, n: usize) -> Value {
        self.live.wait_nth(n, "turn/completed", |l| l["method"] == "turn/completed")
    }
}
