//! A live session's input: a FIFO beside the attempt's log (`<task>-a<N>.feed`) that the
//! session reads as its stdin, and the turns the bridge writes into it (the task first,
//! then whatever is committed for the worker: answers, mail, follow-ups, shutdown
//! requests), in the client's format: the `command` client's JSON-lines feed (schema in
//! docs/launch.md) or Claude Code's stream-json user lines.
//!
//! Ending: a small holder process (`sleep infinity`, carrying the session's
//! `COORD_SESSION`) keeps a write end open, so the session never sees end-of-file when a
//! bridge restarts (the next bridge opens the FIFO again: re-attach). To end the session
//! cleanly the bridge stops the holder and closes its own end: the session reads
//! end-of-file, finishes what it was given and exits.

use std::fs::OpenOptions;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use coord_proto::types::{Event, MessageKind};
use serde::Serialize;
use tokio::io::AsyncWriteExt;
use tokio::net::unix::pipe;

use crate::client::Work;
use crate::process::SESSION_VAR;

/// The feed's FIFO for a session whose log is `log`.
pub fn fifo_of(log: &Path) -> PathBuf {
    log.with_extension("feed")
}

/// Where the holder's pid is kept (for the bridge that re-attaches).
fn holder_file(fifo: &Path) -> PathBuf {
    fifo.with_extension("feed-holder")
}

/// How the session wants its turns written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// The `command` client's feed: one [`Turn`] per line.
    Lines,
    /// Claude Code's `--input-format stream-json`: a user message per turn.
    ClaudeStream,
}

/// One line of the `command` client's feed. Fields not set are left out; readers ignore
/// fields and types they do not know.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Turn {
    /// Always `turn`.
    #[serde(rename = "type")]
    pub line_type: &'static str,
    /// Unique per line (a UUID).
    pub id: String,
    /// `task`, `answer`, `mail`, `follow_up` or `shutdown`; a lead's `attention`.
    pub kind: &'static str,
    /// What the worker reads: the prompt, or the message rendered as the hooks render mail.
    pub text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event_id: Option<i64>,
    /// A shutdown request's id, for the worker's `shutdown_approved`/`shutdown_rejected`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// A UUID-shaped id (version 4 layout) from a 64-bit seed and a number, unique per line.
pub(crate) fn uuid(seed: u64, n: i64) -> String {
    let hi = seed.to_be_bytes();
    format!(
        "{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-4{:01x}{:02x}-8{:03x}-{:012x}",
        hi[0],
        hi[1],
        hi[2],
        hi[3],
        hi[4],
        hi[5],
        hi[6] & 0xf,
        hi[7],
        (n >> 48) & 0xfff,
        n & 0xffff_ffff_ffff
    )
}

/// An attempt's task turn: its prompt (the first turn of the attempt's session record).
pub fn task_turn(w: &Work, prompt: String, seed: u64) -> Turn {
    Turn {
        line_type: "turn",
        id: uuid(seed, 0),
        kind: "task",
        text: prompt,
        run_id: Some(w.run_id.clone()),
        task_id: Some(w.task_id.clone()),
        thread_id: Some(w.thread_id.clone()),
        attempt: Some(w.attempt),
        ..Turn::default()
    }
}

/// What an event committed for the worker becomes in its feed (`None`: nothing for it,
/// such as its own messages).
pub fn turn_of(ev: &Event, w: &Work, seed: u64) -> Option<Turn> {
    let m = ev.message.as_ref()?;
    // The first message of a thread of one of this run's tasks is its dispatch (of a first
    // attempt, or of an attempt come back): the task comes as its own `task` turn when this
    // session is to work on it (reuse.rs, parked.rs), and not at all when another session
    // is. Other `task` messages (an `inbox send`'s new thread) are mail.
    let dispatch = m.kind == MessageKind::Task && !ev.task_id.is_empty() && ev.run_id == w.run_id;
    if m.from_agent == w.agent || dispatch {
        return None;
    }
    let kind = match m.msg_type.as_deref() {
        Some("shutdown_request") => "shutdown",
        Some(_) => return None,
        None if m.thread_id == w.thread_id && m.kind == MessageKind::Answer => "answer",
        None if m.thread_id == w.thread_id => "follow_up",
        None => "mail",
    };
    let task = if ev.task_id.is_empty() { String::new() } else { format!(", task {}", ev.task_id) };
    let mut text = format!(
        "[{}] from {} (message {}, thread {}{task}): {}",
        m.kind, m.from_agent, m.message_id, m.thread_id, m.summary
    );
    for line in m.body.lines() {
        text.push_str("\n    ");
        text.push_str(line);
    }
    if kind == "shutdown" {
        text.push_str(
            "\nShutdown requested: stop now. Commit or note what you have, answer the request, then end your turn.",
        );
    }
    Some(Turn {
        line_type: "turn",
        id: uuid(seed, ev.event_id),
        kind,
        text,
        from: Some(m.from_agent.clone()),
        message_id: Some(m.message_id.clone()),
        thread_id: Some(m.thread_id.clone()),
        task_id: Some(ev.task_id.clone()).filter(|t| !t.is_empty()),
        event_id: Some(ev.event_id),
        // A request without an id in its payload is named by its message (as shutdown.rs does).
        request_id: (kind == "shutdown").then(|| {
            coord_proto::types::payload_request_id(&m.payload_json).map_or_else(|| m.message_id.clone(), str::to_string)
        }),
        ..Turn::default()
    })
}

