//! The session mailbox: delivering queued mail into a running session (`mail.check`),
//! counting it cheaply and handing out reminders once (`mail.pending`), and withdrawal.
//!
//! A mailbox is an agent, a task (`task:<id>` recipients), or both. An agent's mailbox
//! also holds the mail of the tasks it is running: the tasks of the threads it holds
//! (claimed, in progress or blocked). Mail sent to a task before anyone runs it stays
//! queued and is delivered when the task starts.

use coord_proto::ErrorCode;
use coord_proto::types::*;
use rusqlite::{Connection, params_from_iter, types::Value as SqlValue};
use serde_json::json;

use super::{ITEM_COLUMNS, ITEM_FROM, item_from_row};
use crate::db::WriteCtx;
use crate::error::{Error, Result};
use crate::events::{self, Draft};
use crate::inbox::{check_agent, check_id};
use crate::util;

/// Most messages one check delivers; the rest stay queued for the next one.
const MAX_CHECK: u32 = 200;

/// Rank priorities for delivery order (urgent first).
const PRIORITY_RANK: &str = "CASE x.priority WHEN 'urgent' THEN 0 WHEN 'high' THEN 1 WHEN 'normal' THEN 2 ELSE 3 END";

/// The recipient name of a task's mail.
pub fn task_recipient(task_id: &str) -> String {
    format!("{TASK_RECIPIENT_PREFIX}{task_id}")
}

