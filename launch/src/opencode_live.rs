//! `coord-launch --opencode-live RAW -- OPENCODE serve --hostname 127.0.0.1 --port 0 ARGS…`:
//! the driver of a live opencode session (docs/live-sessions.md, "opencode"). It is the
//! session's process: its stdin is the session's feed (the `command` client's JSON lines,
//! feed.rs), and it runs `opencode serve` as its child, on a loopback port with a password
//! of its own (`OPENCODE_SERVER_PASSWORD`, fresh per session). It follows the server's event
//! stream (`GET /event`), creates one opencode session, and writes each turn of the feed
//! into it with `POST /session/ID/prompt_async` (idle, that starts a loop; busy, opencode
//! adds it to the running loop after the running tool). What opencode would ask about is
//! approved once, as `opencode run --auto` does. At the feed's end it waits until the
//! session is idle with every turn answered, stops the server (SIGTERM) and exits 0. The
//! events are kept as they are in RAW (beside the log) and become readable log lines as the
//! one-shot stream's do (clients/opencode.rs), with each step's usage and cost handed to
//! the driver's output filter (`--live-log`, live_io.rs), which records them. If the server
//! ends on its own, the driver says which tool calls were running and exits non-zero, so
//! the attempt fails with them in its log's last lines.

use std::collections::{HashMap, HashSet};
use std::fs::OpenOptions;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;

use serde_json::{Value, json};

use crate::clients::Stream;
use crate::clients::opencode::Log;
use crate::live_io::{self, say};
use crate::opencode_http::Server;
use crate::transcript::{Totals, cut};

/// The variable the bridge passes a live opencode session's model in (`PROVIDER/MODEL`):
/// `serve` takes no `--model`, each prompt names it.
pub const MODEL_VAR: &str = "COORD_OPENCODE_MODEL";

/// What the driver's loop hears about.
enum Msg {
    /// A turn from the feed: its kind and text.
    Turn(String, String),
    /// The feed ended: the attempt is finished.
    InputEnd,
    /// An event of the server's stream.
    Event(Value),
    /// The server's event stream or its output ended.
    ServerEnd,
}

/// Run the session; its exit status.
pub fn run(raw: &Path, command: &[String]) -> std::io::Result<i32> {
    let (program, args) =
        command.split_first().ok_or_else(|| std::io::Error::other("--opencode-live needs a command"))?;
    let password = crate::opencode_http::password()?;
    let model = std::env::var(MODEL_VAR).ok().filter(|m| !m.is_empty());
    let mut child = Command::new(program)
        .args(args)
        .env("OPENCODE_SERVER_PASSWORD", &password)
        .env_remove(MODEL_VAR)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    live_io::log_lines(child.stderr.take().expect("piped"));
    // "opencode server listening on http://127.0.0.1:PORT"
    let mut out = BufReader::new(child.stdout.take().expect("piped")).lines();
    let port = loop {
        match out.next() {
            Some(Ok(line)) => match line.rsplit(':').next().and_then(|p| p.trim().parse::<u16>().ok()) {
                Some(port) if line.contains("listening on") => break port,
                _ => say(&line),
            },
            _ => return Ok(ended(&mut child, "before it listened", &HashMap::new())),
        }
    };
    let (tx, rx) = mpsc::channel();
    let server = Server::new(port, &password);
    let events = match server.events() {
        Ok(events) => events,
        Err(e) => return Ok(unreachable(&mut child, "GET /event", &e)),
    };
    let mut keep = OpenOptions::new().create(true).append(true).open(raw)?;
    let to_loop = tx.clone();
    std::thread::spawn(move || {
        for ev in events {
            if ev["type"] != "server.heartbeat" {
                let _ = writeln!(keep, "{ev}");
            }
            let _ = to_loop.send(Msg::Event(ev));
        }
        let _ = to_loop.send(Msg::ServerEnd);
    });
    let to_loop = tx.clone();
    std::thread::spawn(move || {
        for line in out.map_while(Result::ok).filter(|l| !l.trim().is_empty()) {
            say(&line);
        }
        let _ = to_loop.send(Msg::ServerEnd);
    });
    let title = format!("coordd {} a{}", env("COORD_TASK"), env("COORD_ATTEMPT"));
    let (status, created) = match server.call("POST", "/session", &json!({ "title": title })) {
        Ok(r) => r,
        Err(e) => return Ok(unreachable(&mut child, "POST /session", &e)),
    };
    let Some(session) = created["id"].as_str().map(str::to_string) else {
        say(&format!("opencode refused a session: {status} {}", cut(&created.to_string())));
        stop(&mut child);
        return Ok(1);
    };
    say(&format!("opencode session {session} started (opencode serve on 127.0.0.1:{port})"));
    let s = |t: &Value, k: &str| t[k].as_str().unwrap_or_default().to_string();
    live_io::read_feed(tx, move |t| Msg::Turn(s(t, "kind"), s(t, "text")), Msg::InputEnd);
    let mut d = Driver::new(server, session, model);
    let crashed = loop {
        let Ok(msg) = rx.recv() else { break true };
        let asked = match msg {
            Msg::Turn(kind, text) => d.turn(&kind, &text),
            Msg::InputEnd => {
                d.input_open = false;
                Ok(())
            }
            Msg::Event(v) => d.heard(&v),
            Msg::ServerEnd => break true,
        };
        if let Err(e) = asked {
            say(&format!("opencode serve did not answer: {e}"));
            break true;
        }
        if d.finished() {
            break false;
        }
    };
    if crashed {
        return Ok(ended(&mut child, "before its session was over", &d.calls));
    }
    say("the session is over: stopping opencode serve");
    stop(&mut child);
    Ok(0)
}

