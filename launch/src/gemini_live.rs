//! `coord-launch --gemini-live RAW --gemini-inbox INBOX -- GEMINI --acp ARGS…`: the driver
//! of a live Gemini CLI session (docs/live-sessions.md, "Gemini CLI"). It is the session's
//! process: its stdin is the session's feed (the `command` client's JSON lines, feed.rs),
//! and it runs `gemini --acp` (the Agent Client Protocol: JSON-RPC lines over stdio) as its
//! child. It creates one session (`initialize`, `session/new` in the worktree) and writes
//! each turn of the feed into it as a `session/prompt`, one at a time: a turn that comes
//! while a prompt runs waits in a queue (a second `session/prompt` would abort the running
//! one). Permission requests go through the lead's gate (gemini_gate.rs); a denial's
//! reason comes to the model as the next prompt. At the feed's end it waits until no
//! prompt runs or waits, then closes Gemini's input (which ends it) and exits with its
//! status. Gemini's output is kept as it is in RAW (beside the log) and becomes readable
//! log lines; each prompt's tokens (ACP reports tokens, not cost) add to the session's
//! usage, recorded by the driver's output filter (live_io.rs). If Gemini ends on its own, the driver says which
//! tool calls were running and exits non-zero, so the attempt fails with them in its log's
//! last lines.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::gemini_gate::{self, Verdict};
use crate::live_io::{self, say};
use crate::transcript::{Totals, compact, cut};

/// What the driver's loop hears about.
enum Msg {
    /// A turn from the feed: its kind and text.
    Turn(String, String),
    /// The feed ended: the attempt is finished.
    InputEnd,
    /// A message from Gemini (a response, a notification or a request).
    Server(Value),
    /// Gemini's output ended.
    ServerEnd,
    /// The gate's verdict on a permission request: the request's id, its offered options
    /// and the call's title.
    Decided(Value, Value, String, Verdict),
}

/// Run the session; its exit status.
pub fn run(raw: &Path, inbox: &str, command: &[String]) -> std::io::Result<i32> {
    let (tx, rx) = mpsc::channel();
    let mut child = live_io::spawn(command, raw, tx.clone(), Msg::Server, Msg::ServerEnd)?;
    let turn = |t: &Value| Msg::Turn(s(t, "kind"), s(t, "text"));
    live_io::read_feed(tx.clone(), turn, Msg::InputEnd);
    let cwd = std::env::current_dir()?;
    let mut d = Driver::new(child.stdin.take().expect("piped"), tx, cwd.clone(), inbox.to_string());
    let caps = json!({"fs": {"readTextFile": false, "writeTextFile": false}, "terminal": false});
    // A write Gemini cannot take (it ended, or its input broke) ends the session as a
    // crash: the log says so and names the unfinished tool calls.
    let mut wrote = d.request("initialize", json!({"protocolVersion": 1, "clientCapabilities": caps}));
    let crashed = loop {
        if let Err(e) = wrote {
            say(&format!("cannot write to gemini --acp: {e}"));
            let _ = child.kill();
            break true;
        }
        let Ok(msg) = rx.recv() else { break true };
        wrote = match msg {
            Msg::Turn(kind, text) => {
                say(&format!("turn ({kind}): {}", cut(&text)));
                d.queued.push_back(text);
                d.next_prompt()
            }
            Msg::InputEnd => {
                say("feed ended: the session ends once idle");
                d.input_open = false;
                Ok(())
            }
            Msg::Server(v) => d.heard(v),
            Msg::ServerEnd => break true,
            Msg::Decided(id, options, title, v) => d.decided(id, &options, &title, v),
        };
        if wrote.is_ok() && d.finished() {
            break false;
        }
    };
    d.rpc.close();
    if !crashed {
        return end(child);
    }
    let status = child.wait()?;
    let (code, how) = (live_io::code(status), live_io::how(status));
    say(&format!("gemini --acp ended ({how}) before its session was over"));
    for call in d.calls.values() {
        say(&format!("unfinished tool call: {call}"));
    }
    Ok(if code == 0 { 1 } else { code })
}

/// How long Gemini may take to end once its input is closed.
const END_GRACE: Duration = Duration::from_secs(2);

/// End a Gemini whose session is over (its input closed): its status. Gemini 0.61 closes
/// the connection at end-of-file and runs its exit cleanup, but its process stays while
/// the MCP servers it started run (and a SIGTERM does not end it either); past
/// [`END_GRACE`] it and everything below it are killed, and the session still ends
/// cleanly (0): its work was over.
fn end(mut child: Child) -> std::io::Result<i32> {
    let pid = child.id() as i32;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait());
    });
    match rx.recv_timeout(END_GRACE) {
        Ok(status) => Ok(live_io::code(status?)),
        Err(_) => {
            say(&format!(
                "gemini --acp did not end {END_GRACE:?} after its input closed: killed, with its MCP servers"
            ));
            let mut all = vec![pid];
            all.extend(below(pid));
            for p in all {
                // SAFETY: kill sends a signal to one process: our child (not yet reaped:
                // its waiter is blocked on it) or a process below it.
                unsafe { libc::kill(p, libc::SIGKILL) };
            }
            let _ = rx.recv();
            Ok(0)
        }
    }
}

