//! What each message-writing call appends: `send` (a new thread, or a message in an open
//! one), `update` (progress or a block, by the holder), `reply` (by anyone), `done`/`fail`
//! (by the holder, releasing the lease) and `cancel`. Each returns the [`Append`] to write;
//! `ops` writes it and then delivers the mail and reconciles orch.

use coord_proto::ErrorCode;
use coord_proto::types::*;

use super::lease::{release, require_holder};
use super::thread::{Append, check_input, open};
use crate::domain::check;
use crate::error::{Error, Result};
use crate::ids;
use crate::store::Tx;
use crate::time::Ts;

/// `from` and the message of a send, checked before anything is looked up.
pub fn check_send(p: &SendParams) -> Result<()> {
    check::agent("from", &p.from)?;
    check_input(&p.message)
}

fn missing_task() -> Error {
    Error::app(ErrorCode::MissingTaskId, "a categorised message needs a task (task_id)")
}

/// `inbox.send` to the resolved addressee `to` (the task addressed, if any, becomes a new
/// thread's task).
pub fn send(
    tx: &dyn Tx,
    now: Ts,
    p: SendParams,
    to: String,
    target_task: Option<String>,
    category: Option<Category>,
    requires_ack: bool,
) -> Result<Append> {
    if let Some(thread_id) = &p.thread_id {
        let (thread, _) = open(tx, thread_id, now)?;
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
        return Ok(Append {
            new_thread: false,
            thread,
            event_type: EventType::MessageSent,
            from: p.from,
            to,
            kind: p.kind.unwrap_or(MessageKind::Progress),
            input: p.message,
            category,
            requires_ack,
            msg_type: None,
            message_id: None,
        });
    }
    let task_id = p.task_id.or(target_task).unwrap_or_default();
    if category.is_some() && task_id.trim().is_empty() {
        return Err(missing_task());
    }
    // Without a subject, the summary's first line stands in (shortened to fit).
    let subject = match p.subject {
        Some(s) => s,
        None => p.message.summary.lines().next().unwrap_or_default().chars().take(200).collect(),
    };
    check::subject(&subject)?;
    let thread = Thread {
        thread_id: ids::new_id("thr"),
        run_id: p.run_id.unwrap_or_default(),
        task_id,
        subject,
        created_by: p.from.clone(),
        assigned_to: to.clone(),
        status: ThreadStatus::Pending,
        priority: p.priority.unwrap_or(Priority::Normal),
        latest_message_id: None,
        created_at: now.to_string(),
        updated_at: now.to_string(),
        lease: None,
    };
    Ok(Append {
        new_thread: true,
        thread,
        event_type: EventType::ThreadCreated,
        from: p.from,
        to,
        kind: p.kind.unwrap_or(MessageKind::Task),
        input: p.message,
        category,
        requires_ack,
        msg_type: None,
        message_id: None,
    })
}

/// `inbox.update`: progress (`in_progress`) or a block (`blocked`) from the holder.
pub fn update(tx: &dyn Tx, now: Ts, p: UpdateParams) -> Result<Append> {
    check::agent("agent", &p.agent)?;
    check_input(&p.message)?;
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
    let (mut thread, lease) = open(tx, &p.thread_id, now)?;
    require_holder(lease.as_ref(), &thread, &p.agent, p.lease_token.as_deref(), now)?;
    thread.status = status;
    let to = thread.created_by.clone();
    Ok(reply_like(thread, event_type, p.agent, to, kind, p.message))
}

fn reply_like(
    thread: Thread,
    event_type: EventType,
    from: String,
    to: String,
    kind: MessageKind,
    input: MessageInput,
) -> Append {
    Append {
        new_thread: false,
        thread,
        event_type,
        from,
        to,
        kind,
        input,
        category: None,
        requires_ack: false,
        msg_type: None,
        message_id: None,
    }
}

/// `inbox.reply`: anyone may reply inside an open thread. An `answer` to a blocked thread
/// moves it back to `in_progress`.
pub fn reply(tx: &dyn Tx, now: Ts, p: ReplyParams) -> Result<Append> {
    check::agent("from", &p.from)?;
    if let Some(to) = &p.to {
        check::agent("to", to)?;
    }
    check_input(&p.message)?;
    let kind = p.kind.unwrap_or(MessageKind::Answer);
    if !matches!(kind, MessageKind::Answer | MessageKind::Question | MessageKind::Progress | MessageKind::Control) {
        return Err(Error::invalid(format!("reply kind must be answer, question, progress or control, not {kind}")));
    }
    let (mut thread, _) = open(tx, &p.thread_id, now)?;
    let to = p.to.unwrap_or_else(|| {
        if p.from == thread.assigned_to { thread.created_by.clone() } else { thread.assigned_to.clone() }
    });
    if kind == MessageKind::Answer && thread.status == ThreadStatus::Blocked {
        thread.status = ThreadStatus::InProgress;
    }
    Ok(reply_like(thread, EventType::ThreadReplied, p.from, to, kind, p.message))
}

/// `inbox.done` / `inbox.fail`: the holder finishes the thread with a `result` message and
/// the lease is released.
pub fn finish(tx: &mut dyn Tx, now: Ts, p: FinishParams, status: ThreadStatus) -> Result<Append> {
    check::agent("agent", &p.agent)?;
    check_input(&p.message)?;
    let event_type = match status {
        ThreadStatus::Done => EventType::ThreadDone,
        ThreadStatus::Failed => EventType::ThreadFailed,
        other => return Err(Error::Internal(format!("finish with status {other}"))),
    };
    let (mut thread, lease) = open(tx, &p.thread_id, now)?;
    require_holder(lease.as_ref(), &thread, &p.agent, p.lease_token.as_deref(), now)?;
    release(tx, &mut thread, now)?;
    thread.status = status;
    let to = thread.created_by.clone();
    Ok(reply_like(thread, event_type, p.agent, to, MessageKind::Result, p.message))
}

/// A launched session ended without `done` or `fail`: its launcher (`by`) fails the open
/// thread on the worker's behalf, without the holder check, releasing any lease; the
/// reason (exit status, log tail) is the `result` message.
pub fn fail_abandoned(tx: &mut dyn Tx, now: Ts, thread_id: &str, by: &str, input: MessageInput) -> Result<Append> {
    check_input(&input)?;
    let (mut thread, _) = open(tx, thread_id, now)?;
    release(tx, &mut thread, now)?;
    thread.status = ThreadStatus::Failed;
    let to = thread.created_by.clone();
    Ok(reply_like(thread, EventType::ThreadFailed, by.to_string(), to, MessageKind::Result, input))
}

/// `inbox.cancel`: anyone may cancel an open thread (typically its creator); any lease is
/// released and the other party is told with a `control` message.
pub fn cancel(tx: &mut dyn Tx, now: Ts, p: CancelParams) -> Result<Append> {
    check::agent("agent", &p.agent)?;
    check::text("reason", &p.reason)?;
    check::artifacts(&p.artifacts)?;
    let (mut thread, _) = open(tx, &p.thread_id, now)?;
    release(tx, &mut thread, now)?;
    thread.status = ThreadStatus::Cancelled;
    let to = if p.agent == thread.assigned_to { thread.created_by.clone() } else { thread.assigned_to.clone() };
    let input = MessageInput { summary: p.reason, body: None, payload_json: None, artifacts: p.artifacts };
    Ok(reply_like(thread, EventType::ThreadCancelled, p.agent, to, MessageKind::Control, input))
}
