//! `coord-launch --codex-live RAW -- CODEX app-server ARGS…`: the driver of a live Codex
//! session (docs/live-sessions.md, "Codex"). It is the session's process: its stdin is the
//! session's feed (the `command` client's JSON lines, feed.rs), and it runs `codex
//! app-server` (JSON-RPC over stdio) as its child. It starts one thread (`initialize`,
//! `hooks/list`, `thread/start` with the listed hooks trusted for that thread, approvals off,
//! no sandbox) and writes each turn of the feed into it with `turn/start` (which starts a
//! turn when the thread is idle and joins the running one otherwise). At the feed's end it
//! waits until no turn runs, then closes Codex's input (which ends it) and exits with its
//! status. Codex's output is kept as it is in RAW (beside the log) and becomes readable log
//! lines (codex_log.rs); at each turn's end the thread's usage so far is recorded with
//! `launch.usage`. If Codex ends on its own, the driver says which tool calls were running
//! and exits non-zero, so the attempt fails with them in its log's last lines.

use std::collections::{HashMap, HashSet};
use std::fs::OpenOptions;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{ChildStdin, Command, Stdio};
use std::sync::mpsc;

use serde_json::{Value, json};

use crate::codex_log::render_app;
use crate::live_driver::say;
use crate::transcript::{Reporter, Totals};

/// What the driver's loop hears about.
enum Msg {
    /// A turn from the feed: its id and text.
    Turn(String, String),
    /// The feed ended: the attempt is finished.
    InputEnd,
    /// A message from Codex (a response, a notification or a request).
    Server(Value),
    /// Codex's output ended.
    ServerEnd,
}

/// Run the session; its exit status.
pub fn run(raw: &Path, command: &[String]) -> std::io::Result<i32> {
    let (program, args) = command.split_first().ok_or_else(|| std::io::Error::other("--codex-live needs a command"))?;
    let mut child =
        Command::new(program).args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
    let (tx, rx) = mpsc::channel();
    let out = child.stdout.take().expect("piped");
    let mut keep = OpenOptions::new().create(true).append(true).open(raw)?;
    let server = tx.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(out).split(b'\n').map_while(Result::ok) {
            let _ = keep.write_all(&line).and_then(|()| keep.write_all(b"\n"));
            let text = String::from_utf8_lossy(&line);
            match serde_json::from_str::<Value>(&text) {
                Ok(v) => {
                    let _ = server.send(Msg::Server(v));
                }
                Err(_) if !text.trim().is_empty() => say(&text),
                Err(_) => {}
            }
        }
        let _ = server.send(Msg::ServerEnd);
    });
    crate::live_driver::log_lines(child.stderr.take().expect("piped"));
    crate::live_driver::read_feed(move |t| {
        let _ = tx.send(t.map_or(Msg::InputEnd, |t| Msg::Turn(t.id, t.text)));
    });
    let cwd = std::env::current_dir()?;
    let mut d = Driver::new(child.stdin.take().expect("piped"));
    d.request("initialize", json!({"clientInfo": {"name": "coord-launch", "version": env!("CARGO_PKG_VERSION")}}))?;
    let crashed = loop {
        let Ok(msg) = rx.recv() else { break true };
        match msg {
            Msg::Turn(id, text) => d.turn(id, text)?,
            Msg::InputEnd => d.input_open = false,
            Msg::Server(v) => d.heard(v, &cwd)?,
            Msg::ServerEnd => break true,
        }
        if d.finished() {
            break false;
        }
    };
    drop(d.stdin.take());
    let status = child.wait()?;
    let code = status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(0));
    if !crashed {
        return Ok(code);
    }
    let how = match status.signal() {
        Some(sig) => format!("killed by signal {sig}"),
        None => format!("exit {code}"),
    };
    say(&format!("codex app-server ended ({how}) before its session was over"));
    for call in d.calls.values() {
        say(&format!("unfinished tool call: {call}"));
    }
    Ok(if code == 0 { 1 } else { code })
}