/// A turn as the session's input line (with its `\n`).
pub fn line(format: Format, t: &Turn) -> String {
    let v = match format {
        Format::Lines => serde_json::to_value(t).expect("a turn serializes"),
        Format::ClaudeStream => serde_json::json!({
            "type": "user",
            "message": {"role": "user", "content": t.text},
            "uuid": t.id,
        }),
    };
    format!("{v}\n")
}

/// A FIFO made for a new session, before the session starts: the holder keeps it open.
pub struct Made {
    pub fifo: PathBuf,
}

/// Make the FIFO and start its holder (with the session's id, so the session's stop ends
/// it too).
pub fn make(log: &Path, session_id: &str) -> std::io::Result<Made> {
    let fifo = fifo_of(log);
    if let Some(dir) = fifo.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let _ = std::fs::remove_file(&fifo);
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).map_err(std::io::Error::other)?;
    // SAFETY: a valid NUL-terminated path.
    if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // Read-write: opening does not wait for a reader, and the holder is a writer.
    let rw = OpenOptions::new().read(true).write(true).custom_flags(libc::O_CLOEXEC).open(&fifo)?;
    let mut holder = tokio::process::Command::new("sleep");
    holder.arg("infinity").env(SESSION_VAR, session_id).stdin(Stdio::null()).stdout(Stdio::from(rw));
    holder.stderr(Stdio::null()).process_group(0).kill_on_drop(false);
    // It carries the session's id: no secret of the bridge's goes with it (a bridge that
    // re-attaches reads the session's secret from its processes).
    for k in crate::credentials::scrub() {
        holder.env_remove(k);
    }
    let mut child = holder.spawn()?;
    let pid = child.id().unwrap_or(0);
    std::fs::write(holder_file(&fifo), pid.to_string())?;
    tokio::spawn(async move {
        let _ = child.wait().await;
    });
    Ok(Made { fifo })
}

/// The bridge's end of a live session's feed.
pub struct Writer {
    sender: Option<pipe::Sender>,
    fifo: PathBuf,
    pub format: Format,
    /// Seeds the turns' ids.
    pub seed: u64,
}

impl Writer {
    /// Open the feed of a running session (its reader is there: the session holds it).
    pub fn open(fifo: &Path, format: Format, seed: u64) -> std::io::Result<Writer> {
        let sender = pipe::OpenOptions::new().open_sender(fifo)?;
        Ok(Writer { sender: Some(sender), fifo: fifo.to_path_buf(), format, seed })
    }

    /// Write one turn; a session that is gone makes it an error.
    pub async fn write(&mut self, t: &Turn) -> std::io::Result<()> {
        let Some(s) = self.sender.as_mut() else { return Err(std::io::ErrorKind::BrokenPipe.into()) };
        s.write_all(line(self.format, t).as_bytes()).await
    }

    /// End the input: stop the holder and close this end, so the session reads
    /// end-of-file.
    pub fn close(&mut self) {
        if let Some(pid) =
            std::fs::read_to_string(holder_file(&self.fifo)).ok().and_then(|s| s.trim().parse::<i32>().ok())
        {
            // Only the holder: it is the `sleep` that carries this feed open.
            if pid > 0 && crate::process::alive(pid) {
                // SAFETY: kill sends a signal to one process.
                unsafe { libc::kill(pid, libc::SIGTERM) };
            }
        }
        self.sender = None;
    }
}

/// Remove a finished session's FIFO and holder file.
pub fn remove(log: &Path) {
    let fifo = fifo_of(log);
    let _ = std::fs::remove_file(holder_file(&fifo));
    let _ = std::fs::remove_file(fifo);
}

/// A seed for turn ids from the session id.
pub fn seed_of(session_id: &str) -> u64 {
    session_id.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turn_ids_look_like_uuids_and_differ() {
        let a = uuid(seed_of("ses_1"), 0);
        let b = uuid(seed_of("ses_1"), 42);
        assert_ne!(a, b);
        assert_eq!(a.len(), 36, "{a}");
        assert_eq!(a.split('-').map(str::len).collect::<Vec<_>>(), [8, 4, 4, 4, 12], "{a}");
    }

    #[test]
    fn a_claude_turn_is_a_user_message_line() {
        let t = Turn { line_type: "turn", id: "u1".into(), kind: "mail", text: "hi".into(), ..Turn::default() };
        let l = line(Format::ClaudeStream, &t);
        assert!(l.ends_with('\n') && l.matches('\n').count() == 1);
        let v: serde_json::Value = serde_json::from_str(&l).unwrap();
        assert_eq!(
            (v["type"].as_str(), v["message"]["content"].as_str(), v["uuid"].as_str()),
            (Some("user"), Some("hi"), Some("u1"))
        );
        let c: serde_json::Value = serde_json::from_str(&line(Format::Lines, &t)).unwrap();
        assert_eq!((c["type"].as_str(), c["kind"].as_str()), (Some("turn"), Some("mail")));
        assert!(c.get("from").is_none());
    }
}
