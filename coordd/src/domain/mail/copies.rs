//! Per-recipient copies of messages: who gets one (addressing), the copies a message gets
//! when it is appended, their delivery state, `mail.list`, `mail.read` and `mail.ack`.
//!
//! A message gets one copy per recipient: its `to_agent` (an agent, or `task:<id>` for
//! mail addressed to a task), every registered agent but the sender for `broadcast`, or
//! the explicit recipients of a send to peers. The sender gets none.

use coord_proto::ErrorCode;
use coord_proto::types::*;
use serde_json::json;

use super::peers;
use crate::bound;
use crate::domain::check;
use crate::domain::events::{self, Draft};
use crate::error::{Error, Result};
use crate::store::Tx;
use crate::store::repos::{MailQuery, MailRow};
use crate::time::Ts;

/// Longest `expires_in_seconds` accepted (one year).
const MAX_EXPIRY_SECONDS: u64 = 365 * 24 * 3600;

/// The recipient name of a task's mail.
pub fn task_recipient(task_id: &str) -> String {
    format!("{TASK_RECIPIENT_PREFIX}{task_id}")
}

/// Where a send goes.
#[derive(Debug, Clone)]
pub struct Address {
    /// The message's `to_agent`: an agent, `broadcast`, `task:<id>` or `peers:<task>`.
    pub to: String,
    /// The copies' recipients when they are not `to` (several peers).
    pub recipients: Option<Vec<String>>,
    /// The task a send to a task (or one peer) addresses: a new thread's task.
    pub task: Option<String>,
}

/// Resolve the addressee of a send: exactly one of `to`, `to_task` and `to_peer`.
pub fn address(tx: &dyn Tx, p: &SendParams) -> Result<Address> {
    match (p.to.is_empty(), &p.to_task, &p.to_peer) {
        (false, None, None) => {
            check::agent("to", &p.to)?;
            if p.to.starts_with(TASK_RECIPIENT_PREFIX) {
                return Err(Error::invalid(format!("address tasks with to_task, not to '{}'", p.to)));
            }
            Ok(Address { to: p.to.clone(), recipients: None, task: None })
        }
        (true, Some(task), None) => {
            check::id("to_task", task)?;
            Ok(Address { to: task_recipient(task), recipients: None, task: Some(task.clone()) })
        }
        (true, None, Some(mine)) => match peers::of(tx, mine)?.as_slice() {
            [] => Err(Error::not_found(format!("task '{mine}' has no linked peer (link one with peers.link)"))),
            [one] => Ok(Address { to: task_recipient(one), recipients: None, task: Some(one.clone()) }),
            many => Ok(Address {
                to: format!("peers:{mine}"),
                recipients: Some(many.iter().map(|t| task_recipient(t)).collect()),
                task: None,
            }),
        },
        _ => Err(Error::invalid("give exactly one recipient: to, to_task or to_peer")),
    }
}

/// Parse a category as given on the wire (case-insensitive), or `invalid_category`.
pub fn parse_category(text: &str) -> Result<Category> {
    text.trim().to_ascii_uppercase().parse::<Category>().map_err(|_| {
        Error::app(
            ErrorCode::InvalidCategory,
            format!("invalid category '{text}' (expected one of: HANDOFF, BLOCKED, DECISION, INFO)"),
        )
    })
}

/// A send's category and whether it requires an ack (HANDOFF and BLOCKED do by default).
pub fn category(p: &SendParams) -> Result<(Option<Category>, bool)> {
    let category = p.category.as_deref().map(parse_category).transpose()?;
    let requires_ack = p.requires_ack.unwrap_or(category.is_some_and(Category::requires_ack_by_default));
    Ok((category, requires_ack))
}

/// When a send's queued copies expire, if it asks for that.
pub fn expiry(p: &SendParams, now: Ts) -> Result<Option<Ts>> {
    match p.expires_in_seconds {
        None => Ok(None),
        Some(s) if (1..=MAX_EXPIRY_SECONDS).contains(&s) => Ok(Some(now.plus_secs(s))),
        Some(s) => Err(Error::invalid(format!("expires_in_seconds must be 1 to {MAX_EXPIRY_SECONDS}, got {s}"))),
    }
}

/// How a message's copies are made: their priority and expiry, and explicit recipients
/// (the peers of a task) instead of its `to_agent`.
#[derive(Debug, Clone)]
pub struct Delivering {
    pub priority: Priority,
    pub expires_at: Option<Ts>,
    pub recipients: Option<Vec<String>>,
}