/// The state of the conversation with Codex.
struct Driver {
    stdin: Option<ChildStdin>,
    next_id: u64,
    /// Requests sent and not answered, by id: their method.
    asked: HashMap<u64, &'static str>,
    /// The thread, once started.
    thread: Option<String>,
    /// Turns that came before the thread.
    queued: Vec<(String, String)>,
    /// Turns running; and those completed (a late `turn/start` response must not revive one).
    running: HashSet<String>,
    completed: HashSet<String>,
    input_open: bool,
    /// Tool calls started and not completed, by item id: their log line.
    calls: HashMap<String, String>,
    usage: Option<Totals>,
    reported: Option<Totals>,
    reporter: Reporter,
}

impl Driver {
    fn new(stdin: ChildStdin) -> Driver {
        Driver {
            stdin: Some(stdin),
            next_id: 0,
            asked: HashMap::new(),
            thread: None,
            queued: Vec::new(),
            running: HashSet::new(),
            completed: HashSet::new(),
            input_open: true,
            calls: HashMap::new(),
            usage: None,
            reported: None,
            reporter: Reporter::new(std::env::var(crate::process::SESSION_VAR).ok()),
        }
    }

    fn send(&mut self, v: &Value) -> std::io::Result<()> {
        let Some(s) = self.stdin.as_mut() else { return Ok(()) };
        s.write_all(format!("{v}\n").as_bytes())?;
        s.flush()
    }

    fn request(&mut self, method: &'static str, params: Value) -> std::io::Result<()> {
        self.next_id += 1;
        self.asked.insert(self.next_id, method);
        self.send(&json!({"id": self.next_id, "method": method, "params": params}))
    }

    /// A turn from the feed: into the thread, or queued until it is there.
    fn turn(&mut self, id: String, text: String) -> std::io::Result<()> {
        let Some(thread) = self.thread.clone() else {
            self.queued.push((id, text));
            return Ok(());
        };
        let params = json!({"threadId": thread, "input": [{"type": "text", "text": text}], "clientUserMessageId": id});
        self.request("turn/start", params)
    }

    /// The session is over: the feed ended, every turn was taken and none runs.
    fn finished(&self) -> bool {
        !self.input_open
            && self.thread.is_some()
            && self.queued.is_empty()
            && self.running.is_empty()
            && !self.asked.values().any(|m| *m == "turn/start")
    }

    /// A message from Codex.
    fn heard(&mut self, v: Value, cwd: &Path) -> std::io::Result<()> {
        let method = v.get("method").and_then(Value::as_str).map(str::to_string);
        let id = v.get("id").and_then(Value::as_u64);
        match (method, id) {
            // A response to one of ours.
            (None, Some(id)) => self.answered(id, &v, cwd),
            // A request of Codex's (approvals are off; nothing else is expected): refused.
            (Some(m), Some(_)) => {
                say(&format!("codex asked {m}: refused (the session runs unattended)"));
                let err = json!({"code": -32601, "message": format!("coord-launch does not handle {m}")});
                self.send(&json!({"id": v["id"], "error": err}))
            }
            (Some(m), None) => {
                self.notified(&m, &v);
                Ok(())
            }
            (None, None) => Ok(()),
        }
    }

