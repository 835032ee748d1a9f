//! The session mailbox: delivering queued mail into a running session (`mail.check`),
//! counting it cheaply and handing out reminders once (`mail.pending`), and withdrawal.
//!
//! A mailbox is an agent, a task (`task:<id>` recipients), or both. An agent's mailbox
//! also holds the mail of the tasks it is running: the tasks of the threads it holds
//! (claimed, in progress or blocked). Mail sent to a task before anyone runs it stays
//! queued and is delivered when the task starts.

use coord_proto::ErrorCode;
use coord_proto::types::*;
use serde_json::json;

use super::copies::{self, item, task_recipient};
use crate::domain::check;
use crate::domain::events::{self, Draft};
use crate::error::{Error, Result};
use crate::store::Tx;
use crate::store::repos::QueuedQuery;
use crate::time::Ts;

/// Most messages one check delivers; the rest stay queued for the next one.
pub const MAX_CHECK: u32 = 200;

/// The recipients a mailbox reads: the agent, the tasks it runs, and the task.
pub fn mailbox(tx: &dyn Tx, agent: Option<&str>, task: Option<&str>) -> Result<Vec<String>> {
    let mut out = Vec::new();
    if let Some(a) = agent {
        check::agent("agent", a)?;
        out.push(a.to_string());
        out.extend(tx.tasks_running(a)?.iter().map(|t| task_recipient(t)));
    }
    if let Some(t) = task {
        check::id("task_id", t)?;
        out.push(task_recipient(t));
    }
    if out.is_empty() {
        return Err(Error::invalid("name the mailbox: agent or task_id (or both)"));
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// `mail.check`: deliver the mailbox's queued mail, urgent first, then oldest first.
pub fn check(tx: &mut dyn Tx, now: Ts, p: CheckParams) -> Result<CheckResult> {
    let recipients = mailbox(tx, p.agent.as_deref(), p.task_id.as_deref())?;
    let q = QueuedQuery {
        recipients: recipients.clone(),
        now,
        priorities: p.priorities,
        unreminded: false,
        limit: MAX_CHECK,
    };
    let rows = tx.mail_queued(&q)?;
    if rows.is_empty() {
        return Ok(CheckResult { messages: vec![], event_id: None });
    }
    let mut messages = Vec::with_capacity(rows.len());
    for mut row in rows {
        row.delivered_at = Some(now);
        tx.mail_save(&row)?;
        messages.push(item(row, now));
    }
    let owner = p.agent.clone().unwrap_or_else(|| recipients[0].clone());
    let ids: Vec<&str> = messages.iter().map(|m| m.message_id.as_str()).collect();
    let payload = json!({"message_ids": ids, "recipients": recipients});
    let summary = format!("delivered {} message(s) to {owner}", messages.len());
    let task = p.task_id.as_deref().unwrap_or_default();
    let draft = Draft::about(EventType::MailDelivered, &owner, task, &owner, &summary, &payload, now);
    let event_id = events::record(tx, &draft)?;
    Ok(CheckResult { messages, event_id: Some(event_id) })
}

/// `mail.pending` without `remind`: counts only, never writes.
pub fn pending(tx: &dyn Tx, now: Ts, p: &PendingParams) -> Result<PendingResult> {
    let recipients = mailbox(tx, p.agent.as_deref(), p.task_id.as_deref())?;
    let (pending, urgent) = tx.mail_queued_count(&recipients, now)?;
    Ok(PendingResult { pending, urgent, new: Vec::new() })
}

/// `mail.pending` with `remind`: also the queued mail nobody was reminded of, now marked.
pub fn remind(tx: &mut dyn Tx, now: Ts, p: PendingParams) -> Result<PendingResult> {
    let recipients = mailbox(tx, p.agent.as_deref(), p.task_id.as_deref())?;
    let (pending, urgent) = tx.mail_queued_count(&recipients, now)?;
    let q = QueuedQuery { recipients, now, priorities: vec![], unreminded: true, limit: MAX_CHECK };
    let mut new = Vec::new();
    for mut row in tx.mail_queued(&q)? {
        row.reminded_at = Some(now);
        tx.mail_save(&row)?;
        new.push(item(row, now));
    }
    Ok(PendingResult { pending, urgent, new })
}

/// `mail.withdraw`: the sender takes back every copy not delivered yet.
pub fn withdraw(tx: &mut dyn Tx, now: Ts, p: MailRef) -> Result<WithdrawResult> {
    check::agent("agent", &p.agent)?;
    check::id("message_id", &p.message_id)?;
    let Some(msg) = tx.message(&p.message_id)? else {
        return Err(Error::app(ErrorCode::MessageNotFound, format!("message '{}' not found", p.message_id)));
    };
    if msg.from_agent != p.agent {
        return Err(Error::app(
            ErrorCode::WithdrawForbidden,
            format!("only the sender ({}) may withdraw message '{}'", msg.from_agent, p.message_id),
        ));
    }
    let copies = tx.mail_queued_copies(&p.message_id, now)?;
    let Some(first) = copies.first().cloned() else {
        return Err(Error::app(
            ErrorCode::InvalidTransition,
            format!("message '{}' has no queued copy left to withdraw (delivered, expired or withdrawn)", p.message_id),
        ));
    };
    let mut recipients = Vec::with_capacity(copies.len());
    for mut row in copies {
        row.withdrawn_at = Some(now);
        tx.mail_save(&row)?;
        recipients.push(row.recipient);
    }
    let event_id = copies::record(tx, EventType::MailWithdrawn, &first, now)?;
    Ok(WithdrawResult { message_id: p.message_id, recipients, event_id })
}
