//! `coord-launch --claude-log RAW`: the filter a live Claude Code session's stream-json
//! output goes through on its way to the log. Each line is kept as it is in `RAW` (the
//! attempt's `.jsonl`, beside the log) and becomes a readable line with its time: the
//! assistant's text, each tool call with its arguments, each result cut short, each turn's
//! end with the session's usage and cost so far, errors. A crashed session's log thus
//! ends with the tool call it was in (no result follows it).

use std::path::Path;

use serde_json::Value;

use crate::transcript::{Totals, compact, cut, filter, result_text};

/// Filter stdin to stdout until stdin ends, keeping every line in `raw`. Each turn's
/// usage (the session's totals so far) is also recorded with `launch.usage` for the
/// session in `COORD_FILTER_SESSION` (in the daemon of `COORD_DB`).
pub fn run(raw: &Path) -> std::io::Result<()> {
    filter(Some(raw), |line| {
        let usage = serde_json::from_str::<Value>(line).ok().as_ref().and_then(totals);
        (render(line), usage)
    })
}

/// The readable lines of one output line (none: nothing worth a line).
pub fn render(line: &str) -> Vec<String> {
    let Ok(ev) = serde_json::from_str::<Value>(line) else {
        return if line.trim().is_empty() { Vec::new() } else { vec![line.to_string()] };
    };
    let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
    let blocks = || ev["message"]["content"].as_array().cloned().unwrap_or_default();
    match s(&ev, "type").as_str() {
        "system" if s(&ev, "subtype") == "init" => {
            vec![format!("claude session {} turn started", s(&ev, "session_id"))]
        }
        "assistant" => blocks()
            .iter()
            .filter_map(|b| match b["type"].as_str() {
                Some("text") => Some(format!("assistant: {}", cut(&s(b, "text")))),
                Some("tool_use") => Some(format!("tool {}: {}", s(b, "name"), cut(&tool_input(&b["input"])))),
                _ => None,
            })
            .collect(),
        "user" => blocks()
            .iter()
            .filter(|b| b["type"] == "tool_result")
            .map(|b| {
                let text = match &b["content"] {
                    Value::String(t) => t.clone(),
                    c => result_text(&serde_json::json!({ "content": c })),
                };
                let how = if b["is_error"] == true { "error" } else { "ok" };
                format!("result {how}: {}", cut(&text))
            })
            .collect(),
        "result" => {
            let how = if ev["is_error"] == true { "error" } else { "ok" };
            let mut lines =
                vec![format!("turn end ({how}, {}): {}", s(&ev, "terminal_reason"), cut(&s(&ev, "result")))];
            if let Some(u) = usage(&ev) {
                lines.push(u);
            }
            lines
        }
        _ => Vec::new(),
    }
}

/// A tool's input: a shell command as it is, anything else as JSON.
fn tool_input(input: &Value) -> String {
    match input.get("command").and_then(Value::as_str) {
        Some(c) => c.to_string(),
        None => compact(input),
    }
}

/// The session's usage so far, from a `result`: `modelUsage` summed over the models (its
/// `usage` holds only this turn, and after a budget error only the last request) and
/// `total_cost_usd`.
fn totals(ev: &Value) -> Option<Totals> {
    if ev["type"] != "result" {
        return None;
    }
    let models = ev.get("modelUsage")?.as_object()?;
    let sum = |k: &str| models.values().map(|m| m[k].as_i64().unwrap_or(0)).sum::<i64>();
    Some(Totals {
        input: sum("inputTokens"),
        output: sum("outputTokens"),
        cache_read: sum("cacheReadInputTokens"),
        cache_write: sum("cacheCreationInputTokens"),
        cost: ev["total_cost_usd"].as_f64(),
    })
}

/// [`totals`] as a log line.
fn usage(ev: &Value) -> Option<String> {
    Some(totals(ev)?.line())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_turn_reads_as_text_tool_call_result_and_end_with_usage() {
        let a = r#"{"type":"assistant","message":{"content":[{"type":"text","text":"Working."},{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"echo hi","description":"say hi"}}]}}"#;
        assert_eq!(render(a), ["assistant: Working.", "tool Bash: echo hi"]);
        let u = r#"{"type":"user","message":{"content":[{"tool_use_id":"t1","type":"tool_result","content":"hi","is_error":false}]}}"#;
        assert_eq!(render(u), ["result ok: hi"]);
        let r = r#"{"type":"result","is_error":false,"result":"Done.","terminal_reason":"completed","total_cost_usd":0.0016,"modelUsage":{"m":{"inputTokens":200,"outputTokens":40,"cacheReadInputTokens":5,"cacheCreationInputTokens":7}}}"#;
        assert_eq!(
            render(r),
            [
                "turn end (ok, completed): Done.",
                "usage (session so far): 200 input, 40 output, 5 cache read, 7 cache write tokens, $0.001600"
            ]
        );
    }

    #[test]
    fn mcp_results_and_other_lines() {
        let u = r#"{"type":"user","message":{"content":[{"type":"tool_result","content":[{"type":"text","text":"pong"}],"is_error":true}]}}"#;
        assert_eq!(render(u), ["result error: pong"]);
        let t = r#"{"type":"assistant","message":{"content":[{"type":"tool_use","name":"mcp__coordd__ask","input":{"summary":"Which db?"}}]}}"#;
        assert_eq!(render(t), [r#"tool mcp__coordd__ask: {"summary":"Which db?"}"#]);
        assert!(render(r#"{"type":"command_lifecycle","state":"queued"}"#).is_empty());
        assert_eq!(render("Error parsing input"), ["Error parsing input"]);
    }
}