    fn answered(&mut self, id: u64, v: &Value, cwd: &Path) -> std::io::Result<()> {
        let Some(method) = self.asked.remove(&id) else { return Ok(()) };
        if let Some(e) = v.get("error") {
            say(&format!("codex refused {method}: {}", crate::transcript::compact(e)));
            return match method {
                // Without hooks trusted the session still works, as without a `.codex/`.
                "hooks/list" => self.start_thread(&Value::Null, cwd),
                "turn/start" => Ok(()),
                _ => Err(std::io::Error::other(format!("codex app-server refused {method}"))),
            };
        }
        let r = &v["result"];
        match method {
            "initialize" => {
                self.send(&json!({"method": "initialized"}))?;
                self.request("hooks/list", json!({"cwds": [cwd]}))
            }
            "hooks/list" => self.start_thread(r, cwd),
            "thread/start" => {
                self.thread = r["thread"]["id"].as_str().map(str::to_string);
                for (id, text) in std::mem::take(&mut self.queued) {
                    self.turn(id, text)?;
                }
                Ok(())
            }
            "turn/start" => {
                if let Some(t) = r["turn"]["id"].as_str().filter(|t| !self.completed.contains(*t)) {
                    self.running.insert(t.to_string());
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// `thread/start` in `cwd`, unattended, with the hooks `hooks/list` returned trusted for
    /// this thread only (what `exec --dangerously-bypass-hook-trust` does; app-server
    /// refuses that flag).
    fn start_thread(&mut self, listed: &Value, cwd: &Path) -> std::io::Result<()> {
        let state: serde_json::Map<String, Value> = listed["data"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|d| d["hooks"].as_array().cloned().unwrap_or_default())
            .filter_map(|h| Some((h["key"].as_str()?.to_string(), json!({"trusted_hash": h["currentHash"]}))))
            .collect();
        let config = if state.is_empty() { Value::Null } else { json!({"hooks": {"state": state}}) };
        let params = json!({"cwd": cwd, "approvalPolicy": "never", "sandbox": "danger-full-access", "config": config});
        self.request("thread/start", params)
    }

    fn notified(&mut self, method: &str, v: &Value) {
        let p = &v["params"];
        if let Some(line) = render_app(v) {
            say(&line);
        }
        match method {
            "turn/started" => {
                if let Some(t) = p["turn"]["id"].as_str() {
                    self.running.insert(t.to_string());
                }
            }
            "turn/completed" => {
                if let Some(t) = p["turn"]["id"].as_str() {
                    self.running.remove(t);
                    self.completed.insert(t.to_string());
                }
                self.report();
            }
            "item/started" | "item/completed" => {
                let it = &p["item"];
                let tool = matches!(it["type"].as_str(), Some("commandExecution" | "mcpToolCall"));
                if let (true, Some(id)) = (tool, it["id"].as_str()) {
                    if method == "item/started" {
                        self.calls.insert(id.to_string(), render_app(v).unwrap_or_default());
                    } else {
                        self.calls.remove(id);
                    }
                }
            }
            "thread/tokenUsage/updated" => self.usage = totals(&p["tokenUsage"]["total"]),
            _ => {}
        }
    }

    /// Record the thread's usage so far, when it grew since the last report.
    fn report(&mut self) {
        let Some(t) = self.usage.filter(|t| Some(*t) != self.reported) else { return };
        say(&t.line());
        match self.reporter.send(t) {
            Ok(()) => self.reported = Some(t),
            Err(e) => say(&format!("usage not recorded: {e}")),
        }
    }
}

/// A Codex `TokenUsageBreakdown` (the thread's `total`) in the four columns.
fn totals(b: &Value) -> Option<Totals> {
    crate::codex_log::usage_of(b, ["inputTokens", "cachedInputTokens", "cacheWriteInputTokens", "outputTokens"])
}

/// Wrap a live Codex session's command (`codex app-server …`, client.rs) in this driver,
/// keeping Codex's raw output in `raw`.
pub fn wrap(spec: &mut crate::process::Spec, me: &str, raw: &Path) {
    crate::live_driver::wrap(spec, me, "--codex-live", raw);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_is_the_threads_total_with_cached_input_apart() {
        let b = json!({"totalTokens": 3092, "inputTokens": 3010, "cachedInputTokens": 2300, "cacheWriteInputTokens": 50, "outputTokens": 82});
        let t = totals(&b).unwrap();
        assert_eq!((t.input, t.output, t.cache_read, t.cache_write, t.cost), (660, 82, 2300, 50, None));
        assert!(totals(&json!({})).is_none());
    }
}
