//! `coord-launch --codex-log`: the filter a Codex session's output goes through on its way
//! to the log. Codex runs with `exec --json`, whose events say what `exec`'s text output
//! leaves out: each MCP call's arguments and result, each command's exit code and output.
//! Each event becomes one readable line with the time it arrived, its texts cut short;
//! anything that is not an event (Codex's own stderr) is kept as it is, timestamped too.
//! The raw events are kept beside the log, and each turn's usage is recorded.

use std::path::Path;

use serde_json::Value;

use crate::transcript::{Totals, compact, cut, filter, result_text};

/// Filter stdin to stdout until stdin ends, keeping every line in `raw` when given. At
/// each `turn.completed` its usage (the thread's so far) is recorded with `launch.usage`
/// for the session in `COORD_FILTER_SESSION`.
pub fn run(raw: Option<&Path>) -> std::io::Result<()> {
    filter(raw, |line| {
        let usage = serde_json::from_str::<Value>(line).ok().as_ref().and_then(turn_usage);
        let mut texts: Vec<String> = render(line).into_iter().collect();
        texts.extend(usage.map(|t| t.line()));
        (texts, usage)
    })
}

/// The thread's usage so far from a `turn.completed`.
fn turn_usage(ev: &Value) -> Option<Totals> {
    if ev["type"] != "turn.completed" {
        return None;
    }
    usage_of(&ev["usage"], ["input_tokens", "cached_input_tokens", "cache_write_input_tokens", "output_tokens"])
}

/// Codex's usage figures (named `[input, cached, cache write, output]`) in the four
/// columns: its input counts cached reads and writes too
/// (docs/live-sessions-research.md §3). Codex reports no cost.
pub(crate) fn usage_of(u: &Value, [input, cached, written, output]: [&str; 4]) -> Option<Totals> {
    let n = |k: &str| u.get(k).and_then(Value::as_i64);
    let (cache_read, cache_write) = (n(cached).unwrap_or(0), n(written).unwrap_or(0));
    Some(Totals {
        input: (n(input)? - cache_read - cache_write).max(0),
        output: n(output)?,
        cache_read,
        cache_write,
        cost: None,
    })
}

/// One line of Codex's output as the log shows it (`None`: nothing worth a line).
pub fn render(line: &str) -> Option<String> {
    let Ok(ev) = serde_json::from_str::<Value>(line) else {
        return (!line.trim().is_empty()).then(|| line.to_string());
    };
    let Some(kind) = ev.get("type").and_then(Value::as_str) else { return Some(line.to_string()) };
    let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
    Some(match kind {
        "thread.started" => format!("codex thread {} started", s(&ev, "thread_id")),
        "turn.started" => "turn started".to_string(),
        "turn.completed" => {
            let u = &ev["usage"];
            format!("turn completed: {} tokens in, {} out", u["input_tokens"], u["output_tokens"])
        }
        "turn.failed" => format!("turn failed: {}", cut(&s(&ev["error"], "message"))),
        "error" => format!("error: {}", cut(&s(&ev, "message"))),
        "item.started" | "item.updated" | "item.completed" => return item(&ev["item"], kind == "item.completed"),
        _ => cut(line),
    })
}

/// One message of `codex app-server` (JSON-RPC, live sessions: codex_live.rs) as the log
/// shows it: its items are those of `exec --json` in camelCase, rendered the same way.
pub fn render_app(msg: &Value) -> Option<String> {
    let p = &msg["params"];
    let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
    Some(match msg.get("method")?.as_str()? {
        "thread/started" => format!("codex thread {} started", s(&p["thread"], "id")),
        "turn/started" => "turn started".to_string(),
        "turn/completed" => match p["turn"].get("error").filter(|e| !e.is_null()) {
            Some(e) => format!("turn {}: {}", s(&p["turn"], "status"), cut(&s(e, "message"))),
            None => format!("turn {}", s(&p["turn"], "status")),
        },
        "error" => format!("error: {}", cut(&s(&p["error"], "message"))),
        m @ ("item/started" | "item/completed") => {
            let it = &p["item"];
            if it["type"] == "userMessage" {
                return (m == "item/started").then(|| format!("user: {}", cut(&result_text(it))));
            }
            return item(&exec_item(it), m == "item/completed");
        }
        _ => return None,
    })
}

/// An app-server item in the shape of an `exec --json` one (`commandExecution` →
/// `command_execution`, `aggregatedOutput` → `aggregated_output`, ...).
fn exec_item(it: &Value) -> Value {
    let snake = |k: &str| {
        k.chars().fold(String::new(), |mut o, c| {
            if c.is_ascii_uppercase() {
                o.push('_');
            }
            o.push(c.to_ascii_lowercase());
            o
        })
    };
    let Some(fields) = it.as_object() else { return it.clone() };
    let mut out = serde_json::Map::new();
    for (k, v) in fields {
        let v = match (k.as_str(), v.as_str()) {
            ("type", Some(t)) => Value::String(snake(t)),
            _ => v.clone(),
        };
        out.insert(snake(k), v);
    }
    Value::Object(out)
}

