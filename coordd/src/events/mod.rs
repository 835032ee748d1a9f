//! The shared event stream: appending events inside write transactions, filtering them
//! (in SQL for stored events, in memory for live ones; both agree), listing them, and the
//! subscription loop that replays then streams (see [`subscription`]).

pub mod subscription;

use coord_proto::DEFAULT_LIMIT;
use coord_proto::types::*;
use rusqlite::{Connection, OptionalExtension, params_from_iter, types::Value as SqlValue};
use serde_json::Value;

use crate::db::{WriteCtx, json_col, parse_col, parse_opt_col};
use crate::error::{Error, Result};
use crate::inbox;

/// Which layer wrote an event.
pub const SOURCE_INBOX: &str = "inbox";
pub const SOURCE_ORCH: &str = "orch";
pub const SOURCE_AGENTS: &str = "agents";

/// An event about to be written: what it is about, its context after the change, and what
/// caused it.
pub struct Draft<'a> {
    pub event_type: EventType,
    pub source: &'static str,
    pub run_id: &'a str,
    pub task_id: &'a str,
    pub thread_id: &'a str,
    pub assigned_to: &'a str,
    pub created_by: &'a str,
    pub thread_status: Option<ThreadStatus>,
    pub task_status: Option<TaskStatus>,
    pub actor: &'a str,
    pub message_id: Option<&'a str>,
    pub message_kind: Option<MessageKind>,
    pub summary: &'a str,
    pub payload: &'a Value,
    pub created_at: &'a str,
}

impl<'a> Draft<'a> {
    /// An inbox event about a thread, as the thread stands after the change.
    pub fn for_thread(
        event_type: EventType,
        thread: &'a Thread,
        actor: &'a str,
        summary: &'a str,
        payload: &'a Value,
        created_at: &'a str,
    ) -> Self {
        Draft {
            event_type,
            source: SOURCE_INBOX,
            run_id: &thread.run_id,
            task_id: &thread.task_id,
            thread_id: &thread.thread_id,
            assigned_to: &thread.assigned_to,
            created_by: &thread.created_by,
            thread_status: Some(thread.status),
            task_status: None,
            actor,
            message_id: None,
            message_kind: None,
            summary,
            payload,
            created_at,
        }
    }
}

impl<'a> Draft<'a> {
    /// An agents-layer event about no thread: `owner` is the agent it concerns (its
    /// `assigned_to` and `created_by`), so `--agent` filters follow it.
    pub fn about(
        event_type: EventType,
        owner: &'a str,
        task_id: &'a str,
        actor: &'a str,
        summary: &'a str,
        payload: &'a Value,
        created_at: &'a str,
    ) -> Self {
        Draft {
            event_type,
            source: SOURCE_AGENTS,
            run_id: "",
            task_id,
            thread_id: "",
            assigned_to: owner,
            created_by: owner,
            thread_status: None,
            task_status: None,
            actor,
            message_id: None,
            message_kind: None,
            summary,
            payload,
            created_at,
        }
    }
}

/// Insert the event row and return its id. The caller publishes it with [`publish`] once
/// everything it refers to is written.
pub fn insert(conn: &Connection, d: &Draft<'_>) -> Result<i64> {
    let mut stmt = conn.prepare_cached(
        "INSERT INTO events (run_id, task_id, thread_id, source, event_type, message_id, summary, \
         payload_json, created_at, actor, assigned_to, created_by, thread_status, message_kind, task_status) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
    )?;
    stmt.execute(rusqlite::params![
        d.run_id,
        d.task_id,
        d.thread_id,
        d.source,
        d.event_type.as_str(),
        d.message_id,
        d.summary,
        d.payload.to_string(),
        d.created_at,
        d.actor,
        d.assigned_to,
        d.created_by,
        d.thread_status.map_or("", |s| s.as_str()),
        d.message_kind.map(|k| k.as_str()),
        d.task_status.map(|s| s.as_str()),
    ])?;
    Ok(conn.last_insert_rowid())
}

/// Queue the event for publication after the commit.
pub fn publish(ctx: &mut WriteCtx<'_>, id: i64, d: &Draft<'_>, message: Option<Message>) {
    ctx.push_event(Event {
        event_id: id,
        event_type: d.event_type,
        source: d.source.to_string(),
        run_id: d.run_id.to_string(),
        task_id: d.task_id.to_string(),
        thread_id: d.thread_id.to_string(),
        actor: d.actor.to_string(),
        assigned_to: d.assigned_to.to_string(),
        created_by: d.created_by.to_string(),
        thread_status: d.thread_status,
        task_status: d.task_status,
        message_id: d.message_id.map(str::to_string),
        summary: d.summary.to_string(),
        payload_json: d.payload.clone(),
        created_at: d.created_at.to_string(),
        message,
    });
}

/// Insert and queue an event that records no message; returns its id.
pub fn record(ctx: &mut WriteCtx<'_>, d: &Draft<'_>) -> Result<i64> {
    let id = insert(ctx.conn, d)?;
    publish(ctx, id, d, None);
    Ok(id)
}

/// A filter whose message cursor has been turned into an event id.
#[derive(Debug, Clone)]
pub struct Resolved {
    pub after: i64,
    pub f: EventFilter,
}

