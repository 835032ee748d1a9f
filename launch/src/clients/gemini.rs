//! Gemini CLI (`@google/gemini-cli`) sessions: `gemini -p PROMPT -o stream-json
//! --approval-mode yolo` in the worktree, trusted for that process only
//! (`GEMINI_CLI_TRUST_WORKSPACE=true`: an untrusted folder's `.gemini/settings.json`, which
//! holds coordd's MCP server and hooks, is ignored silently; `--skip-trust` comes too late
//! for headless runs). Nothing is written to the user's trusted folders.
//!
//! Its stream (`init`, `message`, `tool_use`, `tool_result`, `error`, `result`) reports
//! tokens in the final `result`'s `stats`, and no cost: the session's usage is recorded
//! without one.

use serde_json::Value;

use super::{Stream, n, s};
use crate::transcript::Totals;
use crate::transcript::{compact, cut};

/// The program's arguments.
pub fn args(model: Option<&str>, extra: Vec<String>, prompt: String) -> Vec<String> {
    let mut a = vec!["-p".to_string(), prompt];
    a.extend(["-o", "stream-json", "--approval-mode", "yolo"].map(String::from));
    a.extend(model.iter().flat_map(|m| ["--model".to_string(), m.to_string()]));
    a.extend(extra);
    a
}

/// A live session's arguments: `--acp` (gemini_live.rs drives it), in the default approval
/// mode, so Gemini asks before a shell command, an edit or a fetch and the lead's gate
/// decides (its BeforeTool hook does not run in ACP mode).
pub fn acp_args(model: Option<&str>, extra: Vec<String>) -> Vec<String> {
    let mut a: Vec<String> = ["--acp", "--approval-mode", "default"].map(String::from).into();
    a.extend(model.iter().flat_map(|m| ["--model".to_string(), m.to_string()]));
    a.extend(extra);
    a
}

/// The environment Gemini CLI needs beside the session's.
pub fn env() -> Vec<(String, String)> {
    vec![("GEMINI_CLI_TRUST_WORKSPACE".to_string(), "true".to_string())]
}

/// The stream reader.
#[derive(Default)]
pub struct Log {
    /// The assistant's text of the turn so far (it arrives in deltas).
    text: String,
}

impl Stream for Log {
    fn render(&mut self, ev: &Value) -> Vec<String> {
        let kind = s(ev, "type");
        if kind == "message" && s(ev, "role") == "assistant" {
            self.text.push_str(&s(ev, "content"));
            return Vec::new();
        }
        let mut lines = Vec::new();
        if !self.text.is_empty() {
            lines.push(format!("assistant: {}", cut(&std::mem::take(&mut self.text))));
        }
        lines.push(match kind.as_str() {
            "init" => format!("gemini session {} started ({})", s(ev, "session_id"), s(ev, "model")),
            "message" => return lines,
            "tool_use" => {
                let p = &ev["parameters"];
                let input = p.get("command").and_then(Value::as_str).map_or_else(|| compact(p), str::to_string);
                format!("tool {}: {}", s(ev, "tool_name"), cut(&input))
            }
            "tool_result" => format!("result {}: {}", s(ev, "status"), cut(&s(ev, "output"))),
            "error" => format!("{}: {}", s(ev, "severity"), cut(&s(ev, "message"))),
            "result" => format!("turn end ({})", s(ev, "status")),
            _ => cut(&compact(ev)),
        });
        lines
    }

    fn totals(&mut self, ev: &Value) -> Option<Totals> {
        if ev["type"] != "result" {
            return None;
        }
        let st = ev.get("stats")?;
        Some(Totals {
            input: n(st, "input_tokens"),
            output: n(st, "output_tokens"),
            cache_read: n(st, "cached"),
            cache_write: 0,
            cost: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_result_gives_the_sessions_tokens_without_a_cost() {
        let mut log = Log::default();
        let r = serde_json::json!({"type": "result", "status": "success",
            "stats": {"total_tokens": 240, "input_tokens": 200, "output_tokens": 40, "cached": 5}});
        let u = log.totals(&r).unwrap();
        assert_eq!((u.input, u.output, u.cache_read, u.cost), (200, 40, 5, None));
        let m = serde_json::json!({"type": "message", "role": "assistant", "content": "Done.", "delta": true});
        assert!(log.render(&m).is_empty());
        assert_eq!(log.render(&r), ["assistant: Done.", "turn end (success)"]);
    }
}
