//! The agent CLIs launched one-shot beside Claude Code and Codex: opencode
//! ([`opencode`]: `opencode run --format json`) and Gemini CLI ([`gemini`]: `gemini -p …
//! -o stream-json`). Each module gives the session's command line and environment, and
//! reads its JSON stream for the log (`coord-launch --client-log CLIENT`, the filter each
//! session's output goes through): readable lines, and the usage the stream reports,
//! recorded with `launch.usage` as Claude Code's is (`claude_log`).
//!
//! One-shot, the session gets the task's prompt and runs until it ends its turn
//! (docs/agent-hooks.md, "opencode" and "Gemini CLI"). Both also have a live mode, each
//! under a driver that writes its own log lines: `gemini --acp` (gemini_live.rs), and
//! opencode's own `opencode serve` (opencode_live.rs), whose events are rendered with
//! [`opencode::Log`] too.

pub mod gemini;
pub mod opencode;

use std::cell::RefCell;

use serde_json::Value;

use crate::transcript::Totals;

/// What a client's stream reader does with each line.
pub trait Stream {
    /// The readable lines of one output line (none: nothing worth a line).
    fn render(&mut self, ev: &Value) -> Vec<String>;
    /// The session's usage so far, when this line changes it.
    fn totals(&mut self, ev: &Value) -> Option<Totals>;
}

/// Filter stdin to stdout until stdin ends, for the client named `kind`
/// ([`crate::transcript::filter`]: its usage recorded with `launch.usage`).
pub fn log(kind: &str) -> std::io::Result<()> {
    let stream: Box<dyn Stream> = match kind {
        "opencode" => Box::<opencode::Log>::default(),
        "gemini" => Box::<gemini::Log>::default(),
        other => return Err(std::io::Error::other(format!("no log filter for client '{other}'"))),
    };
    let stream = RefCell::new(stream);
    crate::transcript::filter(None, |line| match serde_json::from_str::<Value>(line) {
        Ok(ev) if ev.is_object() => {
            let mut stream = stream.borrow_mut();
            let mut texts = stream.render(&ev);
            let usage = stream.totals(&ev);
            texts.extend(usage.map(|u| u.line()));
            (texts, usage)
        }
        _ if line.trim().is_empty() => (Vec::new(), None),
        _ => (vec![line.to_string()], None),
    })
}

/// A string field of a JSON object (empty when absent).
fn s(v: &Value, k: &str) -> String {
    v.get(k).and_then(Value::as_str).unwrap_or_default().to_string()
}

/// An integer field (0 when absent).
fn n(v: &Value, k: &str) -> i64 {
    v.get(k).and_then(Value::as_i64).unwrap_or(0)
}