/// An item's line: when it starts (what is asked) and when it completes (what came back).
fn item(it: &Value, completed: bool) -> Option<String> {
    let s = |k: &str| it.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
    let kind = s("type");
    let line = match (kind.as_str(), completed) {
        ("agent_message", true) => format!("codex: {}", cut(&s("text"))),
        ("reasoning", true) => format!("reasoning: {}", cut(&s("text"))),
        ("error", true) => format!("warning: {}", cut(&s("message"))),
        ("command_execution", false) => format!("exec {}", cut(&s("command"))),
        ("command_execution", true) => {
            let code = it.get("exit_code").filter(|c| !c.is_null()).map_or("?".to_string(), Value::to_string);
            format!("exec exit {code} ({}): {}", s("status"), cut(&s("aggregated_output")))
        }
        ("mcp_tool_call", false) => {
            format!("mcp {}/{} {}", s("server"), s("tool"), cut(&compact(&it["arguments"])))
        }
        ("mcp_tool_call", true) => {
            let what = match it.get("error").filter(|e| !e.is_null()) {
                Some(e) => format!("error {}", cut(&compact(e))),
                None => format!("-> {}", cut(&result_text(&it["result"]))),
            };
            format!("mcp {}/{} ({}) {what}", s("server"), s("tool"), s("status"))
        }
        ("file_change", true) => format!("file change ({}): {}", s("status"), cut(&compact(&it["changes"]))),
        (_, false) => return None,
        (other, true) => format!("{other}: {}", cut(&compact(it))),
    };
    Some(line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::MAX_TEXT;

    #[test]
    fn mcp_calls_show_their_arguments_and_results() {
        let started = r#"{"type":"item.started","item":{"id":"i","type":"mcp_tool_call","server":"coordd","tool":"ask","arguments":{"question":"Which db?"},"result":null,"error":null,"status":"in_progress"}}"#;
        assert_eq!(render(started).unwrap(), r#"mcp coordd/ask {"question":"Which db?"}"#);
        let done = r#"{"type":"item.completed","item":{"id":"i","type":"mcp_tool_call","server":"coordd","tool":"ask","arguments":{},"result":{"content":[{"type":"text","text":"SQLite"}]},"error":null,"status":"completed"}}"#;
        assert_eq!(render(done).unwrap(), "mcp coordd/ask (completed) -> SQLite");
    }

    #[test]
    fn commands_show_their_exit_code_and_output_cut_short() {
        let long = "x".repeat(MAX_TEXT + 10);
        let done = format!(
            r#"{{"type":"item.completed","item":{{"type":"command_execution","command":"ls","aggregated_output":"a\n{long}","exit_code":2,"status":"failed"}}}}"#
        );
        let line = render(&done).unwrap();
        assert!(line.starts_with("exec exit 2 (failed): a\\nxxx"), "{line}");
        assert!(line.ends_with("(13 more characters)"), "{line}");
    }

    #[test]
    fn a_turns_usage_is_the_threads_with_cached_input_apart() {
        let v = serde_json::json!({"type": "turn.completed", "usage": {"input_tokens": 3010, "cached_input_tokens": 2300, "cache_write_input_tokens": 50, "output_tokens": 82}});
        let t = turn_usage(&v).unwrap();
        assert_eq!((t.input, t.output, t.cache_read, t.cache_write), (660, 82, 2300, 50));
        assert!(turn_usage(&serde_json::json!({"type": "turn.started"})).is_none());
    }

    #[test]
    fn app_server_items_read_as_exec_ones() {
        let v = |t: &str| serde_json::from_str::<Value>(t).unwrap();
        let started = v(
            r#"{"method":"item/started","params":{"item":{"type":"commandExecution","id":"c1","command":"/bin/bash -lc 'ls'","processId":"7","status":"inProgress","aggregatedOutput":null,"exitCode":null}}}"#,
        );
        assert_eq!(render_app(&started).unwrap(), "exec /bin/bash -lc 'ls'");
        let done = v(
            r#"{"method":"item/completed","params":{"item":{"type":"commandExecution","id":"c1","command":"ls","status":"completed","aggregatedOutput":"a\n","exitCode":0}}}"#,
        );
        assert_eq!(render_app(&done).unwrap(), "exec exit 0 (completed): a");
        let user = v(
            r#"{"method":"item/started","params":{"item":{"type":"userMessage","id":"u","content":[{"type":"text","text":"Use SQLite"}]}}}"#,
        );
        assert_eq!(render_app(&user).unwrap(), "user: Use SQLite");
        let failed = v(
            r#"{"method":"turn/completed","params":{"turn":{"id":"t","status":"failed","error":{"message":"boom"}}}}"#,
        );
        assert_eq!(render_app(&failed).unwrap(), "turn failed: boom");
        assert_eq!(render_app(&v(r#"{"method":"thread/tokenUsage/updated","params":{}}"#)), None);
    }

    #[test]
    fn what_is_not_an_event_is_kept() {
        assert_eq!(render("Reading additional input from stdin...").unwrap(), "Reading additional input from stdin...");
        assert_eq!(render("  "), None);
        assert_eq!(render(r#"{"type":"turn.started"}"#).unwrap(), "turn started");
    }
}
