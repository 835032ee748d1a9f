//! Inbox state changes. Each function runs inside the writer's transaction, checks the
//! current state, writes its rows and appends exactly one event, so a change and its event
//! commit together or not at all.

use std::time::SystemTime;

use coord_proto::ErrorCode;
use coord_proto::types::*;
use rusqlite::Connection;
use serde_json::Value;

use super::*;
use crate::db::WriteCtx;
use crate::error::{Error, Result};
use crate::events::{self, Draft};
use crate::util;

pub use super::lease::{claim, renew};
use super::lease::{release_lease, require_holder};

/// The clock of one operation: one instant, used for every timestamp it writes.
pub(super) struct Clock {
    pub(super) at: SystemTime,
    pub(super) now: String,
}

impl Clock {
    pub(super) fn new() -> Self {
        let at = util::now();
        Clock { at, now: util::ts(at) }
    }
}

pub(super) fn empty_object() -> Value {
    Value::Object(Default::default())
}

/// Everything needed to append one message and its event to a thread.
struct Append<'a> {
    /// True when the thread does not exist yet: insert it instead of updating it.
    new_thread: bool,
    thread: Thread,
    event_type: EventType,
    actor: &'a str,
    from: &'a str,
    to: String,
    kind: MessageKind,
    input: MessageInput,
    /// Mail category, ack requirement and delivery (only `send` sets them).
    mail: MailOpts,
}

/// What `send` adds to a message as mail.
#[derive(Default)]
struct MailOpts {
    category: Option<Category>,
    requires_ack: bool,
    /// Defaults to the thread's priority.
    priority: Option<Priority>,
    expires_at: Option<String>,
    /// Explicit recipients (several peers) instead of `to`.
    recipients: Option<Vec<String>>,
}

/// Insert the event, the message and its artifacts, update the thread, mark the thread read
/// for the sender, and queue the event. `a.thread` already carries the new state.
fn append(ctx: &mut WriteCtx<'_>, clock: &Clock, a: Append<'_>) -> Result<MessageResult> {
    let conn = ctx.conn;
    let message_id = util::new_id("msg");
    let mut thread = a.thread;
    thread.latest_message_id = Some(message_id.clone());
    thread.updated_at = clock.now.clone();
    let payload = a.input.payload_json.unwrap_or_else(empty_object);
    let draft = Draft {
        message_id: Some(&message_id),
        message_kind: Some(a.kind),
        ..Draft::for_thread(a.event_type, &thread, a.actor, &a.input.summary, &payload, &clock.now)
    };
    let event_id = events::insert(conn, &draft)?;
    if a.new_thread {
        // Inserted once with its final values, before the message that references it.
        insert_thread(conn, &thread)?;
    }
    let body = a.input.body.unwrap_or_default();
    let MailOpts { category, requires_ack, priority, expires_at, recipients } = a.mail;
    let delivering = crate::mail::Delivering { priority: priority.unwrap_or(thread.priority), expires_at, recipients };
    conn.prepare_cached(
        "INSERT INTO messages (message_id, thread_id, from_agent, to_agent, kind, summary, body, \
         payload_json, created_at, event_id, category, requires_ack) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
    )?
    .execute(rusqlite::params![
        message_id,
        thread.thread_id,
        a.from,
        a.to,
        a.kind.as_str(),
        a.input.summary,
        body,
        payload.to_string(),
        clock.now,
        event_id,
        category.map(|c| c.as_str()),
        requires_ack,
    ])?;
    let mut artifacts = Vec::with_capacity(a.input.artifacts.len());
    for art in a.input.artifacts {
        let artifact = Artifact {
            artifact_id: util::new_id("art"),
            message_id: message_id.clone(),
            path: art.path,
            kind: art.kind.unwrap_or_else(|| "file".into()),
            metadata_json: art.metadata_json.unwrap_or_else(empty_object),
            created_at: clock.now.clone(),
        };
        conn.prepare_cached(
            "INSERT INTO artifacts (artifact_id, message_id, path, kind, metadata_json, created_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?
        .execute(rusqlite::params![
            artifact.artifact_id,
            artifact.message_id,
            artifact.path,
            artifact.kind,
            artifact.metadata_json.to_string(),
            artifact.created_at,
        ])?;
        artifacts.push(artifact);
    }
    if !a.new_thread {
        save_thread(conn, &thread)?;
        // The sender has read the thread up to its own message. (A new thread holds
        // nothing addressed to its sender yet, so there is no mark to write.)
        mark_read_through(conn, a.from, &thread.thread_id, event_id)?;
    }
    let message = Message {
        message_id: message_id.clone(),
        thread_id: thread.thread_id.clone(),
        from_agent: a.from.to_string(),
        to_agent: a.to,
        kind: a.kind,
        summary: a.input.summary.clone(),
        body,
        payload_json: payload.clone(),
        created_at: clock.now.clone(),
        event_id,
        category,
        requires_ack,
        artifacts,
    };
    crate::mail::deliver(ctx, &message, &delivering, &clock.now)?;
    events::publish(ctx, event_id, &draft, Some(message.clone()));
    // orch reacts in the same transaction (task and run state, councils).
    crate::orch::reconcile::on_thread(ctx, &thread, a.actor, &clock.now)?;
    Ok(MessageResult { thread, message, event_id })
}

fn insert_thread(conn: &Connection, t: &Thread) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO threads (thread_id, run_id, task_id, subject, created_by, assigned_to, status, \
         priority, latest_message_id, created_at, updated_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    )?
    .execute(rusqlite::params![
        t.thread_id,
        t.run_id,
        t.task_id,
        t.subject,
        t.created_by,
        t.assigned_to,
        t.status.as_str(),
        t.priority.as_str(),
        t.latest_message_id,
        t.created_at,
        t.updated_at,
    ])?;
    Ok(())
}

