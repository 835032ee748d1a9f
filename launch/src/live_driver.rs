//! What the drivers of live agent sessions share (codex_live.rs, opencode_live.rs): the
//! session's process is the driver, its stdin the session's feed (the `command` client's
//! JSON lines, feed.rs), its stdout the log. Here: a log line with its time, the feed read as
//! turns on a thread of its own, a child's stderr copied into the log, and how the bridge
//! wraps a session's command in a driver.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;

use serde_json::Value;

/// A line in the log, with its time.
pub fn say(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{} {text}", coord_client::ids::now_rfc3339());
    let _ = out.flush();
}

/// A turn of the feed.
pub struct Turn {
    pub id: String,
    pub kind: String,
    pub text: String,
}

/// Read the feed on stdin, on a thread of its own: each turn to `to`, then `None` at its
/// end (the attempt is finished). A line that is not a turn is said and passed over.
pub fn read_feed(to: impl Fn(Option<Turn>) + Send + 'static) {
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines().map_while(Result::ok) {
            match serde_json::from_str::<Value>(&line) {
                Ok(t) if t["type"] == "turn" => {
                    let s = |k: &str| t[k].as_str().unwrap_or_default().to_string();
                    to(Some(Turn { id: s("id"), kind: s("kind"), text: s("text") }));
                }
                _ => say(&format!("feed: not a turn, passed over: {}", crate::transcript::cut(&line))),
            }
        }
        to(None);
    });
}

/// Copy a child's output (its stderr) into the log, a line at a time, on a thread of its own.
pub fn log_lines(from: impl Read + Send + 'static) {
    std::thread::spawn(move || {
        for line in BufReader::new(from).lines().map_while(Result::ok).filter(|l| !l.trim().is_empty()) {
            say(&line);
        }
    });
}

/// Wrap a live session's command in its driver (`coord-launch FLAG RAW -- COMMAND…`), which
/// keeps the client's raw output in `raw` and writes the log itself (no output filter).
pub fn wrap(spec: &mut crate::process::Spec, me: &str, flag: &str, raw: &Path) {
    let mut args = vec![flag.to_string(), raw.display().to_string(), "--".to_string(), spec.program.clone()];
    args.append(&mut spec.args);
    spec.program = me.to_string();
    spec.args = args;
    spec.filter = None;
}
