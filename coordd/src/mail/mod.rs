//! Mail: every message's per-recipient state (unread, then read, then acked), built on the
//! inbox's threads and messages rather than a second message store. A message gets one
//! `mail` row per recipient when it is appended: its `to_agent`, or every registered agent
//! but the sender for `broadcast`. Categories and the ack requirement live on the message.

pub mod delivery;
pub mod peers;
#[cfg(test)]
mod tests;

use coord_proto::ErrorCode;
use coord_proto::types::*;
use rusqlite::{Connection, OptionalExtension, Row};
use serde_json::json;

use crate::agents;
use crate::db::{WriteCtx, parse_col, parse_opt_col};
use crate::error::{Error, Result};
use crate::events::{self, Draft};
use crate::inbox::{self, check_agent, check_id};
use crate::util;

/// Columns of [`item_from_row`], over `mail x JOIN messages m JOIN threads t`.
pub const ITEM_COLUMNS: &str = "x.message_id, m.thread_id, t.run_id, t.task_id, m.from_agent, x.recipient, \
     m.category, t.subject, m.summary, m.body, m.kind, m.requires_ack, x.state, m.created_at, x.read_at, \
     x.acked_at, x.event_id, x.priority, x.delivered_at, x.expires_at, x.withdrawn_at";
pub const ITEM_FROM: &str =
    "mail x JOIN messages m ON m.message_id = x.message_id JOIN threads t ON t.thread_id = m.thread_id";

