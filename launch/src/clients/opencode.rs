//! opencode (`opencode-ai`) sessions: `opencode run --format json --auto PROMPT` in the
//! worktree, with `PWD` set to it (opencode takes its directory from `PWD`, not from the
//! working directory), auto-update and the model-list fetch off. It reads the worktree's
//! `opencode.json` (the MCP server and coordd's plugin, written by dispatch) with no trust
//! step. `--auto` approves what opencode would otherwise ask about (a rejection ends its
//! loop), as Claude Code's sessions run with `bypassPermissions`; the lead's permission
//! gate still applies, through the plugin.
//!
//! Live (`--live`), it runs `opencode serve` on the loopback interface instead
//! ([`serve_args`]), under the driver in opencode_live.rs.
//!
//! Its stream (one JSON object per line: `step_start`, `text`, `tool_use`, `step_finish`,
//! `error`) reports tokens and cost per step: the log sums them into the session's usage.

use serde_json::Value;

use super::{Stream, n, s};
use crate::transcript::Totals;
use crate::transcript::{compact, cut};

/// The program's arguments, after `run`'s options: the prompt last.
pub fn args(model: Option<&str>, extra: Vec<String>, prompt: String) -> Vec<String> {
    let mut a: Vec<String> = ["run", "--format", "json", "--auto"].map(String::from).into();
    a.extend(model.iter().flat_map(|m| ["--model".to_string(), m.to_string()]));
    a.extend(extra);
    a.push(prompt);
    a
}

/// `opencode serve` for a live session (opencode_live.rs): on the loopback interface only,
/// on a port the system picks.
pub fn serve_args(extra: Vec<String>) -> Vec<String> {
    let mut a: Vec<String> = ["serve", "--hostname", "127.0.0.1", "--port", "0"].map(String::from).into();
    a.extend(extra);
    a
}

/// The environment opencode needs beside the session's.
pub fn env(cwd: &std::path::Path) -> Vec<(String, String)> {
    vec![
        ("PWD".to_string(), cwd.display().to_string()),
        ("OPENCODE_DISABLE_AUTOUPDATE".to_string(), "1".to_string()),
        ("OPENCODE_DISABLE_MODELS_FETCH".to_string(), "1".to_string()),
    ]
}

/// The stream reader: the usage so far, summed over the steps.
#[derive(Default)]
pub struct Log {
    so_far: Option<Totals>,
}

impl Stream for Log {
    fn render(&mut self, ev: &Value) -> Vec<String> {
        let part = &ev["part"];
        let line = match s(ev, "type").as_str() {
            "step_start" => return Vec::new(),
            "text" => format!("assistant: {}", cut(&s(part, "text"))),
            "tool_use" => {
                let state = &part["state"];
                let input = match state["input"].get("command").and_then(Value::as_str) {
                    Some(c) => c.to_string(),
                    None => compact(&state["input"]),
                };
                let out = state.get("output").or(state.get("error")).map_or(String::new(), |o| match o {
                    Value::String(t) => t.clone(),
                    o => compact(o),
                });
                format!("tool {} {input} ({}): {}", s(part, "tool"), s(state, "status"), cut(&out))
            }
            "step_finish" => format!("step end ({})", s(part, "reason")),
            "error" => format!("error: {}", cut(&compact(&ev["error"]))),
            _ => cut(&compact(ev)),
        };
        vec![line]
    }

    fn totals(&mut self, ev: &Value) -> Option<Totals> {
        if ev["type"] != "step_finish" {
            return None;
        }
        let (part, t) = (&ev["part"], &ev["part"]["tokens"]);
        let mut u = self.so_far.unwrap_or_default();
        // Never less than nothing: usage only grows.
        u.input += n(t, "input").max(0);
        u.output += n(t, "output").max(0);
        u.cache_read += n(&t["cache"], "read").max(0);
        u.cache_write += n(&t["cache"], "write").max(0);
        u.cost = Some(u.cost.unwrap_or(0.0) + part["cost"].as_f64().unwrap_or(0.0).max(0.0));
        self.so_far = Some(u);
        Some(u)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_add_up_to_the_sessions_usage_and_cost() {
        let mut log = Log::default();
        let step = |i: i64, cost: f64| {
            serde_json::json!({"type": "step_finish", "part": {"reason": "tool-calls", "cost": cost,
                "tokens": {"total": i + 20, "input": i, "output": 20, "reasoning": 0, "cache": {"write": 1, "read": 2}}}})
        };
        log.totals(&step(100, 0.0001));
        let u = log.totals(&step(50, 0.0002)).unwrap();
        assert_eq!((u.input, u.output, u.cache_read, u.cache_write), (150, 40, 4, 2));
        assert!((u.cost.unwrap() - 0.0003).abs() < 1e-12);
        let tool = serde_json::json!({"type": "tool_use", "part": {"tool": "bash", "state": {"status": "completed",
            "input": {"command": "echo hi", "description": "say"}, "output": "hi\n"}}});
        assert_eq!(log.render(&tool), ["tool bash echo hi (completed): hi"]);
    }
}
