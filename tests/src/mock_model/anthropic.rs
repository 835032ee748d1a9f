//! The Anthropic Messages API as Claude Code speaks it (CLI 2.1.x).
//!
//! Claude Code POSTs `/v1/messages` with `stream: true` and reads SSE: `message_start`, then
//! per content block `content_block_start`, one `content_block_delta` (`text_delta`, or
//! `input_json_delta` for a tool call) and `content_block_stop`, then `message_delta` (the
//! stop reason: `tool_use` when the reply calls a tool, else `end_turn`) and `message_stop`.
//! A main-loop request is one whose tools include `Bash`; its turn is how many assistant
//! messages its `messages` already hold, so a retried request gets the same answer. Other
//! requests (titles, probes, token counts) get a short text.
//!
//! Usage: `message_start` carries `input_tokens`, `cache_read_input_tokens` and
//! `cache_creation_input_tokens` (and `output_tokens: 1`), `message_delta` the final
//! `output_tokens`. Claude Code 2.1.332 takes each field from `message_delta` when it is
//! there, else from `message_start`, and sums the requests of a turn into its `result`.
//!
//! Claude Code needs no login against the mock: `ANTHROPIC_BASE_URL` and any
//! `ANTHROPIC_API_KEY`; [`claude_env`] gives those and the rest of a headless session's
//! environment (a throwaway `CLAUDE_CONFIG_DIR`, `IS_SANDBOX=1` so `bypassPermissions` is
//! allowed as root).

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};

use super::live::LiveChild;
use super::{Block, Dialect, MockModel, Response, Usage};

/// The Messages API.
pub struct Anthropic;

static IDS: AtomicU64 = AtomicU64::new(0);

fn id(prefix: &str) -> String {
    format!("{prefix}_{:020x}", IDS.fetch_add(1, Ordering::Relaxed) + 0x1000)
}

impl Dialect for Anthropic {
    fn is_model_path(&self, path: &str) -> bool {
        path.ends_with("/messages")
    }

    fn turn_of(&self, body: &Value) -> Option<usize> {
        let tools = body["tools"].as_array()?;
        tools.iter().any(|t| t["name"] == "Bash").then_some(())?;
        let messages = body["messages"].as_array().into_iter().flatten();
        Some(messages.filter(|m| m["role"] == "assistant").count())
    }

    fn respond(&self, body: &Value, turn: Option<usize>, blocks: &[Block]) -> Response {
        self.reply("", body, turn, blocks, &Usage::STANDARD)
    }

    fn user_input(&self, body: &Value) -> Vec<String> {
        user_texts(body)
    }

    fn conversation_input(&self, body: &Value) -> Vec<String> {
        texts_of(body["messages"].as_array().map(Vec::as_slice).unwrap_or_default())
    }

    fn reply(&self, _path: &str, body: &Value, _turn: Option<usize>, blocks: &[Block], usage: &Usage) -> Response {
        let model = body["model"].as_str().unwrap_or("mock-model");
        let mut sse = String::new();
        let mut event = |name: &str, mut data: Value| {
            data["type"] = json!(name);
            sse += &format!("event: {name}\ndata: {data}\n\n");
        };
        event(
            "message_start",
            json!({ "message": {
                "id": id("msg"), "type": "message", "role": "assistant", "model": model, "content": [],
                "stop_reason": null, "stop_sequence": null,
                "usage": { "input_tokens": usage.input, "output_tokens": 1,
                           "cache_creation_input_tokens": usage.cache_write,
                           "cache_read_input_tokens": usage.cache_read },
            }}),
        );
        let mut calls = false;
        for (i, b) in blocks.iter().enumerate() {
            let (start, delta) = match b {
                Block::Text(s) => (json!({ "type": "text", "text": "" }), json!({ "type": "text_delta", "text": s })),
                Block::Tool { name, input } => {
                    calls = true;
                    let (name, input) = tool_call(name, input);
                    (
                        json!({ "type": "tool_use", "id": id("toolu"), "name": name, "input": {} }),
                        json!({ "type": "input_json_delta", "partial_json": input.to_string() }),
                    )
                }
            };
            event("content_block_start", json!({ "index": i, "content_block": start }));
            event("content_block_delta", json!({ "index": i, "delta": delta }));
            event("content_block_stop", json!({ "index": i }));
        }
        let stop = if calls { "tool_use" } else { "end_turn" };
        event(
            "message_delta",
            json!({ "delta": { "stop_reason": stop, "stop_sequence": null }, "usage": { "output_tokens": usage.output } }),
        );
        event("message_stop", json!({}));
        Response { status: 200, content_type: "text/event-stream", body: sse.into_bytes() }
    }
}