/// Write a thread's mutable columns back.
pub(super) fn save_thread(conn: &Connection, t: &Thread) -> Result<()> {
    conn.prepare_cached(
        "UPDATE threads SET assigned_to = ?2, status = ?3, latest_message_id = ?4, updated_at = ?5 \
         WHERE thread_id = ?1",
    )?
    .execute(rusqlite::params![
        t.thread_id,
        t.assigned_to,
        t.status.as_str(),
        t.latest_message_id,
        t.updated_at
    ])?;
    Ok(())
}

pub(super) fn mark_read_through(conn: &Connection, agent: &str, thread_id: &str, event_id: i64) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO reads (agent_id, thread_id, read_event_id) VALUES (?1, ?2, ?3) \
         ON CONFLICT (agent_id, thread_id) DO UPDATE \
         SET read_event_id = MAX(read_event_id, excluded.read_event_id)",
    )?
    .execute(rusqlite::params![agent, thread_id, event_id])?;
    Ok(())
}

pub(super) fn open_thread(conn: &Connection, thread_id: &str, clock: &Clock) -> Result<Thread> {
    check_id("thread_id", thread_id)?;
    let t = read::thread(conn, thread_id, &clock.now)?;
    if t.status.is_terminal() {
        return Err(Error::app(
            ErrorCode::InvalidTransition,
            format!("thread '{thread_id}' is {} and accepts no further changes", t.status),
        ));
    }
    Ok(t)
}

/// `inbox.send`: create a thread with its first message, or append to an open thread.
pub fn send(ctx: &mut WriteCtx<'_>, p: SendParams) -> Result<MessageResult> {
    check_agent("from", &p.from)?;
    check_message(&p.message)?;
    let clock = Clock::new();
    let (to, recipients, target_task) = recipient(ctx.conn, &p)?;
    let category = p.category.as_deref().map(crate::mail::parse_category).transpose()?;
    let requires_ack = p.requires_ack.unwrap_or(category.is_some_and(Category::requires_ack_by_default));
    let expires_at = match p.expires_in_seconds {
        None => None,
        Some(s) if (1..=MAX_EXPIRY_SECONDS).contains(&s) => Some(util::ts_after(clock.at, s)),
        Some(s) => {
            return Err(Error::invalid(format!("expires_in_seconds must be 1 to {MAX_EXPIRY_SECONDS}, got {s}")));
        }
    };
    let mail = MailOpts { category, requires_ack, priority: p.priority, expires_at, recipients };
    if let Some(thread_id) = &p.thread_id {
        let thread = open_thread(ctx.conn, thread_id, &clock)?;
        if category.is_some() && thread.task_id.is_empty() && p.task_id.is_none() {
            return Err(missing_task());
        }
        for (field, given, have) in [("run_id", &p.run_id, &thread.run_id), ("task_id", &p.task_id, &thread.task_id)] {
            if let Some(g) = given
                && g != have
            {
                return Err(Error::invalid(format!(
                    "{field} '{g}' does not match thread '{thread_id}' ({field} '{have}')"
                )));
            }
        }
        return append(
            ctx,
            &clock,
            Append {
                new_thread: false,
                thread,
                event_type: EventType::MessageSent,
                actor: &p.from,
                from: &p.from,
                to: to.clone(),
                kind: p.kind.unwrap_or(MessageKind::Progress),
                input: p.message,
                mail,
            },
        );
    }
    let task_id = p.task_id.clone().or(target_task).unwrap_or_default();
    if category.is_some() && task_id.trim().is_empty() {
        return Err(missing_task());
    }
    // Without a subject, the summary's first line stands in (shortened to fit).
    let subject = match &p.subject {
        Some(s) => s.clone(),
        None => p.message.summary.lines().next().unwrap_or_default().chars().take(200).collect(),
    };
    check_subject(&subject)?;
    let thread = Thread {
        thread_id: util::new_id("thr"),
        run_id: p.run_id.clone().unwrap_or_default(),
        task_id,
        subject,
        created_by: p.from.clone(),
        assigned_to: to.clone(),
        status: ThreadStatus::Pending,
        priority: p.priority.unwrap_or(Priority::Normal),
        latest_message_id: None,
        created_at: clock.now.clone(),
        updated_at: clock.now.clone(),
        lease: None,
    };
    append(
        ctx,
        &clock,
        Append {
            new_thread: true,
            thread,
            event_type: EventType::ThreadCreated,
            actor: &p.from,
            from: &p.from,
            to,
            kind: p.kind.unwrap_or(MessageKind::Task),
            input: p.message,
            mail,
        },
    )
}

