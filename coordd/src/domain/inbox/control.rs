//! Typed control messages: what `control.send` appends, decided by the type's role, and
//! the requests they open and answer.
//!
//! - A **request** (`permission_request`, `shutdown_request`, `plan_approval_request`)
//!   opens a thread of its own, pending and assigned to the recipient, and is recorded
//!   under its request id (the payload's `request_id`, else its message id).
//! - A **response** answers the open request its payload's `request_id` names: only that
//!   request's recipient may answer (or an overseer, as themselves, one sent to the lead), the answer goes to the requester, and it closes the
//!   request's thread (`done`). A request withdrawn with `inbox.cancel` is `cancelled`.
//! - A **task assignment** opens a pending work thread for the recipient.
//! - Anything else is a **notice**: a thread of its own that is `done` at birth, or a
//!   message added to the open thread the sender names. Unknown types are notices, stored
//!   and delivered untouched.

use coord_proto::ErrorCode;
use coord_proto::types::*;
use serde_json::Value;

use super::shutdown;
use super::thread::{Append, load, open};
use crate::bound;
use crate::domain::check;
use crate::error::{Error, Result};
use crate::ids;
use crate::store::Tx;
use crate::store::repos::{RequestQuery, RequestRow};
use crate::time::Ts;

/// A typed message to write, and what it does to requests.
pub struct Typed {
    pub append: Append,
    pub priority: Priority,
    pub request: RequestEffect,
}

/// What a typed message does to requests once written.
pub enum RequestEffect {
    None,
    /// It opens a request under this id (none: its message id).
    Opens(Option<String>),
    /// It answers this request.
    Answers(RequestRow),
}

/// A message id chosen by a sender: `msg_` and 26 lowercase base32hex characters.
pub fn check_message_id(id: &str) -> Result<()> {
    check::chosen_id("message_id", "msg", id)
}

/// The message already stored under a sender-chosen id: the same send retried (same
/// sender and type) or a clash (`duplicate_message_id`).
pub fn existing(tx: &dyn Tx, p: &ControlSendParams) -> Result<Option<Message>> {
    let Some(id) = &p.message_id else { return Ok(None) };
    check_message_id(id)?;
    match tx.messages().message(id)? {
        None => Ok(None),
        Some(m) if m.from_agent == p.from && m.msg_type.as_deref() == Some(p.msg_type.as_str()) => Ok(Some(m)),
        Some(_) => Err(Error::app(
            ErrorCode::DuplicateMessageId,
            format!("message id '{id}' is already used by another message"),
        )),
    }
}