fn env(k: &str) -> String {
    std::env::var(k).unwrap_or_default()
}

/// How long the server gets to end on SIGTERM before it is killed.
const STOP_GRACE_MS: i32 = 5_000;

/// Stop the server (SIGTERM, which it ends on; SIGKILL past [`STOP_GRACE_MS`]) and reap it.
fn stop(child: &mut Child) {
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: signals to our own child, which we have not reaped yet (so its pid is
        // still its own); pidfd_open and poll take plain values and a struct we own.
        unsafe {
            libc::kill(pid, libc::SIGTERM);
            let fd = libc::syscall(libc::SYS_pidfd_open, pid, 0) as i32;
            if fd >= 0 {
                let mut p = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
                if libc::poll(&mut p, 1, STOP_GRACE_MS) == 0 {
                    say("opencode serve did not end on SIGTERM: killed");
                    libc::kill(pid, libc::SIGKILL);
                }
                libc::close(fd);
            }
        }
    }
    let _ = child.wait();
}

/// The server did not answer `what` (`e`): stopped, the session failed (status 1).
fn unreachable(child: &mut Child, what: &str, e: &std::io::Error) -> i32 {
    say(&format!("opencode serve did not answer {what}: {e}"));
    stop(child);
    1
}

/// The server ended on its own (`when`): say how, and which tool calls were running; the
/// session's status (never 0).
fn ended(child: &mut Child, when: &str, calls: &HashMap<String, String>) -> i32 {
    // Its output ended first, or its event stream did: make sure it is gone.
    if let Ok(None) = child.try_wait() {
        stop(child);
    }
    let status = child.wait().ok();
    let how = status.map_or_else(|| "status unknown".to_string(), live_io::how);
    say(&format!("opencode serve ended ({how}) {when}"));
    for call in calls.values() {
        say(&format!("unfinished tool call: {call}"));
    }
    match status.map(live_io::code) {
        Some(0) | None => 1,
        Some(code) => code,
    }
}

