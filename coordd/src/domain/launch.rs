//! Launched sessions (`launch.*`): the worker processes a launcher started for attempts.
//! A session is recorded running against its attempt's thread, then ended once, with how
//! (exit code, signal, reason, the log's tail). While it runs, its launcher may record its
//! log's last lines (`launch.sessionTail`). Each change records its event.

use coord_proto::ErrorCode;
use coord_proto::types::*;
use serde_json::json;

use super::check;
use super::events::{self, Draft, SOURCE_LAUNCH};
use crate::bound;
use crate::error::{Error, Result};
use crate::ids;
use crate::store::Tx;
use crate::time::Ts;

/// The most of a log's tail kept with a session (characters, the end kept).
pub const MAX_LOG_TAIL: usize = 8000;

/// The longest path, client or launcher name accepted.
const MAX_FIELD: usize = 4096;

fn field(name: &str, value: &str) -> Result<()> {
    if value.trim().is_empty() {
        return Err(Error::invalid(format!("{name} is required and must not be blank")));
    }
    if value.len() > MAX_FIELD || value.contains('\0') {
        return Err(Error::invalid(format!("{name} is longer than {MAX_FIELD} bytes or holds a NUL")));
    }
    Ok(())
}

/// The end of `text`, at most [`MAX_LOG_TAIL`] characters.
pub fn tail(text: &str) -> String {
    let n = text.chars().count();
    text.chars().skip(n.saturating_sub(MAX_LOG_TAIL)).collect()
}

/// `launch.sessionStart`: the thread must be an attempt of the named task, with no running
/// session (`session_running`: exactly one session per attempt, whatever the number of
/// launchers and daemons; the store's insert checks and inserts in one statement). A session id
/// the launcher chose is its own: the same call made again (same id, thread and pid)
/// returns the session it recorded, with no new event (`0`); any other use of a taken id
/// is refused.
pub fn start(tx: &mut dyn Tx, now: Ts, p: SessionStartParams, host: &str) -> Result<(LaunchSession, i64)> {
    if let Some(id) = &p.session_id {
        check::chosen_id("session_id", "ses", id)?;
        if let Some(s) = tx.launches().launch_session(id)? {
            if s.thread_id == p.thread_id && s.pid == p.pid {
                return Ok((s, 0));
            }
            return Err(Error::invalid(format!("session_id '{id}' is already another session's")));
        }
    }
    check::id("run_id", &p.run_id)?;
    check::id("task_id", &p.task_id)?;
    check::id("thread_id", &p.thread_id)?;
    for (name, v) in [("client", &p.client), ("launcher", &p.launcher), ("cwd", &p.cwd), ("log_path", &p.log_path)] {
        field(name, v)?;
    }
    if let Some(w) = &p.tmux_window {
        field("tmux_window", w)?;
    }
    if p.pid <= 0 {
        return Err(Error::invalid(format!("pid must be positive, not {}", p.pid)));
    }
    let attempt = tx
        .attempts()
        .attempt_by_thread(&p.thread_id)?
        .filter(|a| a.run_id == p.run_id && a.task_id == p.task_id)
        .ok_or_else(|| {
            Error::not_found(format!(
                "thread '{}' is no attempt of task '{}' in run '{}'",
                p.thread_id, p.task_id, p.run_id
            ))
        })?;
    // A session that comes after the attempt's work ended (a launcher that lost the race
    // and learned of the attempt late) would be a second one for it: refused too.
    if tx.threads().thread(&p.thread_id)?.is_some_and(|t| t.thread.status.is_terminal()) {
        return Err(Error::app(
            ErrorCode::SessionRunning,
            format!("attempt {} of {} has ended: its session already ran", attempt.attempt, p.task_id),
        ));
    }
    let host = p.host.unwrap_or_else(|| host.to_string());
    field("host", &host)?;
    let s = LaunchSession {
        session_id: p.session_id.unwrap_or_else(|| ids::new_id("ses")),
        run_id: p.run_id,
        task_id: p.task_id,
        attempt: attempt.attempt,
        thread_id: p.thread_id,
        agent: attempt.worker,
        client: p.client,
        pid: p.pid,
        host,
        launcher: p.launcher,
        cwd: p.cwd,
        log_path: p.log_path,
        tmux_window: p.tmux_window,
        state: SessionState::Running,
        started_at: now.to_string(),
        ended_at: None,
        exit_code: None,
        signal: None,
        reason: None,
        log_tail: None,
        mode: p.mode.unwrap_or_default(),
    };
    if !tx.launches_mut().launch_insert(&s)? {
        return Err(running_already(tx, &s));
    }
    let summary = format!("{} session for {} (attempt {}) started, pid {}", s.client, s.task_id, s.attempt, s.pid);
    let id = record(tx, EventType::LaunchStarted, &s, &summary, now)?;
    Ok((s, id))
}

/// The refusal of a second running session for an attempt, naming the running one.
fn running_already(tx: &dyn Tx, s: &LaunchSession) -> Error {
    let q = SessionListParams {
        run_id: Some(s.run_id.clone()),
        task_id: Some(s.task_id.clone()),
        running_only: true,
        ..Default::default()
    };
    let running = tx.launches().launch_list(&q).ok().and_then(|l| l.into_iter().find(|r| r.thread_id == s.thread_id));
    let (message, details) = match running {
        Some(r) => (
            format!(
                "attempt {} of {} already has a running session '{}' (pid {} on {}, started by {})",
                s.attempt, s.task_id, r.session_id, r.pid, r.host, r.launcher
            ),
            json!({ "session_id": r.session_id, "pid": r.pid, "host": r.host, "launcher": r.launcher }),
        ),
        None => (format!("attempt {} of {} already has a running session", s.attempt, s.task_id), json!({})),
    };
    Error::App(coord_proto::AppError::new(ErrorCode::SessionRunning, message).with_details(details))
}

