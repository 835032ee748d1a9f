//! What the output filters of sessions share (claude_log.rs, codex_log.rs,
//! command_log.rs, clients/, and the live drivers' `--live-log`, live_io.rs): the loop that keeps each
//! raw line and writes readable ones with their time, a session's usage totals and their
//! `launch.usage` reports, its live tail's `launch.sessionTail` reports (live_tail.rs), and
//! how texts are cut short.

use std::fs::OpenOptions;
use std::io::{BufRead, Write};
use std::path::Path;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::live_tail::Tail;

/// The most of a text (arguments, a result, a command's output) one line keeps.
pub(crate) const MAX_TEXT: usize = 400;

/// What every output filter of a session does (`--claude-log`, `--codex-log`,
/// `--command-log`, `--client-log`): read stdin to its end, keep each line as it is in
/// `raw`, write the readable lines `read` makes of it to stdout with their time, record the
/// usage it finds with `launch.usage` and the log's last lines with `launch.sessionTail`
/// (live_tail.rs: bounded, coalesced) for the session in `COORD_FILTER_SESSION`.
pub(crate) fn filter(raw: Option<&Path>, read: impl Fn(&str) -> (Vec<String>, Option<Totals>)) -> std::io::Result<()> {
    let mut keep = raw.map(|r| OpenOptions::new().create(true).append(true).open(r)).transpose()?;
    let mut report = Reporter::new(std::env::var(crate::process::FILTER_SESSION_VAR).ok());
    let mut tail = Tail::default();
    let (tx, rx) = mpsc::sync_channel(64);
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().split(b'\n') {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    let mut out = std::io::stdout().lock();
    loop {
        // Wait for the next line; only while tail lines are pending, no longer than their
        // report's due time.
        let next = match tail.due_in(Instant::now()) {
            None => rx.recv().ok(),
            Some(wait) => match rx.recv_timeout(wait) {
                Ok(line) => Some(line),
                Err(RecvTimeoutError::Timeout) => {
                    report.tail(&mut tail, &mut out)?;
                    continue;
                }
                Err(RecvTimeoutError::Disconnected) => None,
            },
        };
        let Some(line) = next else { break };
        let line = line?;
        if let Some(k) = keep.as_mut() {
            k.write_all(&line)?;
            k.write_all(b"\n")?;
        }
        let line = String::from_utf8_lossy(&line).into_owned();
        let (mut texts, usage) = read(line.trim_end_matches('\r'));
        if let Some(t) = usage
            && let Err(e) = report.send(t)
        {
            texts.push(format!("usage not recorded: {e}"));
        }
        for text in texts {
            let line = format!("{} {text}", coord_client::ids::now_rfc3339());
            writeln!(out, "{line}")?;
            tail.push(&line);
        }
        out.flush()?;
        if tail.due_in(Instant::now()) == Some(Duration::ZERO) {
            report.tail(&mut tail, &mut out)?;
        }
    }
    report.tail(&mut tail, &mut out)
}

/// `launch.usage` and `launch.sessionTail` calls for one session (none without its id),
/// on a connection made at the first report (in the output filters only: a session's own
/// processes hold the worker's secret, under which these calls are the launcher's).
pub(crate) struct Reporter {
    session_id: Option<String>,
    conn: Option<(tokio::runtime::Runtime, coord_client::Client)>,
    /// The last tail report failed (said once in the log until one succeeds again).
    tail_failed: bool,
}

impl Reporter {
    pub(crate) fn new(session_id: Option<String>) -> Reporter {
        Reporter { session_id: session_id.filter(|s| !s.is_empty()), conn: None, tail_failed: false }
    }

    /// The connection, made at the first call.
    fn conn(&mut self) -> Result<&(tokio::runtime::Runtime, coord_client::Client), String> {
        if self.conn.is_none() {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
            let db = std::env::var_os("COORD_DB").map(std::path::PathBuf::from);
            let opts = coord_client::ConnectOptions::for_cwd(db.as_deref());
            let c = rt.block_on(coord_client::Client::connect(opts)).map_err(|e| e.to_string())?;
            self.conn = Some((rt, c));
        }
        Ok(self.conn.as_ref().expect("connected"))
    }

    /// Make one call on the connection, bounded by [`CALL_BOUND`] so a slow daemon cannot
    /// hold up the session's output for long. A lost connection is made again at the next
    /// call; a session the daemon does not know (or no longer lets this filter report for)
    /// ends the reports: every later one would be refused the same way.
    fn call<T, Er: Into<coord_client::ClientError>>(
        &mut self,
        call: impl FnOnce(&coord_client::Client) -> std::pin::Pin<Box<dyn Future<Output = Result<T, Er>> + '_>>,
    ) -> Result<(), String> {
        let (rt, c) = self.conn()?;
        let done = rt.block_on(async { tokio::time::timeout(CALL_BOUND, call(c)).await });
        match done {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => {
                use coord_client::ClientError as E;
                let e: E = e.into();
                if matches!(e.code(), "session_not_found" | "unauthenticated") {
                    self.session_id = None;
                } else if matches!(e, E::Transport(_) | E::Connect { .. }) {
                    self.conn = None;
                }
                Err(e.to_string())
            }
            Err(_) => {
                self.conn = None;
                Err(format!("no answer within {} s", CALL_BOUND.as_secs()))
            }
        }
    }

    pub(crate) fn send(&mut self, t: Totals) -> Result<(), String> {
        let Some(session_id) = self.session_id.clone() else { return Ok(()) };
        let p = coord_proto::types::UsageParams {
            session_id,
            run_id: std::env::var("COORD_RUN").ok(),
            input_tokens: t.input,
            output_tokens: t.output,
            cache_read_tokens: t.cache_read,
            cache_write_tokens: t.cache_write,
            cost_usd: t.cost,
        };
        use coord_proto::api::LaunchApiClient as _;
        self.call(|c| Box::pin(c.usage(p)))
    }

    /// Report the tail's pending lines, if any; a failure is said in the log (`out`) once.
    pub(crate) fn tail(&mut self, tail: &mut Tail, out: &mut impl Write) -> std::io::Result<()> {
        let Some(lines) = tail.take(Instant::now()) else { return Ok(()) };
        let Some(session_id) = self.session_id.clone() else { return Ok(()) };
        use coord_proto::api::LaunchApiClient as _;
        let p = coord_proto::types::SessionTailParams { session_id, lines };
        match self.call(|c| Box::pin(c.session_tail(p))) {
            Ok(()) => self.tail_failed = false,
            Err(e) => {
                if !std::mem::replace(&mut self.tail_failed, true) {
                    writeln!(out, "{} live tail not recorded: {e}", coord_client::ids::now_rfc3339())?;
                    out.flush()?;
                }
            }
        }
        Ok(())
    }
}

/// How long one report may take.
const CALL_BOUND: Duration = Duration::from_secs(10);

/// A session's usage so far.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct Totals {
    pub(crate) input: i64,
    pub(crate) output: i64,
    pub(crate) cache_read: i64,
    pub(crate) cache_write: i64,
    pub(crate) cost: Option<f64>,
}

impl Totals {
    /// As the log says it.
    pub(crate) fn line(&self) -> String {
        format!(
            "usage (session so far): {} input, {} output, {} cache read, {} cache write tokens, ${:.6}",
            self.input,
            self.output,
            self.cache_read,
            self.cache_write,
            self.cost.unwrap_or(0.0)
        )
    }
}

/// An MCP result's text content, else the result as JSON.
pub(crate) fn result_text(r: &Value) -> String {
    let texts: Vec<&str> = r
        .get("content")
        .and_then(Value::as_array)
        .map(|c| c.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect())
        .unwrap_or_default();
    if texts.is_empty() { compact(r) } else { texts.join(" ") }
}

pub(crate) fn compact(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// A text on one line (newlines shown as `\n`), at most [`MAX_TEXT`] characters.
pub(crate) fn cut(text: &str) -> String {
    let one = text.trim_end().replace('\n', "\\n");
    let n = one.chars().count();
    if n <= MAX_TEXT {
        return one;
    }
    let kept: String = one.chars().take(MAX_TEXT).collect();
    format!("{kept}… ({} more characters)", n - MAX_TEXT)
}