/// The state of the conversation with the server.
struct Driver {
    server: Server,
    /// The session, and the sessions it started (subagents): their events are its too.
    session: String,
    ours: HashSet<String>,
    model: Option<Value>,
    input_open: bool,
    /// Turns written; user messages seen in the session; the newest user message and the
    /// newest completed assistant message (opencode's ids grow with time).
    posted: usize,
    users: HashSet<String>,
    last_user: String,
    last_answered: String,
    idle: bool,
    /// Each message's role, by id.
    roles: HashMap<String, String>,
    /// Parts said already (a part is updated many times).
    said: HashSet<String>,
    /// Tool calls running, by part id: their log line.
    calls: HashMap<String, String>,
    log: Log,
    /// Each completed assistant message's usage, by id.
    usage: HashMap<String, Totals>,
}

impl Driver {
    fn new(server: Server, session: String, model: Option<String>) -> Driver {
        let model = model.and_then(|m| {
            let (provider, id) = m.split_once('/')?;
            Some(json!({ "providerID": provider, "modelID": id }))
        });
        Driver {
            server,
            ours: HashSet::from([session.clone()]),
            session,
            model,
            input_open: true,
            posted: 0,
            users: HashSet::new(),
            last_user: String::new(),
            last_answered: String::new(),
            idle: true,
            roles: HashMap::new(),
            said: HashSet::new(),
            calls: HashMap::new(),
            log: Log::default(),
            usage: HashMap::new(),
        }
    }

    /// A turn from the feed, written into the session as a prompt.
    fn turn(&mut self, kind: &str, text: &str) -> std::io::Result<()> {
        let mut body = json!({ "parts": [{ "type": "text", "text": text }] });
        if let Some(m) = &self.model {
            body["model"] = m.clone();
        }
        let path = format!("/session/{}/prompt_async", self.session);
        let (status, r) = self.server.call("POST", &path, &body)?;
        if !(200..300).contains(&status) {
            // Never lose a turn (an answer, a shutdown): the session fails, and its attempt
            // is retried with everything the thread holds.
            return Err(std::io::Error::other(format!("refused the {kind} turn: {status} {}", cut(&r.to_string()))));
        }
        self.posted += 1;
        say(&format!("user ({kind}): {}", cut(text)));
        Ok(())
    }

    /// The session is over: the feed ended, every turn reached the session, and it is idle
    /// with its newest user message answered.
    fn finished(&self) -> bool {
        let answered = self.posted == 0 || self.last_answered > self.last_user;
        !self.input_open && self.idle && self.users.len() >= self.posted && answered
    }

    /// An event of the server's stream.
    fn heard(&mut self, ev: &Value) -> std::io::Result<()> {
        let p = &ev["properties"];
        let sid = p["sessionID"].as_str().or(p["info"]["sessionID"].as_str()).or(p["part"]["sessionID"].as_str());
        let kind = ev["type"].as_str().unwrap_or_default();
        if kind == "session.created" {
            if let (Some(id), Some(parent)) = (p["info"]["id"].as_str(), p["info"]["parentID"].as_str())
                && self.ours.contains(parent)
            {
                self.ours.insert(id.to_string());
            }
            return Ok(());
        }
        let Some(sid) = sid.filter(|s| self.ours.contains(*s)).map(str::to_string) else { return Ok(()) };
        let main = sid == self.session;
        match kind {
            "session.status" if main => self.idle = p["status"]["type"] == "idle",
            "session.idle" if main => {
                self.idle = true;
                say("idle");
            }
            "session.error" => self.show(&json!({ "type": "error", "error": p["error"] })),
            "message.updated" => self.message(&p["info"], main),
            "message.part.updated" => self.part(&p["part"]),
            "permission.asked" => {
                let id = p["id"].as_str().unwrap_or_default();
                let (status, _) =
                    self.server.call("POST", &format!("/permission/{id}/reply"), &json!({ "reply": "once" }))?;
                let what = format!("{} {}", p["permission"].as_str().unwrap_or_default(), p["patterns"]);
                say(&format!("permission {what}: approved once, as `opencode run --auto` does ({status})"));
            }
            _ => {}
        }
        Ok(())
    }