/// Check a typed send and decide what it appends. `to` is the resolved recipient for
/// everything but a response (which goes back to its requester). `stand_in` is the
/// addressee a response's sender may answer for besides themselves (an overseer answers
/// for the lead).
pub fn send(tx: &dyn Tx, now: Ts, p: ControlSendParams, to: Option<String>, stand_in: Option<&str>) -> Result<Typed> {
    check::agent("from", &p.from)?;
    check::agent("type", &p.msg_type)?;
    check::object("payload", &p.payload)?;
    let t = MessageType::from_name(&p.msg_type);
    t.check_payload(&p.payload).map_err(Error::invalid)?;
    if let Some(s) = &p.summary {
        check::text("summary", s)?;
    }
    let summary = p.summary.clone().unwrap_or_else(|| summary_of(&t, &p.from, &p.payload));
    let input =
        MessageInput { summary, body: p.body.clone(), payload_json: Some(p.payload.clone()), artifacts: vec![] };
    let base = |thread: Thread, new_thread: bool, event_type, to: String, kind| Append {
        new_thread,
        thread,
        event_type,
        from: p.from.clone(),
        to,
        kind,
        input: input.clone(),
        category: None,
        requires_ack: false,
        msg_type: Some(p.msg_type.clone()),
        message_id: p.message_id.clone(),
    };
    match t.role() {
        TypeRole::Response(request_type) => {
            let (thread, request) = answering(tx, now, &p, &t, request_type, stand_in)?;
            let priority = thread.priority;
            let to = request.from_agent.clone();
            let append = base(thread, false, EventType::ThreadDone, to, MessageKind::Control);
            Ok(Typed { append, priority, request: RequestEffect::Answers(request) })
        }
        role => {
            let to = to.ok_or_else(|| {
                Error::invalid("no recipient: give `to`, a `run_id` whose creator leads, or set the policy's lead")
            })?;
            check::agent("to", &to)?;
            let single = role == TypeRole::Notice || to != BROADCAST;
            if !single {
                return Err(Error::invalid(format!("a {t} needs one recipient, not broadcast")));
            }
            if let (TypeRole::Notice, Some(thread_id)) = (role, &p.thread_id) {
                let (thread, _) = open(tx, thread_id, now)?;
                let priority = p.priority.unwrap_or(thread.priority);
                let append = base(thread, false, EventType::MessageSent, to, MessageKind::Control);
                return Ok(Typed { append, priority, request: RequestEffect::None });
            }
            if p.thread_id.is_some() {
                return Err(Error::invalid(format!("a {t} opens a thread of its own: leave out thread_id")));
            }
            let (status, kind, default_priority) = match (role, &t) {
                (TypeRole::Request(_), MessageType::PermissionRequest) => {
                    (ThreadStatus::Pending, MessageKind::Control, Priority::Urgent)
                }
                (TypeRole::Request(_), _) => (ThreadStatus::Pending, MessageKind::Control, Priority::High),
                (TypeRole::Assignment, _) => (ThreadStatus::Pending, MessageKind::Task, Priority::Normal),
                _ => (ThreadStatus::Done, MessageKind::Control, Priority::Normal),
            };
            let task_id = match (&p.task_id, &t) {
                (Some(task), _) => task.clone(),
                (None, MessageType::TaskAssignment) => {
                    p.payload.get("task_id").and_then(Value::as_str).unwrap_or_default().to_string()
                }
                _ => String::new(),
            };
            let subject: String = input.summary.lines().next().unwrap_or_default().chars().take(200).collect();
            check::subject(&subject)?;
            let priority = p.priority.unwrap_or(default_priority);
            let thread = Thread {
                thread_id: ids::new_id("thr"),
                run_id: p.run_id.clone().unwrap_or_default(),
                task_id,
                subject,
                created_by: p.from.clone(),
                assigned_to: to.clone(),
                status,
                priority,
                latest_message_id: None,
                created_at: now.to_string(),
                updated_at: now.to_string(),
                lease: None,
            };
            let request = match role {
                TypeRole::Request(_) => {
                    let id = payload_request_id(&p.payload).map(str::to_string);
                    if let Some(id) = &id {
                        check::id("request_id", id)?;
                        if tx.requests().request(id)?.is_some() {
                            return Err(Error::invalid(format!("request id '{id}' is already used")));
                        }
                    }
                    RequestEffect::Opens(id)
                }
                _ => RequestEffect::None,
            };
            Ok(Typed { append: base(thread, true, EventType::ThreadCreated, to, kind), priority, request })
        }
    }
}

/// The open request a response answers, with its thread as it stands after the answer.
fn answering(
    tx: &dyn Tx,
    now: Ts,
    p: &ControlSendParams,
    t: &MessageType,
    request_type: &str,
    stand_in: Option<&str>,
) -> Result<(Thread, RequestRow)> {
    let id = payload_request_id(&p.payload)
        .ok_or_else(|| Error::invalid(format!("a {t} names the request it answers: payload.request_id")))?;
    let request = tx.requests().request(id)?.ok_or_else(|| Error::not_found(format!("request '{id}' not found")))?;
    if request.msg_type != request_type {
        return Err(Error::invalid(format!("request '{id}' is a {}, which a {t} does not answer", request.msg_type)));
    }
    if p.from != request.to_agent && stand_in != Some(request.to_agent.as_str()) {
        return Err(Error::app(
            ErrorCode::ResponseForbidden,
            format!(
                "request '{id}' was sent to {}; only they (or, for the lead, an overseer) may answer it",
                request.to_agent
            ),
        ));
    }
    if p.thread_id.as_ref().is_some_and(|t| *t != request.thread_id) {
        return Err(Error::invalid(format!("request '{id}' is in thread '{}'", request.thread_id)));
    }
    if p.to.as_ref().is_some_and(|to| *to != request.from_agent) {
        return Err(Error::invalid(format!("an answer goes to the requester, {}", request.from_agent)));
    }
    let (mut thread, _) = load(tx, &request.thread_id, now)?;
    if request.msg_type == MessageType::ShutdownRequest.as_str()
        && let Some(m) = tx.messages().message(&request.message_id)?
        && !thread.status.is_terminal()
    {
        shutdown::check_open(id, &m.payload_json, now)?;
    }
    if thread.status.is_terminal() {
        let how = if thread.status == ThreadStatus::Cancelled { "was cancelled" } else { "is already answered" };
        return Err(Error::app(ErrorCode::InvalidTransition, format!("request '{id}' {how}")));
    }
    thread.status = ThreadStatus::Done;
    Ok((thread, request))
}

/// Record the request a written message opened; returns its id.
pub fn record_request(tx: &mut dyn Tx, msg: &Message, thread: &Thread, id: Option<String>) -> Result<String> {
    let request_id = id.unwrap_or_else(|| msg.message_id.clone());
    tx.requests_mut().request_insert(&RequestRow {
        request_id: request_id.clone(),
        msg_type: msg.msg_type.clone().unwrap_or_default(),
        thread_id: thread.thread_id.clone(),
        message_id: msg.message_id.clone(),
        from_agent: msg.from_agent.clone(),
        to_agent: msg.to_agent.clone(),
        run_id: thread.run_id.clone(),
        task_id: thread.task_id.clone(),
        created_at: msg.created_at.clone(),
    })?;
    Ok(request_id)
}