pub fn item_from_row(r: &Row<'_>) -> rusqlite::Result<MailItem> {
    let state: MailState = parse_col(r, 12)?;
    let delivered_at: Option<String> = r.get(18)?;
    let expires_at: Option<String> = r.get(19)?;
    let withdrawn_at: Option<String> = r.get(20)?;
    let delivery = if withdrawn_at.is_some() {
        Delivery::Withdrawn
    } else if state == MailState::Acked {
        Delivery::Acked
    } else if state == MailState::Read {
        Delivery::Read
    } else if delivered_at.is_some() {
        Delivery::Delivered
    } else if expires_at.as_deref().is_some_and(|e| e <= util::ts(util::now()).as_str()) {
        Delivery::Expired
    } else {
        Delivery::Queued
    };
    Ok(MailItem {
        message_id: r.get(0)?,
        thread_id: r.get(1)?,
        run_id: r.get(2)?,
        task_id: r.get(3)?,
        from_agent: r.get(4)?,
        to_agent: r.get(5)?,
        category: parse_opt_col(r, 6)?,
        subject: r.get(7)?,
        summary: r.get(8)?,
        body: r.get(9)?,
        kind: parse_col(r, 10)?,
        requires_ack: r.get(11)?,
        state,
        priority: parse_col(r, 17)?,
        delivery,
        created_at: r.get(13)?,
        delivered_at,
        read_at: r.get(14)?,
        acked_at: r.get(15)?,
        expires_at,
        withdrawn_at,
        event_id: r.get(16)?,
    })
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

/// How a message is delivered: its priority and expiry, and explicit recipients (the peers
/// of a task) instead of its `to_agent`.
#[derive(Debug, Clone)]
pub struct Delivering {
    pub priority: Priority,
    pub expires_at: Option<String>,
    pub recipients: Option<Vec<String>>,
}

/// Give a freshly appended message its recipients' mail rows, queued. A named recipient
/// that is unknown is recorded as an unregistered agent (unless strict).
pub fn deliver(ctx: &mut WriteCtx<'_>, msg: &Message, how: &Delivering, now: &str) -> Result<()> {
    let recipients = if let Some(r) = &how.recipients {
        r.clone()
    } else if msg.to_agent == BROADCAST {
        agents::broadcast_recipients(ctx.conn, &msg.from_agent)?
    } else if msg.to_agent != msg.from_agent {
        if !msg.to_agent.starts_with(TASK_RECIPIENT_PREFIX) {
            agents::record(ctx, &msg.to_agent, now)?;
        }
        vec![msg.to_agent.clone()]
    } else {
        Vec::new()
    };
    let mut stmt = ctx.conn.prepare_cached(
        "INSERT INTO mail (recipient, message_id, event_id, state, priority, expires_at) \
         VALUES (?1, ?2, ?3, 'unread', ?4, ?5)",
    )?;
    for r in recipients {
        stmt.execute(rusqlite::params![r, msg.message_id, msg.event_id, how.priority.as_str(), how.expires_at])?;
    }
    Ok(())
}

/// `mail.list`: an agent's mail, newest first.
pub fn list(conn: &Connection, p: &MailParams) -> Result<Vec<MailItem>> {
    check_agent("agent", &p.agent)?;
    let limit = match p.limit {
        None => MAIL_LIMIT_DEFAULT,
        Some(n) if (1..=MAIL_LIMIT_MAX).contains(&n) => n,
        Some(n) => {
            return Err(Error::app(ErrorCode::InvalidArgs, format!("limit must be 1 to {MAIL_LIMIT_MAX}, got {n}")));
        }
    };
    let sql = format!(
        "SELECT {ITEM_COLUMNS} FROM {ITEM_FROM} WHERE x.recipient = ?1 AND (?2 IS NULL OR x.state = ?2) \
         AND (?3 IS NULL OR t.task_id = ?3) ORDER BY x.event_id DESC LIMIT {limit}"
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(rusqlite::params![p.agent, p.state.map(|s| s.as_str()), p.task_id], item_from_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// One recipient's view of one message.
pub fn item(conn: &Connection, agent: &str, message_id: &str) -> Result<Option<MailItem>> {
    let sql = format!("SELECT {ITEM_COLUMNS} FROM {ITEM_FROM} WHERE x.recipient = ?1 AND x.message_id = ?2");
    Ok(conn.prepare_cached(&sql)?.query_row([agent, message_id], item_from_row).optional()?)
}

/// The recipient's mail row, or `message_not_found` (no such message) / `not_recipient`.
fn recipient_item(conn: &Connection, p: &MailRef, not_recipient: ErrorCode) -> Result<MailItem> {
    check_agent("agent", &p.agent)?;
    check_id("message_id", &p.message_id)?;
    if let Some(it) = item(conn, &p.agent, &p.message_id)? {
        if it.withdrawn_at.is_some() {
            return Err(Error::app(
                ErrorCode::InvalidTransition,
                format!("message '{}' was withdrawn by its sender", p.message_id),
            ));
        }
        return Ok(it);
    }
    if inbox::read::message(conn, &p.message_id)?.is_none() {
        return Err(Error::app(ErrorCode::MessageNotFound, format!("message '{}' not found", p.message_id)));
    }
    Err(Error::app(not_recipient, format!("message '{}' was not sent to '{}'", p.message_id, p.agent)))
}

/// Append `mail.read` / `mail.acked` in the message thread's context. The event names the
/// message in its payload only, so waits on message kinds never mistake it for a reply.
pub(crate) fn record(ctx: &mut WriteCtx<'_>, event_type: EventType, it: &MailItem, now: &str) -> Result<i64> {
    let thread = inbox::read::thread(ctx.conn, &it.thread_id, now)?;
    let verb = match event_type {
        EventType::MailAcked => "acked",
        EventType::MailWithdrawn => "lost (withdrawn)",
        _ => "read",
    };
    let summary = format!("{} {verb} {}", it.to_agent, it.message_id);
    let payload = json!({"message_id": it.message_id, "recipient": it.to_agent, "from_agent": it.from_agent,
        "state": it.state, "category": it.category});
    events::record(ctx, &Draft::for_thread(event_type, &thread, &it.to_agent, &summary, &payload, now))
}

/// `mail.read`: unread becomes read; read and acked stay as they are.
pub fn read(ctx: &mut WriteCtx<'_>, p: MailRef) -> Result<MailItemResult> {
    let mut it = recipient_item(ctx.conn, &p, ErrorCode::MessageNotFound)?;
    if it.state != MailState::Unread {
        return Ok(MailItemResult { mail: it, event_id: None });
    }
    let now = util::ts(util::now());
    ctx.conn
        .prepare_cached(
            "UPDATE mail SET state = 'read', read_at = ?3, delivered_at = COALESCE(delivered_at, ?3) \
             WHERE recipient = ?1 AND message_id = ?2",
        )?
        .execute([&p.agent, &p.message_id, &now])?;
    it.state = MailState::Read;
    it.delivery = Delivery::Read;
    it.delivered_at.get_or_insert_with(|| now.clone());
    it.read_at = Some(now.clone());
    let event_id = record(ctx, EventType::MailRead, &it, &now)?;
    Ok(MailItemResult { mail: it, event_id: Some(event_id) })
}

/// `mail.ack`: only a recipient may ack; acked is terminal (acking again changes nothing).
/// A message that does not require an ack may still be acked.
pub fn ack(ctx: &mut WriteCtx<'_>, p: MailRef) -> Result<MailItemResult> {
    let mut it = recipient_item(ctx.conn, &p, ErrorCode::AckForbidden)?;
    if it.state == MailState::Acked {
        return Ok(MailItemResult { mail: it, event_id: None });
    }
    let now = util::ts(util::now());
    ctx.conn
        .prepare_cached(
            "UPDATE mail SET state = 'acked', acked_at = ?3, read_at = COALESCE(read_at, ?3), \
             delivered_at = COALESCE(delivered_at, ?3) WHERE recipient = ?1 AND message_id = ?2",
        )?
        .execute([&p.agent, &p.message_id, &now])?;
    it.state = MailState::Acked;
    it.delivery = Delivery::Acked;
    it.delivered_at.get_or_insert_with(|| now.clone());
    it.read_at.get_or_insert_with(|| now.clone());
    it.acked_at = Some(now.clone());
    let event_id = record(ctx, EventType::MailAcked, &it, &now)?;
    Ok(MailItemResult { mail: it, event_id: Some(event_id) })
}