    fn message(&mut self, info: &Value, main: bool) {
        let (Some(id), Some(role)) = (info["id"].as_str(), info["role"].as_str()) else { return };
        self.roles.insert(id.to_string(), role.to_string());
        if role == "assistant" && !info["time"]["completed"].is_null() {
            self.completed(id, info);
        }
        if !main {
            return;
        }
        if role == "user" && self.users.insert(id.to_string()) && id > self.last_user.as_str() {
            self.last_user = id.to_string();
        }
        if role == "assistant" && !info["time"]["completed"].is_null() && id > self.last_answered.as_str() {
            self.last_answered = id.to_string();
        }
    }

    /// A part of an assistant message: as `opencode run --format json` would print it.
    fn part(&mut self, part: &Value) {
        let role = part["messageID"].as_str().and_then(|m| self.roles.get(m));
        if role.is_some_and(|r| r == "user") {
            return;
        }
        let id = part["id"].as_str().unwrap_or_default().to_string();
        let state = &part["state"];
        let as_run = match (part["type"].as_str().unwrap_or_default(), state["status"].as_str()) {
            ("text", _) if !part["time"]["end"].is_null() => "text",
            ("tool", Some("running")) => {
                if !self.calls.contains_key(&id) {
                    let line = self.log.render(&json!({ "type": "tool_use", "part": part })).join(" ");
                    let line = line.split_once(" (running)").map_or(line.clone(), |(call, _)| call.to_string());
                    say(&format!("{line} (running)"));
                    self.calls.insert(id, line);
                }
                return;
            }
            ("tool", Some("completed" | "error")) => {
                self.calls.remove(&id);
                "tool_use"
            }
            ("step-finish", _) => "step_finish",
            _ => return,
        };
        if self.said.insert(id) {
            self.show(&json!({ "type": as_run, "part": part }));
        }
    }

    /// Readable lines of a stream event (the one-shot stream's shape).
    fn show(&mut self, ev: &Value) {
        for line in self.log.render(ev) {
            say(&line);
        }
    }

    /// A completed assistant message (of the session or a subagent's): its tokens and cost
    /// count toward the session's usage, handed to the output filter
    /// ([`live_io::report_usage`]), which records it. Usage is taken from the messages, not
    /// from the `step-finish` parts: a part can be written through the server's API (`PATCH
    /// …/part/…`, which the worker's shell could reach with the server's password), a
    /// message's tokens cannot.
    fn completed(&mut self, id: &str, info: &Value) {
        let t = &info["tokens"];
        let n = |v: &Value, k: &str| v[k].as_i64().unwrap_or(0).max(0);
        let u = Totals {
            input: n(t, "input"),
            output: n(t, "output"),
            cache_read: n(&t["cache"], "read"),
            cache_write: n(&t["cache"], "write"),
            cost: Some(info["cost"].as_f64().unwrap_or(0.0).max(0.0)),
        };
        if self.usage.insert(id.to_string(), u) == Some(u) {
            return;
        }
        let mut sum = Totals { cost: Some(0.0), ..Totals::default() };
        for m in self.usage.values() {
            sum.input += m.input;
            sum.output += m.output;
            sum.cache_read += m.cache_read;
            sum.cache_write += m.cache_write;
            sum.cost = Some(sum.cost.unwrap_or(0.0) + m.cost.unwrap_or(0.0));
        }
        live_io::report_usage(&sum);
    }
}