impl Delivering {
    /// The default: the thread's priority, no expiry, to `to_agent`.
    pub fn plain(priority: Priority) -> Self {
        Delivering { priority, expires_at: None, recipients: None }
    }
}

/// The agent a message names as its single recipient (not `broadcast`, a task or the
/// sender): the one an unknown name gets recorded for.
pub fn named_agent<'m>(msg: &'m Message, how: &Delivering) -> Option<&'m str> {
    let to = msg.to_agent.as_str();
    let named = how.recipients.is_none() && to != BROADCAST && to != msg.from_agent;
    (named && !to.starts_with(TASK_RECIPIENT_PREFIX)).then_some(to)
}

/// Give a freshly appended message its recipients' copies, queued; what they are, for the
/// message's live event.
pub fn deliver(tx: &mut dyn Tx, thread: &Thread, msg: &Message, how: &Delivering) -> Result<EventMail> {
    let recipients = if let Some(r) = &how.recipients {
        r.clone()
    } else if msg.to_agent == BROADCAST {
        tx.agents().agents_registered(&msg.from_agent)?
    } else if msg.to_agent != msg.from_agent {
        vec![msg.to_agent.clone()]
    } else {
        Vec::new()
    };
    for recipient in &recipients {
        tx.mail_mut().mail_insert(&MailRow {
            recipient: recipient.clone(),
            message_id: msg.message_id.clone(),
            event_id: msg.event_id,
            thread_id: thread.thread_id.clone(),
            run_id: thread.run_id.clone(),
            task_id: thread.task_id.clone(),
            subject: thread.subject.clone(),
            from_agent: msg.from_agent.clone(),
            kind: msg.kind,
            category: msg.category,
            summary: msg.summary.clone(),
            body: msg.body.clone(),
            requires_ack: msg.requires_ack,
            created_at: msg.created_at.clone(),
            state: MailState::Unread,
            priority: how.priority,
            delivered_at: None,
            read_at: None,
            acked_at: None,
            expires_at: how.expires_at,
            withdrawn_at: None,
            reminded_at: None,
        })?;
    }
    // In name order, as a replay reads them back (`events::replay_page`).
    let mut recipients = recipients;
    recipients.sort();
    Ok(EventMail { recipients, priority: how.priority, expires_at: how.expires_at.map(|t| t.to_string()) })
}

/// Where a copy stands at `now`: withdrawn, acked, read, delivered, expired (its expiry
/// passed while queued) or queued.
pub fn delivery(row: &MailRow, now: Ts) -> Delivery {
    if row.withdrawn_at.is_some() {
        Delivery::Withdrawn
    } else if row.state == MailState::Acked {
        Delivery::Acked
    } else if row.state == MailState::Read {
        Delivery::Read
    } else if row.delivered_at.is_some() {
        Delivery::Delivered
    } else if row.expires_at.is_some_and(|e| e <= now) {
        Delivery::Expired
    } else {
        Delivery::Queued
    }
}

/// A copy as its recipient sees it.
pub fn item(row: MailRow, now: Ts) -> MailItem {
    let text = |t: Option<Ts>| t.map(|t| t.to_string());
    MailItem {
        delivery: delivery(&row, now),
        delivered_at: text(row.delivered_at),
        read_at: text(row.read_at),
        acked_at: text(row.acked_at),
        expires_at: text(row.expires_at),
        withdrawn_at: text(row.withdrawn_at),
        message_id: row.message_id,
        thread_id: row.thread_id,
        run_id: row.run_id,
        task_id: row.task_id,
        from_agent: row.from_agent,
        to_agent: row.recipient,
        category: row.category,
        subject: row.subject,
        summary: row.summary,
        body: row.body,
        kind: row.kind,
        requires_ack: row.requires_ack,
        state: row.state,
        priority: row.priority,
        created_at: row.created_at,
        event_id: row.event_id,
    }
}

/// `mail.list`: an agent's mail, newest first.
pub fn list(tx: &dyn Tx, now: Ts, p: MailParams) -> Result<MailResult> {
    check::agent("agent", &p.agent)?;
    let limit = match p.limit {
        None => MAIL_LIMIT_DEFAULT,
        Some(n) if (1..=MAIL_LIMIT_MAX).contains(&n) => n,
        Some(n) => return Err(check::invalid_args(format!("limit must be 1 to {MAIL_LIMIT_MAX}, got {n}"))),
    };
    if p.before_event.is_some_and(|e| e < 0) {
        return Err(check::invalid_args("before_event must not be negative"));
    }
    let (recipient, state, task_id, before_event) = (p.agent, p.state, p.task_id, p.before_event);
    let q = MailQuery { recipient, state, task_id, before_event, limit, max_bytes: bound::items_budget() };
    let read = tx.mail().mail_list(&q)?.map(|r| item(r, now));
    let page = bound::page_read(read, |m: &MailItem| m.event_id);
    Ok(MailResult { mail: page.items, truncated: page.truncated, next_after: page.next_after })
}