/// Longest `expires_in_seconds` accepted (one year).
const MAX_EXPIRY_SECONDS: u64 = 365 * 24 * 3600;

/// Resolve the addressee of a send: `(to, explicit recipients, the task addressed)`.
fn recipient(conn: &Connection, p: &SendParams) -> Result<(String, Option<Vec<String>>, Option<String>)> {
    use crate::mail::delivery::task_recipient;
    match (p.to.is_empty(), &p.to_task, &p.to_peer) {
        (false, None, None) => {
            check_agent("to", &p.to)?;
            if p.to.starts_with(TASK_RECIPIENT_PREFIX) {
                return Err(Error::invalid(format!("address tasks with to_task, not to '{}'", p.to)));
            }
            Ok((p.to.clone(), None, None))
        }
        (true, Some(task), None) => {
            check_id("to_task", task)?;
            Ok((task_recipient(task), None, Some(task.clone())))
        }
        (true, None, Some(mine)) => {
            let peers = crate::mail::peers::of(conn, mine)?;
            match peers.as_slice() {
                [] => {
                    Err(Error::not_found(format!("task '{mine}' has no linked peer (link one with `inbox peer link`)")))
                }
                [one] => Ok((task_recipient(one), None, Some(one.clone()))),
                many => Ok((format!("peers:{mine}"), Some(many.iter().map(|t| task_recipient(t)).collect()), None)),
            }
        }
        _ => Err(Error::invalid("give exactly one recipient: to, to_task or to_peer")),
    }
}

fn missing_task() -> Error {
    Error::app(ErrorCode::MissingBeadId, "a categorised message needs a task: pass --task (task_id)")
}

/// `inbox.update`: progress (`in_progress`) or a block (`blocked`) from the holder.
pub fn update(ctx: &mut WriteCtx<'_>, p: UpdateParams) -> Result<MessageResult> {
    check_agent("agent", &p.agent)?;
    check_message(&p.message)?;
    let status = p.status.unwrap_or(ThreadStatus::InProgress);
    let (kind, event_type) = match status {
        ThreadStatus::InProgress => (MessageKind::Progress, EventType::ThreadProgress),
        ThreadStatus::Blocked => (MessageKind::Question, EventType::ThreadBlocked),
        other => {
            return Err(Error::invalid(format!(
                "update status must be in_progress or blocked, not {other} (use done, fail or cancel)"
            )));
        }
    };
    let clock = Clock::new();
    let mut thread = open_thread(ctx.conn, &p.thread_id, &clock)?;
    require_holder(ctx.conn, &thread, &p.agent, p.lease_token.as_deref(), &clock)?;
    thread.status = status;
    let to = thread.created_by.clone();
    append(
        ctx,
        &clock,
        Append {
            new_thread: false,
            thread,
            event_type,
            actor: &p.agent,
            from: &p.agent,
            to,
            kind,
            input: p.message,
            mail: MailOpts::default(),
        },
    )
}

