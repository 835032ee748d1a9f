//! What the live drivers (codex_live.rs, gemini_live.rs) share: their log lines, the CLI
//! child whose JSON-lines output they read (kept as it is beside the log), the session's
//! feed on their stdin, how a child's status becomes theirs, and how the bridge wraps a
//! session's command in its driver.

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::Sender;

use serde_json::{Value, json};

/// A line in the log, with its time.
pub fn say(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{} {text}", coord_client::ids::now_rfc3339());
    let _ = out.flush();
}

/// Start `command` with its stdio piped: each JSON line of its stdout goes to `tx` as
/// `msg(line)` (and every line into `raw`), other lines and its stderr to the log; `end`
/// follows its last line.
pub fn spawn<M: Send + 'static>(
    command: &[String],
    raw: &Path,
    tx: Sender<M>,
    msg: fn(Value) -> M,
    end: M,
) -> std::io::Result<Child> {
    let (program, args) = command.split_first().ok_or_else(|| std::io::Error::other("the driver needs a command"))?;
    let mut child =
        Command::new(program).args(args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
    let out = child.stdout.take().expect("piped");
    let mut keep = OpenOptions::new().create(true).append(true).open(raw)?;
    std::thread::spawn(move || {
        for line in BufReader::new(out).split(b'\n').map_while(Result::ok) {
            let _ = keep.write_all(&line).and_then(|()| keep.write_all(b"\n"));
            let text = String::from_utf8_lossy(&line);
            match serde_json::from_str::<Value>(&text) {
                Ok(v) => {
                    let _ = tx.send(msg(v));
                }
                Err(_) if !text.trim().is_empty() => say(&text),
                Err(_) => {}
            }
        }
        let _ = tx.send(end);
    });
    let err = child.stderr.take().expect("piped");
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines().map_while(Result::ok).filter(|l| !l.trim().is_empty()) {
            say(&line);
        }
    });
    Ok(child)
}

/// Read the session's feed on stdin: each `turn` line goes to `tx` as `turn(line)`; `end`
/// follows the feed's end.
pub fn read_feed<M: Send + 'static>(tx: Sender<M>, turn: impl Fn(&Value) -> M + Send + 'static, end: M) {
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines().map_while(Result::ok) {
            match serde_json::from_str::<Value>(&line) {
                Ok(t) if t["type"] == "turn" => {
                    let _ = tx.send(turn(&t));
                }
                _ => say(&format!("feed: not a turn, passed over: {}", crate::transcript::cut(&line))),
            }
        }
        let _ = tx.send(end);
    });
}

/// A child's status as a process status (128 + the signal when killed).
pub fn code(status: ExitStatus) -> i32 {
    status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(0))
}

/// How a child that ended before its session was over ended.
pub fn how(status: ExitStatus) -> String {
    match status.signal() {
        Some(sig) => format!("killed by signal {sig}"),
        None => format!("exit {}", code(status)),
    }
}

/// Make `spec` (a live CLI's command) run under its driver: `ME ARGS… -- PROGRAM ITS-ARGS…`,
/// the driver writing the log lines itself (no filter).
pub fn wrap(spec: &mut crate::process::Spec, me: &str, mut args: Vec<String>) {
    args.push("--".to_string());
    args.push(spec.program.clone());
    args.append(&mut spec.args);
    spec.program = me.to_string();
    spec.args = args;
    spec.filter = None;
}

/// A driver's JSON-RPC lines to its CLI: requests numbered from 1, and the ones not yet
/// answered.
pub struct Rpc {
    stdin: Option<ChildStdin>,
    next_id: u64,
    /// Requests sent and not answered, by id: their method.
    pub asked: HashMap<u64, &'static str>,
    /// Each message says `"jsonrpc": "2.0"` (Codex's app-server leaves it out).
    tagged: bool,
}

impl Rpc {
    pub fn new(stdin: ChildStdin, tagged: bool) -> Rpc {
        Rpc { stdin: Some(stdin), next_id: 0, asked: HashMap::new(), tagged }
    }

    /// Write one message (nothing once closed).
    pub fn send(&mut self, mut v: Value) -> std::io::Result<()> {
        if self.tagged {
            v["jsonrpc"] = json!("2.0");
        }
        let Some(s) = self.stdin.as_mut() else { return Ok(()) };
        s.write_all(format!("{v}\n").as_bytes())?;
        s.flush()
    }

    pub fn request(&mut self, method: &'static str, params: Value) -> std::io::Result<()> {
        self.next_id += 1;
        self.asked.insert(self.next_id, method);
        self.send(json!({"id": self.next_id, "method": method, "params": params}))
    }

    /// Close the CLI's input.
    pub fn close(&mut self) {
        self.stdin = None;
    }
}