/// The recipient's copy, or `message_not_found` (no such message) / `not_recipient`.
fn recipient_copy(tx: &dyn Tx, p: &MailRef, not_recipient: ErrorCode) -> Result<MailRow> {
    check::agent("agent", &p.agent)?;
    check::id("message_id", &p.message_id)?;
    if let Some(row) = tx.mail().mail_item(&p.agent, &p.message_id)? {
        if row.withdrawn_at.is_some() {
            return Err(Error::app(
                ErrorCode::InvalidTransition,
                format!("message '{}' was withdrawn by its sender", p.message_id),
            ));
        }
        return Ok(row);
    }
    if tx.messages().message_cursor(&p.message_id)?.is_none() {
        return Err(Error::app(ErrorCode::MessageNotFound, format!("message '{}' not found", p.message_id)));
    }
    Err(Error::app(not_recipient, format!("message '{}' was not sent to '{}'", p.message_id, p.agent)))
}

/// Record `mail.read`, `mail.acked` or `mail.withdrawn` in the message thread's context.
/// The event names the message in its payload only, so waits on message kinds never
/// mistake it for a reply.
/// A withdrawal's summary says whose copy went and why (`why`: "by lead", "the request
/// was answered"), never that something was lost.
pub fn record(tx: &mut dyn Tx, event_type: EventType, row: &MailRow, now: Ts) -> Result<i64> {
    record_why(tx, event_type, row, None, now)
}

/// [`record`], a withdrawal saying why.
pub fn record_why(tx: &mut dyn Tx, event_type: EventType, row: &MailRow, why: Option<&str>, now: Ts) -> Result<i64> {
    let thread = tx
        .threads()
        .thread(&row.thread_id)?
        .ok_or_else(|| Error::not_found(format!("thread '{}' not found", row.thread_id)))?
        .thread;
    let summary = match event_type {
        EventType::MailAcked => format!("{} acked {}", row.recipient, row.message_id),
        EventType::MailWithdrawn => {
            let why = why.map(|w| format!(": {w}")).unwrap_or_default();
            format!("{}'s copy of {} withdrawn{why}", row.recipient, row.message_id)
        }
        _ => format!("{} read {}", row.recipient, row.message_id),
    };
    let payload = json!({"message_id": row.message_id, "recipient": row.recipient, "from_agent": row.from_agent,
        "state": row.state, "category": row.category});
    events::record(tx, &Draft::for_thread(event_type, &thread, &row.recipient, &summary, &payload, now))
}

/// `mail.read`: unread becomes read (and delivered, if it was not); read and acked stay.
pub fn read(tx: &mut dyn Tx, now: Ts, p: MailRef) -> Result<MailItemResult> {
    let mut row = recipient_copy(tx, &p, ErrorCode::MessageNotFound)?;
    if row.state != MailState::Unread {
        return Ok(MailItemResult { mail: item(row, now), event_id: None });
    }
    row.state = MailState::Read;
    row.read_at = Some(now);
    row.delivered_at.get_or_insert(now);
    tx.mail_mut().mail_save(&row)?;
    let event_id = record(tx, EventType::MailRead, &row, now)?;
    Ok(MailItemResult { mail: item(row, now), event_id: Some(event_id) })
}

/// `mail.ack`: only a recipient may ack; acked is terminal (acking again changes nothing).
/// A message that does not require an ack may still be acked. Acking implies read and
/// delivered.
pub fn ack(tx: &mut dyn Tx, now: Ts, p: MailRef) -> Result<MailItemResult> {
    let mut row = recipient_copy(tx, &p, ErrorCode::AckForbidden)?;
    if row.state == MailState::Acked {
        return Ok(MailItemResult { mail: item(row, now), event_id: None });
    }
    row.state = MailState::Acked;
    row.acked_at = Some(now);
    row.read_at.get_or_insert(now);
    row.delivered_at.get_or_insert(now);
    tx.mail_mut().mail_save(&row)?;
    let event_id = record(tx, EventType::MailAcked, &row, now)?;
    Ok(MailItemResult { mail: item(row, now), event_id: Some(event_id) })
}
