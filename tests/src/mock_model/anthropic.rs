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
//! Claude Code needs no login against the mock: `ANTHROPIC_BASE_URL` and any
//! `ANTHROPIC_API_KEY`; [`claude_env`] gives those and the rest of a headless session's
//! environment (a throwaway `CLAUDE_CONFIG_DIR`, `IS_SANDBOX=1` so `bypassPermissions` is
//! allowed as root).

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};

use super::{Block, Dialect, MockModel, Response};

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

    fn respond(&self, body: &Value, _turn: Option<usize>, blocks: &[Block]) -> Response {
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
                "usage": { "input_tokens": 100, "output_tokens": 1,
                           "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0 },
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
            json!({ "delta": { "stop_reason": stop, "stop_sequence": null }, "usage": { "output_tokens": 20 } }),
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