/// Wrap a live opencode session's command (`opencode serve …`, client.rs) in this driver,
/// keeping the server's events in `raw`.
pub fn wrap(spec: &mut crate::process::Spec, me: &str, raw: &Path) {
    live_io::wrap(spec, me, vec!["--opencode-live".to_string(), raw.display().to_string()]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn driver() -> Driver {
        Driver::new(Server::new(1, "x"), "ses_1".into(), Some("mock/mock-model".into()))
    }

    fn updated(id: &str, role: &str, completed: bool) -> Value {
        let time = if completed { json!({"created": 1, "completed": 2}) } else { json!({"created": 1}) };
        json!({"type": "message.updated", "properties": {"sessionID": "ses_1", "info": {"id": id, "sessionID": "ses_1", "role": role, "time": time}}})
    }

    fn status(kind: &str) -> Value {
        json!({"type": "session.status", "properties": {"sessionID": "ses_1", "status": {"type": kind}}})
    }

    #[test]
    fn the_session_is_over_only_when_idle_with_its_newest_prompt_answered() {
        let mut d = driver();
        assert_eq!(d.model, Some(json!({"providerID": "mock", "modelID": "mock-model"})));
        d.posted = 2;
        d.input_open = false;
        d.heard(&updated("msg_a", "user", false)).unwrap();
        d.heard(&status("busy")).unwrap();
        d.heard(&updated("msg_b", "assistant", true)).unwrap();
        assert!(!d.finished(), "one of two prompts seen");
        // The second prompt came as the loop ended: the idle of that loop is not the end.
        d.heard(&updated("msg_c", "user", false)).unwrap();
        d.heard(&status("idle")).unwrap();
        assert!(!d.finished(), "the newest prompt is not answered");
        d.heard(&status("busy")).unwrap();
        d.heard(&updated("msg_d", "assistant", false)).unwrap();
        d.heard(&updated("msg_d", "assistant", true)).unwrap();
        assert!(!d.finished(), "busy");
        d.heard(&status("idle")).unwrap();
        assert!(d.finished());
    }

    #[test]
    fn a_running_tool_call_is_remembered_until_it_completes() {
        let mut d = driver();
        let tool = |status: &str| {
            json!({"type": "message.part.updated", "properties": {"part": {"id": "prt_1", "sessionID": "ses_1", "messageID": "msg_b", "type": "tool", "tool": "bash",
                "state": {"status": status, "input": {"command": "sleep 9"}, "output": "ok"}}}})
        };
        d.heard(&tool("running")).unwrap();
        assert_eq!(d.calls.values().collect::<Vec<_>>(), ["tool bash sleep 9"]);
        d.heard(&tool("completed")).unwrap();
        assert!(d.calls.is_empty());
    }

    /// The session's usage is its completed assistant messages', each counted once (its
    /// latest figures), never below nothing; a step part (which the server's API lets a
    /// worker write) and another session's message count for nothing.
    #[test]
    fn usage_comes_from_completed_assistant_messages_not_from_parts() {
        let mut d = driver();
        let message = |id: &str, sid: &str, input: i64, cost: f64| {
            json!({"type": "message.updated", "properties": {"info": {"id": id, "sessionID": sid, "role": "assistant",
                "time": {"created": 1, "completed": 2}, "cost": cost,
                "tokens": {"input": input, "output": 20, "reasoning": 0, "cache": {"read": 3, "write": 4}}}}})
        };
        d.heard(&message("msg_b", "ses_1", 100, 0.5)).unwrap();
        d.heard(&message("msg_b", "ses_1", 100, 0.5)).unwrap();
        d.heard(&message("msg_c", "ses_1", -1000, -9.0)).unwrap();
        d.heard(&message("msg_x", "ses_9", 5, 1.0)).unwrap();
        let forged = json!({"type": "message.part.updated", "properties": {"part": {"id": "prt_2", "sessionID": "ses_1", "messageID": "msg_b",
            "type": "step-finish", "reason": "stop", "cost": -1000.0, "tokens": {"input": -100000, "output": 0, "cache": {"read": 0, "write": 0}}}}});
        d.heard(&forged).unwrap();
        let u: Vec<Totals> = d.usage.values().copied().collect();
        let sum = (u.iter().map(|t| t.input).sum::<i64>(), u.iter().map(|t| t.cache_write).sum::<i64>());
        assert_eq!(sum, (100, 8), "{u:?}");
        assert_eq!(u.iter().map(|t| t.cost.unwrap_or(0.0)).sum::<f64>(), 0.5);
    }
}
