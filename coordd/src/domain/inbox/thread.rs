//! A thread as its readers see it, and [`append`]: the one way a message is added to a
//! thread (a new one or an open one), together with its event.

use coord_proto::ErrorCode;
use coord_proto::types::*;
use serde_json::Value;

use crate::domain::check;
use crate::domain::events::Draft;
use crate::error::{Error, Result};
use crate::ids;
use crate::store::Tx;
use crate::store::repos::{LeaseRow, StoredThread};
use crate::time::Ts;

/// The public view of a stored thread at `now`: its lease is active until it expires or is
/// released.
pub fn view(st: StoredThread, now: Ts) -> Thread {
    let mut thread = st.thread;
    thread.lease = st.lease.map(|l| LeaseView {
        active: l.released_at.is_none() && l.expires_at > now,
        agent_id: l.agent_id,
        generation: l.generation,
        claimed_at: l.claimed_at.to_string(),
        expires_at: l.expires_at.to_string(),
    });
    thread
}

/// A thread and its lease row, or `not_found`.
pub fn load(tx: &dyn Tx, thread_id: &str, now: Ts) -> Result<(Thread, Option<LeaseRow>)> {
    let st =
        tx.threads().thread(thread_id)?.ok_or_else(|| Error::not_found(format!("thread '{thread_id}' not found")))?;
    let lease = st.lease.clone();
    Ok((view(st, now), lease))
}

/// The one agent a thread is assigned to, if it is assigned to one (not to nobody, a task's
/// mailbox, a task's peers or everyone).
pub fn assignee(t: &Thread) -> Option<&str> {
    Some(t.assigned_to.as_str()).filter(|a| !a.is_empty() && *a != BROADCAST && !a.contains(':'))
}

/// A thread that still accepts changes: not done, failed or cancelled.
pub fn open(tx: &dyn Tx, thread_id: &str, now: Ts) -> Result<(Thread, Option<LeaseRow>)> {
    check::id("thread_id", thread_id)?;
    let (t, lease) = load(tx, thread_id, now)?;
    if t.status.is_terminal() {
        return Err(Error::app(
            ErrorCode::InvalidTransition,
            format!("thread '{thread_id}' is {} and accepts no further changes", t.status),
        ));
    }
    Ok((t, lease))
}

/// Everything needed to append one message and its event to a thread.
pub struct Append {
    /// True when the thread does not exist yet: insert it instead of updating it.
    pub new_thread: bool,
    /// The thread as it stands after the change (status, assignee).
    pub thread: Thread,
    pub event_type: EventType,
    /// The sender, who is also the event's actor.
    pub from: String,
    pub to: String,
    pub kind: MessageKind,
    pub input: MessageInput,
    /// Mail category and ack requirement (only `send` sets them).
    pub category: Option<Category>,
    pub requires_ack: bool,
    /// A typed message's type (only `control.send` sets it).
    pub msg_type: Option<String>,
    /// A message id the sender chose (`control.send`); a new one otherwise.
    pub message_id: Option<String>,
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

/// Write the message (with its artifacts), the thread, the sender's read mark and the
/// event. The event, with the message attached, is returned for the caller to publish
/// (`Tx::publish`) once it has added the mail copies' note.
pub fn append(tx: &mut dyn Tx, now: Ts, a: Append) -> Result<(MessageResult, Event)> {
    let message_id = a.message_id.unwrap_or_else(|| ids::new_id("msg"));
    let mut thread = a.thread;
    thread.latest_message_id = Some(message_id.clone());
    thread.updated_at = now.to_string();
    let payload = a.input.payload_json.unwrap_or_else(empty_object);
    let artifacts = a
        .input
        .artifacts
        .into_iter()
        .map(|art| Artifact {
            artifact_id: ids::new_id("art"),
            message_id: message_id.clone(),
            path: art.path,
            kind: art.kind.unwrap_or_else(|| "file".into()),
            metadata_json: art.metadata_json.unwrap_or_else(empty_object),
            created_at: now.to_string(),
        })
        .collect();
    let mut event = Draft {
        message_id: Some(&message_id),
        ..Draft::for_thread(a.event_type, &thread, &a.from, &a.input.summary, &payload, now)
    }
    .event();
    event.set_message(Some(Message {
        message_id: message_id.clone(),
        thread_id: thread.thread_id.clone(),
        from_agent: a.from.clone(),
        to_agent: a.to,
        kind: a.kind,
        summary: a.input.summary.clone(),
        body: a.input.body.unwrap_or_default(),
        payload_json: payload.clone(),
        created_at: now.to_string(),
        event_id: 0,
        category: a.category,
        requires_ack: a.requires_ack,
        artifacts,
        msg_type: a.msg_type,
    }));
    let event_id = tx.events_mut().event_insert(&event)?;
    event.event_id = event_id;
    let message = event.message.as_mut().expect("the event carries its message");
    message.event_id = event_id;
    if a.new_thread {
        // Inserted once with its final values, before the message that references it.
        tx.threads_mut().thread_insert(&thread)?;
    }
    tx.messages_mut().message_insert(message)?;
    if !a.new_thread {
        tx.threads_mut().thread_save(&thread)?;
        // The sender has read the thread up to its own message. (A new thread holds
        // nothing addressed to its sender yet, so there is no mark to write.)
        tx.threads_mut().read_mark(&a.from, &thread.thread_id, event_id)?;
    }
    let message = message.clone();
    Ok((MessageResult { thread, message, event_id }, event))
}

/// A message's input as given: summary, payload and artifacts checked.
pub fn check_input(input: &MessageInput) -> Result<()> {
    check::text("summary", &input.summary)?;
    if let Some(p) = &input.payload_json {
        check::object("payload_json", p)?;
    }
    check::artifacts(&input.artifacts)
}