/// Check a filter and turn `after_message` into an event cursor. `default_after` applies
/// when neither cursor is given.
pub fn resolve(conn: &Connection, f: EventFilter, default_after: i64) -> Result<Resolved> {
    if let Some(a) = &f.agent {
        inbox::check_agent("agent", a)?;
    }
    if let Some(t) = &f.thread_id {
        inbox::check_id("thread_id", t)?;
        let exists = conn.prepare_cached("SELECT 1 FROM threads WHERE thread_id = ?1")?.exists([t])?;
        if !exists {
            return Err(Error::not_found(format!("thread '{t}' not found")));
        }
    }
    let mut after = match f.after_event {
        Some(n) if n < 0 => return Err(Error::invalid("after_event must not be negative")),
        Some(n) => n,
        None => default_after,
    };
    if let Some(mid) = &f.after_message {
        let ev: Option<(i64, String)> = conn
            .prepare_cached("SELECT event_id, thread_id FROM messages WHERE message_id = ?1")?
            .query_row([mid], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?;
        let (ev, thread) = ev.ok_or_else(|| Error::not_found(format!("message '{mid}' not found")))?;
        if let Some(t) = &f.thread_id
            && *t != thread
        {
            return Err(Error::invalid(format!("message '{mid}' is not in thread '{t}'")));
        }
        after = if f.after_event.is_some() { after.max(ev) } else { ev };
    }
    Ok(Resolved { after, f })
}

impl Resolved {
    /// Does a live event pass the filter? Must agree with [`Resolved::sql`].
    pub fn matches(&self, e: &Event) -> bool {
        let f = &self.f;
        let eq = |want: &Option<String>, have: &str| want.as_deref().is_none_or(|w| w == have);
        e.event_id > self.after
            && eq(&f.thread_id, &e.thread_id)
            && eq(&f.run_id, &e.run_id)
            && eq(&f.task_id, &e.task_id)
            && f.agent.as_deref().is_none_or(|a| (e.assigned_to == a || e.created_by == a) && e.actor != a)
            && (f.statuses.is_empty() || e.thread_status.is_some_and(|s| f.statuses.contains(&s)))
            && (f.event_types.is_empty() || f.event_types.contains(&e.event_type))
            && (f.kinds.is_empty() || e.message.as_ref().is_some_and(|m| f.kinds.contains(&m.kind)))
    }

    /// WHERE clause and arguments selecting the same events as [`Resolved::matches`].
    fn sql(&self) -> (String, Vec<SqlValue>) {
        let f = &self.f;
        let mut args: Vec<SqlValue> = vec![SqlValue::Integer(self.after)];
        let mut clauses = vec!["e.event_id > ?1".to_string()];
        for (col, v) in [("thread_id", &f.thread_id), ("run_id", &f.run_id), ("task_id", &f.task_id)] {
            if let Some(v) = v {
                args.push(SqlValue::Text(v.clone()));
                clauses.push(format!("e.{col} = ?{}", args.len()));
            }
        }
        if let Some(a) = &f.agent {
            args.push(SqlValue::Text(a.clone()));
            let n = args.len();
            clauses.push(format!("((e.assigned_to = ?{n} OR e.created_by = ?{n}) AND e.actor <> ?{n})"));
        }
        let statuses: Vec<&str> = f.statuses.iter().map(|s| s.as_str()).collect();
        let types: Vec<&str> = f.event_types.iter().map(|s| s.as_str()).collect();
        let kinds: Vec<&str> = f.kinds.iter().map(|s| s.as_str()).collect();
        for (col, vals) in [("thread_status", statuses), ("event_type", types), ("message_kind", kinds)] {
            if vals.is_empty() {
                continue;
            }
            let mut marks = Vec::with_capacity(vals.len());
            for v in vals {
                args.push(SqlValue::Text(v.to_string()));
                marks.push(format!("?{}", args.len()));
            }
            clauses.push(format!("e.{col} IN ({})", marks.join(",")));
        }
        (clauses.join(" AND "), args)
    }
}

const EVENT_COLUMNS: &str = "e.event_id, e.event_type, e.source, e.run_id, e.task_id, e.thread_id, \
     e.actor, e.assigned_to, e.created_by, e.thread_status, e.message_id, e.summary, \
     e.payload_json, e.created_at, e.task_status";

fn event_from_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<Event> {
    Ok(Event {
        event_id: row.get(0)?,
        event_type: parse_col(row, 1)?,
        source: row.get(2)?,
        run_id: row.get(3)?,
        task_id: row.get(4)?,
        thread_id: row.get(5)?,
        actor: row.get(6)?,
        assigned_to: row.get(7)?,
        created_by: row.get(8)?,
        thread_status: {
            let s: String = row.get(9)?;
            if s.is_empty() { None } else { Some(parse_col(row, 9)?) }
        },
        task_status: parse_opt_col(row, 14)?,
        message_id: row.get(10)?,
        summary: row.get(11)?,
        payload_json: json_col(row, 12)?,
        created_at: row.get(13)?,
        message: None,
    })
}

/// Stored events matching the filter, in order, each with its message.
pub fn query(conn: &Connection, r: &Resolved, limit: u32) -> Result<Vec<Event>> {
    let (clause, args) = r.sql();
    let sql = format!("SELECT {EVENT_COLUMNS} FROM events e WHERE {clause} ORDER BY e.event_id LIMIT {limit}");
    let mut stmt = conn.prepare_cached(&sql)?;
    let mut events: Vec<Event> = stmt.query_map(params_from_iter(args), event_from_row)?.collect::<Result<_, _>>()?;
    for e in &mut events {
        if let Some(mid) = &e.message_id {
            e.message = inbox::read::message(conn, mid)?;
        }
    }
    Ok(events)
}

/// `events.list`: stored events after the cursor (from the start by default).
pub fn list(conn: &Connection, p: EventsListParams) -> Result<EventsResult> {
    let limit = inbox::check_limit(p.limit, DEFAULT_LIMIT)?;
    let last_event_id: i64 = conn.query_row("SELECT COALESCE(MAX(event_id), 0) FROM events", [], |r| r.get(0))?;
    let r = resolve(conn, p.filter, 0)?;
    Ok(EventsResult { events: query(conn, &r, limit)?, last_event_id })
}