/// The recipients a mailbox reads: the agent, the tasks it runs, and the task.
pub fn mailbox(conn: &Connection, agent: Option<&str>, task: Option<&str>) -> Result<Vec<String>> {
    let mut out = Vec::new();
    if let Some(a) = agent {
        check_agent("agent", a)?;
        out.push(a.to_string());
        let mut stmt = conn.prepare_cached(
            "SELECT DISTINCT task_id FROM threads WHERE assigned_to = ?1 \
             AND status IN ('claimed', 'in_progress', 'blocked') AND task_id <> ''",
        )?;
        for t in stmt.query_map([a], |r| r.get::<_, String>(0))? {
            out.push(task_recipient(&t?));
        }
    }
    if let Some(t) = task {
        check_id("task_id", t)?;
        out.push(task_recipient(t));
    }
    if out.is_empty() {
        return Err(Error::invalid("name the mailbox: agent or task_id (or both)"));
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// WHERE clause selecting the queued mail of `recipients` at `now`, and its arguments.
fn queued(recipients: &[String], now: &str) -> (String, Vec<SqlValue>) {
    let mut args: Vec<SqlValue> = vec![SqlValue::Text(now.to_string())];
    let marks: Vec<String> = recipients
        .iter()
        .map(|r| {
            args.push(SqlValue::Text(r.clone()));
            format!("?{}", args.len())
        })
        .collect();
    let clause = format!(
        "x.recipient IN ({}) AND x.delivered_at IS NULL AND x.withdrawn_at IS NULL \
         AND (x.expires_at IS NULL OR x.expires_at > ?1)",
        marks.join(",")
    );
    (clause, args)
}

fn query(conn: &Connection, sql: &str, args: Vec<SqlValue>) -> Result<Vec<MailItem>> {
    let mut stmt = conn.prepare_cached(sql)?;
    let rows = stmt.query_map(params_from_iter(args), item_from_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

fn mark(conn: &Connection, column: &str, items: &[MailItem], now: &str) -> Result<()> {
    let sql = format!("UPDATE mail SET {column} = ?3 WHERE recipient = ?1 AND message_id = ?2");
    let mut stmt = conn.prepare_cached(&sql)?;
    for it in items {
        stmt.execute([&it.to_agent, &it.message_id, now])?;
    }
    Ok(())
}

/// `mail.check`: deliver the mailbox's queued mail, urgent first, then oldest first.
pub fn check(ctx: &mut WriteCtx<'_>, p: CheckParams) -> Result<CheckResult> {
    let recipients = mailbox(ctx.conn, p.agent.as_deref(), p.task_id.as_deref())?;
    let now = util::ts(util::now());
    let (mut clause, mut args) = queued(&recipients, &now);
    if !p.priorities.is_empty() {
        let marks: Vec<String> = p
            .priorities
            .iter()
            .map(|pr| {
                args.push(SqlValue::Text(pr.as_str().into()));
                format!("?{}", args.len())
            })
            .collect();
        clause.push_str(&format!(" AND x.priority IN ({})", marks.join(",")));
    }
    let sql = format!(
        "SELECT {ITEM_COLUMNS} FROM {ITEM_FROM} WHERE {clause} ORDER BY {PRIORITY_RANK}, x.event_id LIMIT {MAX_CHECK}"
    );
    let mut messages = query(ctx.conn, &sql, args)?;
    if messages.is_empty() {
        return Ok(CheckResult { messages, event_id: None });
    }
    mark(ctx.conn, "delivered_at", &messages, &now)?;
    for m in &mut messages {
        m.delivered_at = Some(now.clone());
        m.delivery = Delivery::Delivered;
    }
    let owner = p.agent.clone().unwrap_or_else(|| recipients[0].clone());
    let ids: Vec<&str> = messages.iter().map(|m| m.message_id.as_str()).collect();
    let payload = json!({"message_ids": ids, "recipients": recipients});
    let summary = format!("delivered {} message(s) to {owner}", messages.len());
    let task = p.task_id.as_deref().unwrap_or_default();
    let draft = Draft::about(EventType::MailDelivered, &owner, task, &owner, &summary, &payload, &now);
    let event_id = events::record(ctx, &draft)?;
    Ok(CheckResult { messages, event_id: Some(event_id) })
}

/// `mail.pending` without `remind`: counts only, never writes.
pub fn pending(conn: &Connection, p: &PendingParams) -> Result<PendingResult> {
    let recipients = mailbox(conn, p.agent.as_deref(), p.task_id.as_deref())?;
    count(conn, &recipients, &util::ts(util::now()))
}

fn count(conn: &Connection, recipients: &[String], now: &str) -> Result<PendingResult> {
    let (clause, args) = queued(recipients, now);
    let sql = format!("SELECT COUNT(*), COALESCE(SUM(x.priority = 'urgent'), 0) FROM mail x WHERE {clause}");
    let (pending, urgent): (i64, i64) =
        conn.prepare_cached(&sql)?.query_row(params_from_iter(args), |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(PendingResult { pending: pending as u64, urgent: urgent as u64, new: Vec::new() })
}

/// `mail.pending` with `remind`: also the queued mail nobody was reminded of, now marked.
pub fn remind(ctx: &mut WriteCtx<'_>, p: PendingParams) -> Result<PendingResult> {
    let recipients = mailbox(ctx.conn, p.agent.as_deref(), p.task_id.as_deref())?;
    let now = util::ts(util::now());
    let mut counts = count(ctx.conn, &recipients, &now)?;
    let (clause, args) = queued(&recipients, &now);
    let sql = format!(
        "SELECT {ITEM_COLUMNS} FROM {ITEM_FROM} WHERE {clause} AND x.reminded_at IS NULL \
         ORDER BY {PRIORITY_RANK}, x.event_id LIMIT {MAX_CHECK}"
    );
    counts.new = query(ctx.conn, &sql, args)?;
    mark(ctx.conn, "reminded_at", &counts.new, &now)?;
    Ok(counts)
}

/// `mail.withdraw`: the sender takes back every copy not delivered yet.
pub fn withdraw(ctx: &mut WriteCtx<'_>, p: MailRef) -> Result<WithdrawResult> {
    check_agent("agent", &p.agent)?;
    check_id("message_id", &p.message_id)?;
    let Some(msg) = crate::inbox::read::message(ctx.conn, &p.message_id)? else {
        return Err(Error::app(ErrorCode::MessageNotFound, format!("message '{}' not found", p.message_id)));
    };
    if msg.from_agent != p.agent {
        return Err(Error::app(
            ErrorCode::WithdrawForbidden,
            format!("only the sender ({}) may withdraw message '{}'", msg.from_agent, p.message_id),
        ));
    }
    let now = util::ts(util::now());
    let sql = format!(
        "SELECT {ITEM_COLUMNS} FROM {ITEM_FROM} WHERE x.message_id = ?1 AND x.delivered_at IS NULL \
         AND x.withdrawn_at IS NULL AND (x.expires_at IS NULL OR x.expires_at > ?2) ORDER BY x.recipient"
    );
    let copies = query(ctx.conn, &sql, vec![SqlValue::Text(p.message_id.clone()), SqlValue::Text(now.clone())])?;
    let Some(first) = copies.first() else {
        return Err(Error::app(
            ErrorCode::InvalidTransition,
            format!("message '{}' has no queued copy left to withdraw (delivered, expired or withdrawn)", p.message_id),
        ));
    };
    mark(ctx.conn, "withdrawn_at", &copies, &now)?;
    let event_id = super::record(ctx, EventType::MailWithdrawn, first, &now)?;
    let recipients = copies.into_iter().map(|c| c.to_agent).collect();
    Ok(WithdrawResult { message_id: p.message_id, recipients, event_id })
}
