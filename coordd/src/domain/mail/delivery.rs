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
use crate::bound;
use crate::domain::check;
use crate::domain::events::{self, Draft};
use crate::error::{Error, Result};
use crate::store::Tx;
use crate::store::repos::{MailRow, QueuedQuery};
use crate::time::Ts;

/// Most messages one check delivers; the rest stay queued for the next one.
pub const MAX_CHECK: u32 = 200;

/// The recipients a mailbox reads: the agent, the tasks it runs, and the task.
pub fn mailbox(tx: &dyn Tx, agent: Option<&str>, task: Option<&str>) -> Result<Vec<String>> {
    let mut out = Vec::new();
    if let Some(a) = agent {
        check::agent("agent", a)?;
        out.push(a.to_string());
        out.extend(tx.threads().tasks_running(a)?.iter().map(|t| task_recipient(t)));
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

/// Does `agent` run task `task`: does it hold an open thread of the task assigned to it
/// (dispatched to it and not yet claimed, or claimed)? Its session reads the task's mail.
pub fn runs_task(tx: &dyn Tx, agent: &str, task: &str) -> Result<bool> {
    let open = vec![ThreadStatus::Pending, ThreadStatus::Claimed, ThreadStatus::InProgress, ThreadStatus::Blocked];
    let q = ListParams {
        assigned_to: Some(agent.to_string()),
        task_id: Some(task.to_string()),
        statuses: open,
        ..Default::default()
    };
    Ok(!tx.threads().threads_list(&q, 1)?.is_empty())
}

/// `mail.check`: deliver the mailbox's queued mail, urgent first, then oldest first.
pub fn check(tx: &mut dyn Tx, now: Ts, p: CheckParams) -> Result<CheckResult> {
    let recipients = mailbox(tx, p.agent.as_deref(), p.task_id.as_deref())?;
    let rows = if p.message_ids.is_empty() {
        let q = QueuedQuery {
            recipients: recipients.clone(),
            now,
            priorities: p.priorities,
            unreminded: false,
            limit: MAX_CHECK,
        };
        tx.mail().mail_queued(&q)?
    } else {
        handed_over(tx, now, &recipients, &p)?
    };
    if rows.is_empty() {
        return Ok(CheckResult { messages: vec![], event_id: None, truncated: false });
    }
    let (rows, truncated) = fitting(rows, now, |row| row.delivered_at = Some(now));
    let mut messages = Vec::with_capacity(rows.len());
    for (row, m) in rows {
        tx.mail_mut().mail_save(&row)?;
        messages.push(m);
    }
    let owner = p.agent.clone().unwrap_or_else(|| recipients[0].clone());
    let ids: Vec<&str> = messages.iter().map(|m| m.message_id.as_str()).collect();
    let payload = json!({"message_ids": ids, "recipients": recipients});
    let summary = format!("delivered {} message(s) to {owner}", messages.len());
    let task = p.task_id.as_deref().unwrap_or_default();
    let draft = Draft::about(EventType::MailDelivered, &owner, task, &owner, &summary, &payload, now);
    let event_id = events::record(tx, &draft)?;
    Ok(CheckResult { messages, event_id: Some(event_id), truncated })
}

/// The leading `rows`, changed by `mark`, whose items fit in one reply (`bound::fit`; the
/// rest stay queued for the next call), with their items; whether some were left.
fn fitting(rows: Vec<MailRow>, now: Ts, mark: impl Fn(&mut MailRow)) -> (Vec<(MailRow, MailItem)>, bool) {
    let marked = rows
        .into_iter()
        .map(|mut row| {
            mark(&mut row);
            let m = item(row.clone(), now);
            (row, m)
        })
        .collect();
    bound::fit(marked, bound::items_budget(), |(_, m)| bound::json_size(m))
}

/// The mailbox's queued copies of the messages a check names (`message_ids`): mail handed
/// to the agent by another path, such as a wait that woke on it.
fn handed_over(tx: &dyn Tx, now: Ts, recipients: &[String], p: &CheckParams) -> Result<Vec<MailRow>> {
    if p.message_ids.len() > MAX_CHECK as usize {
        return Err(Error::invalid(format!("at most {MAX_CHECK} message_ids per check")));
    }
    let mut rows = Vec::new();
    for id in &p.message_ids {
        check::id("message_ids", id)?;
        let wanted = |r: &MailRow| {
            recipients.contains(&r.recipient) && (p.priorities.is_empty() || p.priorities.contains(&r.priority))
        };
        rows.extend(tx.mail().mail_queued_copies(id, now)?.into_iter().filter(wanted));
    }
    Ok(rows)
}

/// `mail.pending` without `remind`: counts only, never writes.
pub fn pending(tx: &dyn Tx, now: Ts, p: &PendingParams) -> Result<PendingResult> {
    let recipients = mailbox(tx, p.agent.as_deref(), p.task_id.as_deref())?;
    let (pending, urgent) = tx.mail().mail_queued_count(&recipients, now)?;
    Ok(PendingResult { pending, urgent, new: Vec::new(), truncated: false })
}

/// `mail.pending` with `remind`: also the queued mail nobody was reminded of, now marked.
pub fn remind(tx: &mut dyn Tx, now: Ts, p: PendingParams) -> Result<PendingResult> {
    let recipients = mailbox(tx, p.agent.as_deref(), p.task_id.as_deref())?;
    let (pending, urgent) = tx.mail().mail_queued_count(&recipients, now)?;
    let q = QueuedQuery { recipients, now, priorities: vec![], unreminded: true, limit: MAX_CHECK };
    let (rows, truncated) = fitting(tx.mail().mail_queued(&q)?, now, |row| row.reminded_at = Some(now));
    let mut new = Vec::with_capacity(rows.len());
    for (row, m) in rows {
        tx.mail_mut().mail_save(&row)?;
        new.push(m);
    }
    Ok(PendingResult { pending, urgent, new, truncated })
}

/// `mail.withdraw`: the sender takes back every copy not delivered yet.
pub fn withdraw(tx: &mut dyn Tx, now: Ts, p: MailRef) -> Result<WithdrawResult> {
    let why = format!("by {}", p.agent);
    withdraw_because(tx, now, p, &why)
}

/// [`withdraw`], its event saying `why` (a settled request's copies: "the request was
/// answered").
pub fn withdraw_because(tx: &mut dyn Tx, now: Ts, p: MailRef, why: &str) -> Result<WithdrawResult> {
    check::agent("agent", &p.agent)?;
    check::id("message_id", &p.message_id)?;
    let Some(msg) = tx.messages().message(&p.message_id)? else {
        return Err(Error::app(ErrorCode::MessageNotFound, format!("message '{}' not found", p.message_id)));
    };
    if msg.from_agent != p.agent {
        return Err(Error::app(
            ErrorCode::WithdrawForbidden,
            format!("only the sender ({}) may withdraw message '{}'", msg.from_agent, p.message_id),
        ));
    }
    let copies = tx.mail().mail_queued_copies(&p.message_id, now)?;
    let Some(first) = copies.first().cloned() else {
        return Err(Error::app(
            ErrorCode::InvalidTransition,
            format!("message '{}' has no queued copy left to withdraw (delivered, expired or withdrawn)", p.message_id),
        ));
    };
    let mut recipients = Vec::with_capacity(copies.len());
    for mut row in copies {
        row.withdrawn_at = Some(now);
        tx.mail_mut().mail_save(&row)?;
        recipients.push(row.recipient);
    }
    let event_id = copies::record_why(tx, EventType::MailWithdrawn, &first, Some(why), now)?;
    Ok(WithdrawResult { message_id: p.message_id, recipients, event_id })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::check as delivery_check;
    use super::*;
    use crate::ops::messages;
    use crate::store::sqlite::testing::Memory;

    fn send(m: &Memory, to: &str, priority: Priority, expires: Option<u64>) -> String {
        let p = SendParams {
            from: "lead".into(),
            to: to.into(),
            task_id: Some("t1".into()),
            priority: Some(priority),
            expires_in_seconds: expires,
            message: MessageInput { summary: "s".into(), ..Default::default() },
            ..Default::default()
        };
        m.write(|tx, now| messages::send(tx, now, p)).unwrap().message.message_id
    }

    fn mailbox_of(agent: &str) -> PendingParams {
        PendingParams { agent: Some(agent.into()), task_id: None, remind: true }
    }

    fn remind_ids(m: &Memory, agent: &str) -> Vec<String> {
        let r = m.write(|tx, now| remind(tx, now, mailbox_of(agent))).unwrap();
        r.new.into_iter().map(|i| i.message_id).collect()
    }

    #[test]
    fn each_queued_message_is_reminded_of_at_most_once() {
        let m = Memory::new();
        let first = send(&m, "w", Priority::Normal, None);
        let second = send(&m, "w", Priority::Normal, None);
        assert_eq!(remind_ids(&m, "w"), [first, second]);
        assert!(remind_ids(&m, "w").is_empty(), "nothing new the second time");
        let third = send(&m, "w", Priority::Normal, None);
        assert_eq!(remind_ids(&m, "w"), [third], "only the message that came since");
        assert!(m.events().iter().all(|e| e.event_type != EventType::MailDelivered), "a reminder delivers nothing");
    }

    #[test]
    fn a_reminder_keeps_the_mail_queued_and_counted() {
        let m = Memory::new();
        send(&m, "w", Priority::Normal, None);
        send(&m, "w", Priority::Urgent, None);
        let r = m.write(|tx, now| remind(tx, now, mailbox_of("w"))).unwrap();
        assert_eq!((r.pending, r.urgent), (2, 1));
        assert_eq!(r.new[0].priority, Priority::Urgent, "urgent first");
        assert!(r.new.iter().all(|i| i.delivery == Delivery::Queued));
        let again = m.write(|tx, now| remind(tx, now, mailbox_of("w"))).unwrap();
        assert_eq!((again.pending, again.urgent, again.new.len()), (2, 1, 0));
        let check = CheckParams { agent: Some("w".into()), ..Default::default() };
        assert_eq!(
            m.write(|tx, now| delivery_check(tx, now, check)).unwrap().messages.len(),
            2,
            "reminded mail is still delivered"
        );
    }

    #[test]
    fn counting_without_remind_marks_nothing() {
        let m = Memory::new();
        let id = send(&m, "w", Priority::Normal, None);
        let count = PendingParams { remind: false, ..mailbox_of("w") };
        let r = m.read(|tx, now| pending(tx, now, &count)).unwrap();
        assert_eq!((r.pending, r.urgent, r.new.len()), (1, 0, 0));
        assert_eq!(remind_ids(&m, "w"), [id], "a count is not a reminder");
    }

    #[test]
    fn delivered_expired_and_withdrawn_mail_is_never_reminded_of() {
        let m = Memory::new();
        send(&m, "w", Priority::Normal, None);
        let check = CheckParams { agent: Some("w".into()), ..Default::default() };
        m.write(|tx, now| delivery_check(tx, now, check)).unwrap();
        send(&m, "w", Priority::Normal, Some(60));
        let withdrawn = send(&m, "w", Priority::Normal, None);
        let by_sender = MailRef { agent: "lead".into(), message_id: withdrawn };
        m.write(|tx, now| withdraw(tx, now, by_sender)).unwrap();
        m.advance(Duration::from_secs(61));
        let r = m.write(|tx, now| remind(tx, now, mailbox_of("w"))).unwrap();
        assert_eq!((r.pending, r.new.len()), (0, 0));
    }

    #[test]
    fn a_task_mailbox_is_reminded_of_its_own_mail_only() {
        let m = Memory::new();
        let p = SendParams {
            from: "lead".into(),
            to_task: Some("backend".into()),
            message: MessageInput { summary: "s".into(), ..Default::default() },
            ..Default::default()
        };
        let for_task = m.write(|tx, now| messages::send(tx, now, p)).unwrap().message.message_id;
        send(&m, "w", Priority::Normal, None);
        let task_box = PendingParams { agent: None, task_id: Some("backend".into()), remind: true };
        let r = m.write(|tx, now| remind(tx, now, task_box)).unwrap();
        assert_eq!(r.new.iter().map(|i| i.message_id.as_str()).collect::<Vec<_>>(), [for_task.as_str()]);
        assert_eq!(r.pending, 1);
    }

    #[test]
    fn a_reminder_needs_a_mailbox() {
        let m = Memory::new();
        let nobody = PendingParams { agent: None, task_id: None, remind: true };
        let e = m.write(|tx, now| remind(tx, now, nobody)).unwrap_err();
        assert_eq!(e.code(), Some(ErrorCode::InvalidInput));
        let blank = PendingParams { agent: Some(String::new()), ..mailbox_of("w") };
        assert_eq!(m.write(|tx, now| remind(tx, now, blank)).unwrap_err().code(), Some(ErrorCode::InvalidInput));
    }
}
