//! `coord-launch --command-log RAW`: the filter a `command` session's output (live or
//! one-shot) goes through on its way to the log (docs/live-sessions.md, "The `command`
//! client's transcript"). A program may write JSON lines of its own on stdout:
//! `text`, `tool`, `result`, `error` and `usage` (its totals so far). Each becomes a readable
//! line as Claude Code's and Codex's events do, and `usage` is recorded with `launch.usage`;
//! the lines are kept as they are in `RAW` beside the log. Any other line (plain text, a
//! JSON line of another `type`) is kept as it is, with its time.

use std::path::Path;

use serde_json::Value;

use crate::transcript::{Totals, compact, cut};

/// Filter stdin to stdout until stdin ends, keeping every line in `raw`.
pub fn run(raw: &Path) -> std::io::Result<()> {
    crate::transcript::filter(Some(raw), |line| {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            return (if line.trim().is_empty() { Vec::new() } else { vec![line.to_string()] }, None);
        };
        let usage = totals(&v);
        (vec![render(&v).unwrap_or_else(|| line.to_string())], usage)
    })
}

/// A line of the program's own output schema as the log shows it (`None`: not one).
fn render(v: &Value) -> Option<String> {
    let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
    Some(match v.get("type")?.as_str()? {
        "text" => format!("assistant: {}", cut(&s("text"))),
        "tool" => {
            let args = match &v["input"] {
                Value::String(t) => t.clone(),
                Value::Null => String::new(),
                other => compact(other),
            };
            format!("tool {}: {}", s("name"), cut(&args))
        }
        "result" => format!("result {}: {}", if v["ok"] == false { "error" } else { "ok" }, cut(&s("text"))),
        "error" => format!("error: {}", cut(&s("message"))),
        "usage" => totals(v)?.line(),
        _ => return None,
    })
}

/// A `usage` line: the session's totals so far.
fn totals(v: &Value) -> Option<Totals> {
    if v["type"] != "usage" {
        return None;
    }
    let n = |k: &str| v.get(k).and_then(Value::as_i64).unwrap_or(0);
    Some(Totals {
        input: n("input_tokens"),
        output: n("output_tokens"),
        cache_read: n("cache_read_tokens"),
        cache_write: n("cache_write_tokens"),
        cost: v.get("cost_usd").and_then(Value::as_f64),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_programs_lines_read_like_an_agents() {
        let v = |t: &str| serde_json::from_str::<Value>(t).unwrap();
        assert_eq!(render(&v(r#"{"type":"text","text":"Working."}"#)).unwrap(), "assistant: Working.");
        assert_eq!(
            render(&v(r#"{"type":"tool","name":"Bash","input":"inbox done"}"#)).unwrap(),
            "tool Bash: inbox done"
        );
        assert_eq!(
            render(&v(r#"{"type":"tool","name":"ask","input":{"summary":"Which db?"}}"#)).unwrap(),
            r#"tool ask: {"summary":"Which db?"}"#
        );
        assert_eq!(render(&v(r#"{"type":"result","ok":false,"text":"exit 2"}"#)).unwrap(), "result error: exit 2");
        assert_eq!(render(&v(r#"{"type":"error","message":"boom"}"#)).unwrap(), "error: boom");
        let u = v(r#"{"type":"usage","input_tokens":10,"output_tokens":2,"cost_usd":0.5}"#);
        assert_eq!(
            render(&u).unwrap(),
            "usage (session so far): 10 input, 2 output, 0 cache read, 0 cache write tokens, $0.500000"
        );
        assert_eq!(totals(&u).map(|t| (t.input, t.output, t.cost)), Some((10, 2, Some(0.5))));
        assert_eq!(render(&v(r#"{"type":"idle"}"#)), None);
    }
}