/// A block's tool as Claude Code names it: the generic `shell` is its `Bash` tool.
fn tool_call(name: &str, input: &Value) -> (String, Value) {
    if name == "shell" {
        let mut input = input.clone();
        if input.get("description").is_none() {
            input["description"] = json!("run a command");
        }
        return ("Bash".to_string(), input);
    }
    (name.to_string(), input.clone())
}

/// The outputs of tool calls a request's messages hold (`tool_result` blocks), as text.
pub fn tool_results(req: &Value) -> Vec<String> {
    let blocks = req["messages"].as_array().into_iter().flatten().filter_map(|m| m["content"].as_array()).flatten();
    blocks
        .filter(|b| b["type"] == "tool_result")
        .map(|b| match &b["content"] {
            Value::String(s) => s.clone(),
            c => c.as_array().into_iter().flatten().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join("\n"),
        })
        .collect()
}

/// The text blocks of the user messages after the last assistant message of a request: the
/// prompt, a new user turn, Stop-hook feedback, or (in a live session) a message Claude Code
/// injected into the running turn beside a tool result. Tool results are left out.
pub fn user_texts(req: &Value) -> Vec<String> {
    let messages = req["messages"].as_array().map(Vec::as_slice).unwrap_or_default();
    let from = messages.iter().rposition(|m| m["role"] == "assistant").map_or(0, |i| i + 1);
    texts_of(&messages[from..])
}

/// The text blocks of the user messages among `messages` (tool results left out).
fn texts_of(messages: &[Value]) -> Vec<String> {
    let mut texts = Vec::new();
    for m in messages.iter().filter(|m| m["role"] == "user") {
        match &m["content"] {
            Value::String(s) => texts.push(s.clone()),
            c => texts.extend(
                c.as_array()
                    .into_iter()
                    .flatten()
                    .filter(|b| b["type"] == "text")
                    .filter_map(|b| b["text"].as_str())
                    .map(str::to_string),
            ),
        }
    }
    texts
}

/// The environment a headless Claude Code session needs to talk to `mock`: the API's
/// address and a dummy key, `config` as its (throwaway) `CLAUDE_CONFIG_DIR`, `IS_SANDBOX=1`
/// (as root, `bypassPermissions` is refused without it), and no telemetry or updates.
pub fn claude_env(mock: &MockModel, config: &Path) -> Vec<(String, String)> {
    [
        ("ANTHROPIC_BASE_URL", mock.base_url()),
        ("ANTHROPIC_API_KEY", "dummy".to_string()),
        ("CLAUDE_CONFIG_DIR", config.display().to_string()),
        // The agent runs its commands in login shells: with the machine's HOME they run its
        // profile, which may take a lock that a killed session leaves behind (pyenv's
        // rehash did, stalling every later shell for a minute). A throwaway HOME has none.
        ("HOME", config.display().to_string()),
        ("IS_SANDBOX", "1".to_string()),
        ("DISABLE_TELEMETRY", "1".to_string()),
        ("DISABLE_AUTOUPDATER", "1".to_string()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// Claude Code in a live session against `mock`: `-p --input-format stream-json
/// --output-format stream-json --verbose --permission-mode bypassPermissions` and `extra`,
/// run in `cwd` with [`claude_env`] (`config` is its throwaway config directory and home).
/// It prints nothing until the first user turn ([`user_turn`]) is written.
pub fn claude_live(claude: &Path, cwd: &Path, mock: &MockModel, config: &Path, extra: &[&str]) -> LiveChild {
    let mut cmd = std::process::Command::new(claude);
    cmd.args(["-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]);
    cmd.args(["--permission-mode", "bypassPermissions"]).args(extra).current_dir(cwd);
    cmd.envs(claude_env(mock, config));
    LiveChild::spawn(cmd)
}

/// One line of Claude Code's stream-json input: a user turn. With a `uuid`, Claude Code
/// reports it in `command_lifecycle` events (`queued`, `started`, `completed`).
pub fn user_turn(text: &str, uuid: Option<&str>) -> Value {
    let mut line = json!({ "type": "user", "message": { "role": "user", "content": text } });
    if let Some(u) = uuid {
        line["uuid"] = json!(u);
    }
    line
}