/// `launch.sessionExit`: a running session ends once, as `exited` (the default), `stopped`
/// or `lost`.
pub fn exit(tx: &mut dyn Tx, now: Ts, p: SessionExitParams) -> Result<(LaunchSession, i64)> {
    check::id("session_id", &p.session_id)?;
    let state = p.state.unwrap_or(SessionState::Exited);
    if state == SessionState::Running {
        return Err(Error::invalid("state must be exited, stopped or lost".to_string()));
    }
    if let Some(r) = &p.reason {
        check::text("reason", r)?;
    }
    let mut s = session(tx, &p.session_id)?;
    if s.state != SessionState::Running {
        return Err(Error::app(
            ErrorCode::SessionEnded,
            format!(
                "session '{}' already ended ({}) at {}",
                s.session_id,
                s.state,
                s.ended_at.as_deref().unwrap_or("?")
            ),
        ));
    }
    s.state = state;
    s.ended_at = Some(now.to_string());
    s.exit_code = p.exit_code;
    s.signal = p.signal;
    s.reason = p.reason;
    // The tail at its end; without one, the last the launcher reported while it ran.
    s.log_tail = p.log_tail.as_deref().map(tail).or(s.log_tail);
    tx.launches_mut().launch_save(&s)?;
    let how = match (s.exit_code, s.signal) {
        (Some(c), _) => format!("exit code {c}"),
        (None, Some(sig)) => format!("signal {sig}"),
        (None, None) => "no exit status".to_string(),
    };
    let summary = format!("{} session for {} (attempt {}) {}, {how}", s.client, s.task_id, s.attempt, s.state);
    let id = record(tx, EventType::LaunchExited, &s, &summary, now)?;
    Ok((s, id))
}

/// The lines of a `launch.sessionTail`, checked: at most [`MAX_TAIL_LINES`], each of at most
/// [`MAX_TAIL_LINE_CHARS`] characters with no line break or NUL; joined with `\n`.
fn tail_lines(lines: &[String]) -> Result<String> {
    if lines.len() > MAX_TAIL_LINES {
        return Err(Error::invalid(format!("lines holds {} lines; at most {MAX_TAIL_LINES} are kept", lines.len())));
    }
    for (i, l) in lines.iter().enumerate() {
        if l.chars().count() > MAX_TAIL_LINE_CHARS {
            return Err(Error::invalid(format!("lines[{i}] is longer than {MAX_TAIL_LINE_CHARS} characters")));
        }
        if l.contains(['\n', '\r', '\0']) {
            return Err(Error::invalid(format!("lines[{i}] holds a line break or a NUL: send one line per item")));
        }
    }
    Ok(lines.join("\n"))
}

/// `launch.sessionTail`: a running session's log's last lines become its `log_tail`, with a
/// `launch.tail` event. A session that ended keeps the tail its end recorded, and the same
/// tail again records nothing: `(false, 0)` then, not an error (its filter reports the last
/// lines at the end of its output, which may come after the launcher recorded the end).
pub fn set_tail(tx: &mut dyn Tx, now: Ts, p: &SessionTailParams) -> Result<(bool, i64)> {
    let text = tail_lines(&p.lines)?;
    let mut s = session(tx, &p.session_id)?;
    if s.state != SessionState::Running || s.log_tail.as_deref() == Some(text.as_str()) {
        return Ok((false, 0));
    }
    s.log_tail = Some(text);
    tx.launches_mut().launch_save(&s)?;
    let last = s.log_tail.as_deref().and_then(|t| t.lines().last()).unwrap_or_default();
    let summary = format!("{} a{}: {}", s.task_id, s.attempt, last.chars().take(200).collect::<String>());
    Ok((true, record(tx, EventType::LaunchTail, &s, &summary, now)?))
}

/// A recorded session (`session_not_found` when there is none).
pub fn session(tx: &dyn Tx, session_id: &str) -> Result<LaunchSession> {
    check::id("session_id", session_id)?;
    tx.launches()
        .launch_session(session_id)?
        .ok_or_else(|| Error::app(ErrorCode::SessionNotFound, format!("no launched session '{session_id}'")))
}

/// `launch.sessionList`.
pub fn list(tx: &dyn Tx, p: &SessionListParams) -> Result<SessionsResult> {
    for (name, v) in [("run_id", &p.run_id), ("task_id", &p.task_id)] {
        if let Some(v) = v {
            check::id(name, v)?;
        }
    }
    let sessions = bound::after_key(tx.launches().launch_list(p)?, p.after.as_deref(), |s| &s.session_id)?;
    let page = bound::page(sessions, |s: &LaunchSession| s.session_id.clone());
    Ok(SessionsResult { sessions: page.items, truncated: page.truncated, next_after: page.next_after })
}

fn record(tx: &mut dyn Tx, event_type: EventType, s: &LaunchSession, summary: &str, now: Ts) -> Result<i64> {
    let payload = json!({ "session": s });
    let d = Draft {
        run_id: &s.run_id,
        task_id: &s.task_id,
        thread_id: &s.thread_id,
        assigned_to: &s.agent,
        created_by: &s.launcher,
        ..Draft::new(event_type, SOURCE_LAUNCH, &s.launcher, summary, &payload, now)
    };
    events::record(tx, &d)
}
