//! Inbox queries. They never write, and run on the read-only pool (or, when a write needs
//! the current state, on the writer's connection inside its transaction).

use std::collections::HashMap;

use coord_proto::DEFAULT_LIMIT;
use coord_proto::types::*;
use rusqlite::{Connection, OptionalExtension, params_from_iter, types::Value as SqlValue};

use super::*;
use crate::error::{Error, Result};
use crate::util;

/// Load one thread with its lease, or `not_found`.
pub fn thread(conn: &Connection, thread_id: &str, now: &str) -> Result<Thread> {
    let sql = format!("SELECT {THREAD_COLUMNS} FROM {THREAD_FROM} WHERE t.thread_id = ?1");
    conn.prepare_cached(&sql)?
        .query_row([thread_id], |r| thread_from_row(r, now))
        .optional()?
        .ok_or_else(|| Error::not_found(format!("thread '{thread_id}' not found")))
}

/// Load one message with its artifacts.
pub fn message(conn: &Connection, message_id: &str) -> Result<Option<Message>> {
    let sql = format!("SELECT {MESSAGE_COLUMNS} FROM messages m WHERE m.message_id = ?1");
    let msg = conn.prepare_cached(&sql)?.query_row([message_id], message_from_row).optional()?;
    let Some(mut msg) = msg else { return Ok(None) };
    let sql = format!("SELECT {ARTIFACT_COLUMNS} FROM artifacts a WHERE a.message_id = ?1 ORDER BY a.rowid");
    let mut stmt = conn.prepare_cached(&sql)?;
    msg.artifacts = stmt.query_map([message_id], artifact_from_row)?.collect::<Result<_, _>>()?;
    Ok(Some(msg))
}

/// The event id of the newest message in a thread (0 when there is none).
pub fn last_message_event(conn: &Connection, thread_id: &str) -> Result<i64> {
    Ok(conn
        .prepare_cached("SELECT COALESCE(MAX(event_id), 0) FROM messages WHERE thread_id = ?1")?
        .query_row([thread_id], |r| r.get(0))?)
}

const PRIORITY_ORDER: &str = "CASE t.priority WHEN 'urgent' THEN 0 WHEN 'high' THEN 1 WHEN 'normal' THEN 2 ELSE 3 END, t.created_at, t.thread_id";

/// Candidate threads assigned to an agent, highest priority first, then oldest.
pub fn fetch(conn: &Connection, p: &FetchParams) -> Result<Vec<Thread>> {
    check_agent("agent", &p.agent)?;
    let limit = check_limit(p.limit, DEFAULT_LIMIT)?;
    let statuses = if p.statuses.is_empty() { vec![ThreadStatus::Pending] } else { p.statuses.clone() };
    let (marks, values) = status_list(&statuses);
    let mut args: Vec<SqlValue> = vec![SqlValue::Text(p.agent.clone())];
    args.extend(values.into_iter().map(SqlValue::Text));
    let unread = if p.unread {
        "AND EXISTS (SELECT 1 FROM messages m WHERE m.thread_id = t.thread_id \
           AND m.to_agent = ?1 AND m.from_agent <> ?1 \
           AND m.event_id > COALESCE((SELECT r.read_event_id FROM reads r \
               WHERE r.agent_id = ?1 AND r.thread_id = t.thread_id), 0))"
    } else {
        ""
    };
    let sql = format!(
        "SELECT {THREAD_COLUMNS} FROM {THREAD_FROM} \
         WHERE t.assigned_to = ?1 AND t.status IN ({marks}) {unread} \
         ORDER BY {PRIORITY_ORDER} LIMIT {limit}"
    );
    query_threads(conn, &sql, args)
}

/// Threads matching every given filter, newest activity first.
pub fn list(conn: &Connection, p: &ListParams) -> Result<Vec<Thread>> {
    let limit = check_limit(p.limit, DEFAULT_LIMIT)?;
    let mut clauses: Vec<String> = Vec::new();
    let mut args: Vec<SqlValue> = Vec::new();
    let mut eq = |col: &str, v: &Option<String>, clauses: &mut Vec<String>| {
        if let Some(v) = v {
            args.push(SqlValue::Text(v.clone()));
            clauses.push(format!("{col} = ?{}", args.len()));
        }
    };
    eq("t.created_by", &p.created_by, &mut clauses);
    eq("t.assigned_to", &p.assigned_to, &mut clauses);
    eq("t.run_id", &p.run_id, &mut clauses);
    eq("t.task_id", &p.task_id, &mut clauses);
    if let Some(agent) = &p.agent {
        args.push(SqlValue::Text(agent.clone()));
        let n = args.len();
        clauses.push(format!("(t.created_by = ?{n} OR t.assigned_to = ?{n})"));
    }
    if !p.statuses.is_empty() {
        let start = args.len();
        let marks: Vec<String> = p
            .statuses
            .iter()
            .enumerate()
            .map(|(i, s)| {
                args.push(SqlValue::Text(s.as_str().into()));
                format!("?{}", start + i + 1)
            })
            .collect();
        clauses.push(format!("t.status IN ({})", marks.join(",")));
    }
    let filter = if clauses.is_empty() { String::new() } else { format!("WHERE {}", clauses.join(" AND ")) };
    let sql = format!(
        "SELECT {THREAD_COLUMNS} FROM {THREAD_FROM} {filter} \
         ORDER BY t.updated_at DESC, t.thread_id LIMIT {limit}"
    );
    query_threads(conn, &sql, args)
}

fn query_threads(conn: &Connection, sql: &str, args: Vec<SqlValue>) -> Result<Vec<Thread>> {
    let now = util::ts(util::now());
    let mut stmt = conn.prepare_cached(sql)?;
    let rows = stmt.query_map(params_from_iter(args), |r| thread_from_row(r, &now))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// A thread with its full history, each message with its artifacts.
pub fn show(conn: &Connection, thread_id: &str) -> Result<ShowResult> {
    check_id("thread_id", thread_id)?;
    let now = util::ts(util::now());
    let thread = thread(conn, thread_id, &now)?;
    let sql = format!("SELECT {MESSAGE_COLUMNS} FROM messages m WHERE m.thread_id = ?1 ORDER BY m.event_id, m.rowid");
    let mut messages: Vec<Message> =
        conn.prepare_cached(&sql)?.query_map([thread_id], message_from_row)?.collect::<Result<_, _>>()?;
    let sql = format!(
        "SELECT {ARTIFACT_COLUMNS} FROM artifacts a JOIN messages m ON m.message_id = a.message_id \
         WHERE m.thread_id = ?1 ORDER BY a.rowid"
    );
    let mut by_message: HashMap<String, Vec<Artifact>> = HashMap::new();
    for a in conn.prepare_cached(&sql)?.query_map([thread_id], artifact_from_row)? {
        let a = a?;
        by_message.entry(a.message_id.clone()).or_default().push(a);
    }
    for m in &mut messages {
        if let Some(a) = by_message.remove(&m.message_id) {
            m.artifacts = a;
        }
    }
    Ok(ShowResult { thread, messages })
}