/// `inbox.reply`: anyone may reply inside an open thread. An `answer` to a blocked thread
/// moves it back to `in_progress`.
pub fn reply(ctx: &mut WriteCtx<'_>, p: ReplyParams) -> Result<MessageResult> {
    check_agent("from", &p.from)?;
    if let Some(to) = &p.to {
        check_agent("to", to)?;
    }
    check_message(&p.message)?;
    let kind = p.kind.unwrap_or(MessageKind::Answer);
    if !matches!(kind, MessageKind::Answer | MessageKind::Question | MessageKind::Progress | MessageKind::Control) {
        return Err(Error::invalid(format!("reply kind must be answer, question, progress or control, not {kind}")));
    }
    let clock = Clock::new();
    let mut thread = open_thread(ctx.conn, &p.thread_id, &clock)?;
    let to = p.to.clone().unwrap_or_else(|| {
        if p.from == thread.assigned_to { thread.created_by.clone() } else { thread.assigned_to.clone() }
    });
    if kind == MessageKind::Answer && thread.status == ThreadStatus::Blocked {
        thread.status = ThreadStatus::InProgress;
    }
    append(
        ctx,
        &clock,
        Append {
            new_thread: false,
            thread,
            event_type: EventType::ThreadReplied,
            actor: &p.from,
            from: &p.from,
            to,
            kind,
            input: p.message,
            mail: MailOpts::default(),
        },
    )
}

/// `inbox.done` / `inbox.fail`: the holder finishes the thread with a `result` message and
/// the lease is released.
pub fn finish(ctx: &mut WriteCtx<'_>, p: FinishParams, status: ThreadStatus) -> Result<MessageResult> {
    check_agent("agent", &p.agent)?;
    check_message(&p.message)?;
    let event_type = match status {
        ThreadStatus::Done => EventType::ThreadDone,
        ThreadStatus::Failed => EventType::ThreadFailed,
        other => return Err(Error::Internal(format!("finish with status {other}"))),
    };
    let clock = Clock::new();
    let mut thread = open_thread(ctx.conn, &p.thread_id, &clock)?;
    require_holder(ctx.conn, &thread, &p.agent, p.lease_token.as_deref(), &clock)?;
    release_lease(ctx.conn, &thread.thread_id, &clock)?;
    thread.status = status;
    if let Some(l) = &mut thread.lease {
        l.active = false;
    }
    let to = thread.created_by.clone();
    append(
        ctx,
        &clock,
        Append {
            new_thread: false,
            thread,
            event_type,
            actor: &p.agent,
            from: &p.agent,
            to,
            kind: MessageKind::Result,
            input: p.message,
            mail: MailOpts::default(),
        },
    )
}

/// `inbox.cancel`: anyone may cancel an open thread (typically its creator); any lease is
/// released and the holder is told with a `control` message.
pub fn cancel(ctx: &mut WriteCtx<'_>, p: CancelParams) -> Result<MessageResult> {
    check_agent("agent", &p.agent)?;
    check_text("reason", &p.reason)?;
    check_artifacts(&p.artifacts)?;
    let clock = Clock::new();
    let mut thread = open_thread(ctx.conn, &p.thread_id, &clock)?;
    release_lease(ctx.conn, &thread.thread_id, &clock)?;
    thread.status = ThreadStatus::Cancelled;
    if let Some(l) = &mut thread.lease {
        l.active = false;
    }
    let to = if p.agent == thread.assigned_to { thread.created_by.clone() } else { thread.assigned_to.clone() };
    let input = MessageInput { summary: p.reason, body: None, payload_json: None, artifacts: p.artifacts };
    append(
        ctx,
        &clock,
        Append {
            new_thread: false,
            thread,
            event_type: EventType::ThreadCancelled,
            actor: &p.agent,
            from: &p.agent,
            to,
            kind: MessageKind::Control,
            input,
            mail: MailOpts::default(),
        },
    )
}

/// `inbox.markRead`: the agent has read the thread's messages up to now.
pub fn mark_read(ctx: &mut WriteCtx<'_>, p: MarkReadParams) -> Result<MarkReadResult> {
    check_agent("agent", &p.agent)?;
    check_id("thread_id", &p.thread_id)?;
    let clock = Clock::new();
    read::thread(ctx.conn, &p.thread_id, &clock.now)?;
    let last = read::last_message_event(ctx.conn, &p.thread_id)?;
    mark_read_through(ctx.conn, &p.agent, &p.thread_id, last)?;
    Ok(MarkReadResult { thread_id: p.thread_id, agent: p.agent, read_through_event: last })
}
