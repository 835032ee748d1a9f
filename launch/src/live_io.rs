//! What the live drivers (codex_live.rs, gemini_live.rs, opencode_live.rs) share: their log lines, the CLI
//! child whose JSON-lines output they read (kept as it is beside the log), the session's
//! feed on their stdin, how a child's status becomes theirs, how the bridge wraps a
//! session's command in its driver, and their output filter (`coord-launch --live-log`,
//! [`log`]).
//!
//! Usage: a driver is one of the session's processes and holds only the worker's secret,
//! under which `launch.usage` (the launcher's to call) is refused. So it writes its usage so
//! far as a bare JSON line between its log lines ([`report_usage`]), and its output filter,
//! which is not one of the session's processes (a process group of its own, no
//! `COORD_SESSION`) and keeps the bridge's secret, records it, as Claude Code's filter does.
//! Every other line a driver writes starts with its time and is one line ([`say`]), so
//! nothing the CLI prints (its stderr, which a command's output may reach) can pass for a
//! usage line: the usage recorded is what the CLI counted.

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::Sender;

use serde_json::{Value, json};

use crate::transcript::Totals;

/// The `type` of a driver's usage lines (the `command` client's transcript schema).
const USAGE: &str = "usage";

/// A line in the log, with its time: one line, whatever `text` holds.
pub fn say(text: &str) {
    let text = text.replace('\n', "\\n").replace('\r', "\\r");
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
    log_lines(child.stderr.take().expect("piped"));
    Ok(child)
}

/// Copy a child's output (its stderr) into the log, a line at a time, on a thread of its own.
pub fn log_lines(from: impl std::io::Read + Send + 'static) {
    std::thread::spawn(move || {
        for line in BufReader::new(from).lines().map_while(Result::ok).filter(|l| !l.trim().is_empty()) {
            say(&line);
        }
    });
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
/// its output through [`log`].
pub fn wrap(spec: &mut crate::process::Spec, me: &str, mut args: Vec<String>) {
    args.push("--".to_string());
    args.push(spec.program.clone());
    args.append(&mut spec.args);
    spec.program = me.to_string();
    spec.args = args;
    spec.filter = Some(vec![me.to_string(), "--live-log".to_string()]);
}

/// Hand the session's usage so far to the output filter: a bare JSON line (see [`log`]).
/// Whether it was written.
pub fn report_usage(t: &Totals) -> bool {
    let mut line = json!({"type": USAGE, "input_tokens": t.input, "output_tokens": t.output,
                          "cache_read_tokens": t.cache_read, "cache_write_tokens": t.cache_write});
    if let Some(cost) = t.cost {
        line["cost_usd"] = json!(cost);
    }
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}").and_then(|()| out.flush()).is_ok()
}

/// `coord-launch --live-log`: the filter a live driver's output goes through on its way to
/// the log ([`crate::transcript::filter`], as every client's: the live tail is reported with
/// `launch.sessionTail`). A bare JSON usage line (the driver's report) is recorded with
/// `launch.usage` for the session in `COORD_FILTER_SESSION` and logged as `usage (session so
/// far): …`; every other line (the driver's, each with its time) goes to the log with the
/// filter's time in place of the driver's.
pub fn log() -> std::io::Result<()> {
    crate::transcript::filter(None, |line| match usage_line(line) {
        Some(t) => (vec![t.line()], Some(t)),
        None => (vec![without_time(line).to_string()], None),
    })
}

/// A driver's log line without the time [`say`] put before it.
fn without_time(line: &str) -> &str {
    match line.split_once(' ') {
        Some((time, rest)) if time.len() >= 20 && time.as_bytes()[4] == b'-' && time.contains('T') => rest,
        _ => line,
    }
}

/// The totals of one of the driver's usage lines (`None`: another line).
fn usage_line(line: &str) -> Option<Totals> {
    let v = serde_json::from_str::<Value>(line).ok().filter(|v| v["type"] == USAGE)?;
    let n = |k: &str| v[k].as_i64();
    Some(Totals {
        input: n("input_tokens")?,
        output: n("output_tokens")?,
        cache_read: n("cache_read_tokens")?,
        cache_write: n("cache_write_tokens")?,
        cost: v["cost_usd"].as_f64(),
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_bare_usage_line_is_a_report() {
        let t = usage_line(
            r#"{"type":"usage","input_tokens":660,"output_tokens":82,"cache_read_tokens":2300,"cache_write_tokens":50}"#,
        );
        assert_eq!(
            t.map(|t| (t.input, t.output, t.cache_read, t.cache_write, t.cost)),
            Some((660, 82, 2300, 50, None))
        );
        let priced = usage_line(
            r#"{"type":"usage","input_tokens":1,"output_tokens":2,"cache_read_tokens":0,"cache_write_tokens":0,"cost_usd":0.25}"#,
        );
        assert_eq!(priced.and_then(|t| t.cost), Some(0.25));
        // A line the driver passed on (the CLI's stderr) carries its time first.
        let passed = r#"2026-11-28T15:00:00Z {"type":"usage","input_tokens":1,"output_tokens":1,"cache_read_tokens":0,"cache_write_tokens":0}"#;
        assert!(usage_line(passed).is_none());
        assert!(usage_line(r#"{"type":"usage"}"#).is_none());
    }

    #[test]
    fn the_filter_puts_its_time_in_place_of_the_drivers() {
        assert_eq!(without_time("2026-11-28T15:00:00.123Z turn started"), "turn started");
        assert_eq!(without_time("no time here"), "no time here");
    }
}