/// Every process below `pid` (read from `/proc`).
fn below(pid: i32) -> Vec<i32> {
    let children = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
    let direct: Vec<i32> = children.split_whitespace().filter_map(|c| c.parse().ok()).collect();
    direct.iter().flat_map(|c| std::iter::once(*c).chain(below(*c))).collect()
}

/// The state of the conversation with Gemini.
struct Driver {
    rpc: live_io::Rpc,
    /// Where the gate's verdicts come back.
    tx: mpsc::Sender<Msg>,
    cwd: PathBuf,
    inbox: String,
    /// The ACP session, once made.
    session: Option<String>,
    /// Prompts not yet sent: the session is not there yet, or a prompt runs.
    queued: VecDeque<String>,
    /// A `session/prompt` is running.
    prompting: bool,
    /// Permission requests the gate is deciding.
    deciding: usize,
    input_open: bool,
    /// The assistant's text of the turn so far (it arrives in chunks).
    text: String,
    /// Tool calls started and not finished, by id: their log line.
    calls: HashMap<String, String>,
    usage: Totals,
}

impl Driver {
    fn new(stdin: ChildStdin, tx: mpsc::Sender<Msg>, cwd: PathBuf, inbox: String) -> Driver {
        Driver {
            rpc: live_io::Rpc::new(stdin, true),
            tx,
            cwd,
            inbox,
            session: None,
            queued: VecDeque::new(),
            prompting: false,
            deciding: 0,
            input_open: true,
            text: String::new(),
            calls: HashMap::new(),
            usage: Totals::default(),
        }
    }

    fn send(&mut self, v: Value) -> std::io::Result<()> {
        self.rpc.send(v)
    }

    fn request(&mut self, method: &'static str, params: Value) -> std::io::Result<()> {
        self.rpc.request(method, params)
    }