/// A line saying what a typed message is, for a send without a summary.
pub fn summary_of(t: &MessageType, from: &str, payload: &Value) -> String {
    let s = |k: &str| payload.get(k).and_then(Value::as_str).unwrap_or_default();
    let line = match t {
        MessageType::PermissionRequest => {
            let what = payload.get("input").and_then(|i| i.get("command")).and_then(Value::as_str);
            match what {
                Some(cmd) => format!("Permission request from {from}: {} `{cmd}`", s("tool_name")),
                None => format!("Permission request from {from}: {}", s("tool_name")),
            }
        }
        MessageType::PermissionResponse => {
            let verdict = if payload["approved"] == Value::Bool(true) { "allowed" } else { "denied" };
            format!("Permission {verdict} by {from}")
        }
        MessageType::IdleNotification => format!("{from} is idle ({})", s("idle_reason")),
        MessageType::TaskAssignment => format!("Task for you: {}", s("subject")),
        MessageType::ShutdownRequest => format!("Shutdown requested by {from}"),
        MessageType::ShutdownApproved => format!("{from} is shutting down"),
        MessageType::ShutdownRejected => format!("{from} refused to shut down: {}", s("reason")),
        MessageType::ModeSetRequest => format!("Switch to permission mode {}", s("mode")),
        MessageType::TeamPermissionUpdate => format!("Team permissions updated by {from}"),
        MessageType::PlanApprovalRequest => format!("Plan approval request from {from}"),
        MessageType::PlanApprovalResponse => {
            let verdict = if payload["approved"] == Value::Bool(true) { "approved" } else { "rejected" };
            format!("Plan {verdict} by {from}")
        }
        MessageType::Other(name) => format!("{name} from {from}"),
    };
    line.chars().take(check::MAX_SUMMARY).collect()
}

/// `control.requests`. An expired shutdown request is `expired`, listed only with
/// `include_closed`.
pub fn requests(tx: &dyn Tx, now: Ts, p: RequestsParams) -> Result<RequestsResult> {
    for (field, v) in [("to", &p.to), ("from", &p.from)] {
        if let Some(v) = v {
            check::agent(field, v)?;
        }
    }
    let limit = check::limit(p.limit, coord_proto::DEFAULT_LIMIT)?;
    let q = RequestQuery {
        request_id: p.request_id,
        to: p.to,
        from: p.from,
        run_id: p.run_id,
        types: p.types,
        include_closed: p.include_closed,
        after: p.after,
        limit,
    };
    // Each view reads its request's message (whose payload may be large): stop reading
    // them once they hold the reply's budget.
    let (mut out, mut bytes, mut cut) = (Vec::new(), 0, false);
    for (row, thread_status) in tx.requests().requests_list(&q)? {
        if bytes >= bound::items_budget() {
            cut = true;
            break;
        }
        let v = view(tx, now, row, thread_status)?;
        if q.include_closed || v.status == RequestStatus::Open {
            bytes += bound::json_size(&v);
            out.push(v);
        }
    }
    let page = bound::page_cut(out, cut, |r: &RequestView| r.request_id.clone());
    Ok(RequestsResult { requests: page.items, truncated: page.truncated, next_after: page.next_after })
}

fn view(tx: &dyn Tx, now: Ts, row: RequestRow, thread_status: ThreadStatus) -> Result<RequestView> {
    let msg = tx
        .messages()
        .message(&row.message_id)?
        .ok_or_else(|| Error::Internal(format!("request '{}' lost its message", row.request_id)))?;
    let status = match thread_status {
        ThreadStatus::Done => RequestStatus::Answered,
        s if s.is_terminal() => RequestStatus::Cancelled,
        _ if shutdown::expired(&msg.payload_json, now) => RequestStatus::Expired,
        _ => RequestStatus::Open,
    };
    let response = match status {
        RequestStatus::Answered => {
            let latest = tx.threads().thread(&row.thread_id)?.and_then(|t| t.thread.latest_message_id);
            match latest {
                Some(id) => tx.messages().message(&id)?,
                None => None,
            }
        }
        _ => None,
    };
    Ok(RequestView {
        request_id: row.request_id,
        msg_type: row.msg_type,
        status,
        from: row.from_agent,
        to: row.to_agent,
        run_id: row.run_id,
        task_id: row.task_id,
        thread_id: row.thread_id,
        message_id: row.message_id,
        summary: msg.summary,
        payload: msg.payload_json,
        created_at: row.created_at,
        response,
    })
}