    /// Send the next queued prompt when the session is there and idle.
    fn next_prompt(&mut self) -> std::io::Result<()> {
        let Some(session) = self.session.clone().filter(|_| !self.prompting) else { return Ok(()) };
        let Some(text) = self.queued.pop_front() else { return Ok(()) };
        self.prompting = true;
        self.request("session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}))
    }

    /// The session is over: the feed ended, every turn was taken and none runs.
    fn finished(&self) -> bool {
        !self.input_open && self.session.is_some() && self.queued.is_empty() && !self.prompting && self.deciding == 0
    }

    /// A message from Gemini.
    fn heard(&mut self, v: Value) -> std::io::Result<()> {
        let method = v.get("method").and_then(Value::as_str).map(str::to_string);
        match (method, v.get("id").cloned()) {
            (None, Some(id)) => self.answered(id.as_u64().unwrap_or(0), &v),
            (Some(m), Some(id)) if m == "session/request_permission" => {
                self.permission(id, &v["params"]);
                Ok(())
            }
            // Other requests (files, terminals: not offered in `initialize`) are refused.
            (Some(m), Some(id)) => {
                say(&format!("gemini asked {m}: refused (not offered to it)"));
                let err = json!({"code": -32601, "message": format!("coord-launch does not handle {m}")});
                self.send(json!({"id": id, "error": err}))
            }
            (Some(m), None) => {
                if m == "session/update" {
                    self.update(&v["params"]["update"]);
                }
                Ok(())
            }
            (None, None) => Ok(()),
        }
    }

    fn answered(&mut self, id: u64, v: &Value) -> std::io::Result<()> {
        let Some(method) = self.rpc.asked.remove(&id) else { return Ok(()) };
        self.flush_text();
        if let Some(e) = v.get("error") {
            say(&format!("gemini refused {method}: {}", compact(e)));
            return match method {
                // A failed prompt (the model's error): the session goes on with the next.
                "session/prompt" => {
                    self.prompting = false;
                    self.next_prompt()
                }
                _ => Err(std::io::Error::other(format!("gemini --acp refused {method}"))),
            };
        }
        let r = &v["result"];
        match method {
            "initialize" => {
                let cwd = self.cwd.clone();
                self.request("session/new", json!({"cwd": cwd, "mcpServers": []}))
            }
            "session/new" => {
                self.session = r["sessionId"].as_str().map(str::to_string);
                say(&format!("gemini session {} started", self.session.as_deref().unwrap_or("?")));
                self.next_prompt()
            }
            "session/prompt" => {
                self.prompting = false;
                say(&format!("turn end ({})", r["stopReason"].as_str().unwrap_or("?")));
                self.report(&r["_meta"]["quota"]["token_count"]);
                self.next_prompt()
            }
            _ => Ok(()),
        }
    }

    /// A `session/update`, as log lines.
    fn update(&mut self, u: &Value) {
        let kind = u["sessionUpdate"].as_str().unwrap_or_default();
        if kind == "agent_message_chunk" {
            self.text.push_str(u["content"]["text"].as_str().unwrap_or_default());
            return;
        }
        let id = u["toolCallId"].as_str().unwrap_or_default().to_string();
        match kind {
            "tool_call" => {
                self.flush_text();
                let line = call_line(u);
                say(&line);
                self.calls.insert(id, line);
            }
            "tool_call_update" if matches!(u["status"].as_str(), Some("completed" | "failed")) => {
                self.flush_text();
                self.calls.remove(&id);
                say(&format!("result {}: {}", u["status"].as_str().unwrap_or_default(), cut(&content_text(u))));
            }
            _ => {}
        }
    }

    fn flush_text(&mut self) {
        if !self.text.is_empty() {
            say(&format!("assistant: {}", cut(&std::mem::take(&mut self.text))));
        }
    }

    /// A permission request: the gate decides it on a thread of its own (a gated call
    /// waits for its approver while the session's other messages go on).
    fn permission(&mut self, id: Value, p: &Value) {
        self.flush_text();
        let call = p["toolCall"].clone();
        let line = call_line(&call);
        say(&format!("{line} (asks permission)"));
        self.calls.insert(call["toolCallId"].as_str().unwrap_or_default().to_string(), line);
        self.deciding += 1;
        let (tx, cwd, session) = (self.tx.clone(), self.cwd.clone(), self.session.clone().unwrap_or_default());
        let (options, handler) = (p["options"].clone(), gemini_gate::handler(&self.inbox));
        std::thread::spawn(move || {
            let title = call["title"].as_str().unwrap_or_default().to_string();
            let v = gemini_gate::decide(handler, &call, &cwd, &session);
            let _ = tx.send(Msg::Decided(id, options, title, v));
        });
    }

    /// The gate's verdict back to Gemini; a denial's reason is the model's next prompt
    /// (ACP tells the model only that the call was cancelled).
    fn decided(&mut self, id: Value, options: &Value, title: &str, v: Verdict) -> std::io::Result<()> {
        self.deciding -= 1;
        match &v {
            Verdict::Allow => say(&format!("permission: allowed `{}`", cut(title))),
            Verdict::Deny(why) => {
                say(&format!("permission: denied `{}`: {}", cut(title), cut(why)));
                let text = format!("[permission] Your tool call `{title}` was not run. {why}");
                self.queued.push_front(text);
            }
        }
        self.send(json!({"id": id, "result": gemini_gate::outcome(options, &v)}))?;
        self.next_prompt()
    }

    /// Add a prompt's tokens to the session's and hand them to the output filter, which
    /// records them ([`live_io::report_usage`]).
    fn report(&mut self, tokens: &Value) {
        let n = |k: &str| tokens[k].as_i64().unwrap_or(0);
        let (input, output) = (n("input_tokens"), n("output_tokens"));
        if input == 0 && output == 0 {
            return;
        }
        self.usage.input += input;
        self.usage.output += output;
        live_io::report_usage(&self.usage);
    }
}

/// A string field of a JSON object (empty when absent).
fn s(v: &Value, k: &str) -> String {
    v[k].as_str().unwrap_or_default().to_string()
}

/// A tool call's log line: `tool KIND: TITLE`.
fn call_line(c: &Value) -> String {
    format!("tool {}: {}", c["kind"].as_str().unwrap_or("other"), cut(c["title"].as_str().unwrap_or_default()))
}

/// The text of a tool call update's content (texts, and the paths of diffs).
fn content_text(u: &Value) -> String {
    let parts = u["content"].as_array().into_iter().flatten();
    let texts: Vec<String> = parts
        .filter_map(|c| match c["type"].as_str() {
            Some("content") => c["content"]["text"].as_str().map(str::to_string),
            Some("diff") => c["path"].as_str().map(|p| format!("diff {p}")),
            _ => None,
        })
        .collect();
    texts.join(" ")
}

/// Wrap a live Gemini session's command (`gemini --acp …`, client.rs) in this driver,
/// keeping Gemini's raw output in `raw`; `inbox` runs the permission gate.
pub fn wrap(spec: &mut crate::process::Spec, me: &str, inbox: &str, raw: &Path) {
    let flags = ["--gemini-live", &raw.display().to_string(), "--gemini-inbox", inbox].map(String::from);
    live_io::wrap(spec, me, flags.into());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_calls_result_reads_as_its_texts_and_diffs() {
        let u = json!({"sessionUpdate": "tool_call_update", "status": "completed", "content": [
            {"type": "content", "content": {"type": "text", "text": "pushed"}},
            {"type": "diff", "path": "/w/a.txt", "oldText": "", "newText": "x"}]});
        assert_eq!(content_text(&u), "pushed diff /w/a.txt");
        let c = json!({"toolCallId": "c", "kind": "execute", "title": "git status"});
        assert_eq!(call_line(&c), "tool execute: git status");
    }
}
