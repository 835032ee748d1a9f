//! Messages, artifacts and the event stream on SQLite, including the storage side of event
//! filters (which must agree with `domain::events::matches`).

use coord_proto::types::*;
use rusqlite::{OptionalExtension, params, params_from_iter, types::Value as SqlValue};

use super::tx::SqliteTx;
use crate::error::Result;
use crate::store::assemble;
use crate::store::repos::{CopyOf, EventQuery, Events, Messages, Within};
use crate::store::rows::{self, ARTIFACT_COLUMNS, EVENT_COLUMNS, MESSAGE_COLUMNS};

impl SqliteTx<'_> {
    fn artifacts_of(&self, message_id: &str) -> Result<Vec<Artifact>> {
        let sql = format!("SELECT {ARTIFACT_COLUMNS} FROM artifacts a WHERE a.message_id = ?1 ORDER BY a.rowid");
        self.map(&sql, [message_id], rows::artifact)
    }

    fn one_message(&self, sql_where: &str, args: &[&dyn rusqlite::ToSql]) -> Result<Option<Message>> {
        let sql = format!("SELECT {MESSAGE_COLUMNS} FROM messages m WHERE {sql_where}");
        let msg = self.map_one(&sql, args, rows::message)?;
        let Some(mut msg) = msg else { return Ok(None) };
        msg.artifacts = self.artifacts_of(&msg.message_id)?;
        Ok(Some(msg))
    }
}

impl Messages for SqliteTx<'_> {
    fn message_insert(&mut self, m: &Message) -> Result<()> {
        self.conn
            .prepare_cached(
                "INSERT INTO messages (message_id, thread_id, from_agent, to_agent, kind, summary, body, \
                 payload_json, created_at, event_id, category, requires_ack, msg_type) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
            )?
            .execute(params![
                m.message_id,
                m.thread_id,
                m.from_agent,
                m.to_agent,
                m.kind.as_str(),
                m.summary,
                m.body,
                m.payload_json.to_string(),
                m.created_at,
                m.event_id,
                m.category.map(|c| c.as_str()),
                m.requires_ack,
                m.msg_type,
            ])?;
        let mut stmt = self.conn.prepare_cached(
            "INSERT INTO artifacts (artifact_id, message_id, path, kind, metadata_json, created_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?;
        for a in &m.artifacts {
            stmt.execute(params![
                a.artifact_id,
                a.message_id,
                a.path,
                a.kind,
                a.metadata_json.to_string(),
                a.created_at
            ])?;
        }
        Ok(())
    }

    fn message(&self, message_id: &str) -> Result<Option<Message>> {
        self.one_message("m.message_id = ?1", &[&message_id])
    }

    fn thread_messages(&self, thread_id: &str) -> Result<Vec<Message>> {
        let sql =
            format!("SELECT {MESSAGE_COLUMNS} FROM messages m WHERE m.thread_id = ?1 ORDER BY m.event_id, m.rowid");
        let mut messages: Vec<Message> = self.map(&sql, [thread_id], rows::message)?;
        let sql = format!(
            "SELECT {ARTIFACT_COLUMNS} FROM artifacts a JOIN messages m ON m.message_id = a.message_id \
             WHERE m.thread_id = ?1 ORDER BY a.rowid"
        );
        assemble::attach_artifacts(&mut messages, self.map(&sql, [thread_id], rows::artifact)?);
        Ok(messages)
    }

    fn thread_messages_after(&self, thread_id: &str, after_event: i64, max_bytes: usize) -> Result<Within<Message>> {
        let sql = format!(
            "SELECT {MESSAGE_COLUMNS} FROM messages m WHERE m.thread_id = ?1 AND m.event_id > ?2 \
             ORDER BY m.event_id, m.rowid"
        );
        let mut read =
            self.map_within(&sql, params![thread_id, after_event], max_bytes, rows::message, Some(&rows::same_event))?;
        if let Some(last) = read.items.last().map(|m| m.event_id) {
            let sql = format!(
                "SELECT {ARTIFACT_COLUMNS} FROM artifacts a JOIN messages m ON m.message_id = a.message_id \
                 WHERE m.thread_id = ?1 AND m.event_id > ?2 AND m.event_id <= ?3 ORDER BY a.rowid"
            );
            let artifacts = self.map(&sql, params![thread_id, after_event, last], rows::artifact)?;
            assemble::attach_artifacts(&mut read.items, artifacts);
        }
        Ok(read)
    }

    fn last_message_event(&self, thread_id: &str) -> Result<i64> {
        Ok(self
            .conn
            .prepare_cached("SELECT COALESCE(MAX(event_id), 0) FROM messages WHERE thread_id = ?1")?
            .query_row([thread_id], |r| r.get(0))?)
    }

    fn last_message_event_from(&self, thread_id: &str, from_agent: &str) -> Result<i64> {
        Ok(self
            .conn
            .prepare_cached("SELECT COALESCE(MAX(event_id), 0) FROM messages WHERE thread_id = ?1 AND from_agent = ?2")?
            .query_row([thread_id, from_agent], |r| r.get(0))?)
    }

    fn latest_message_of_kind(&self, thread_id: &str, kind: MessageKind) -> Result<Option<Message>> {
        let id: Option<String> = self
            .conn
            .prepare_cached(
                "SELECT message_id FROM messages WHERE thread_id = ?1 AND kind = ?2 ORDER BY event_id DESC LIMIT 1",
            )?
            .query_row([thread_id, kind.as_str()], |r| r.get(0))
            .optional()?;
        match id {
            Some(id) => self.message(&id),
            None => Ok(None),
        }
    }

    fn message_cursor(&self, message_id: &str) -> Result<Option<(i64, String)>> {
        Ok(self
            .conn
            .prepare_cached("SELECT event_id, thread_id FROM messages WHERE message_id = ?1")?
            .query_row([message_id], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()?)
    }
}

/// WHERE clause and arguments selecting the events `domain::events::matches` accepts.
fn filter_sql(q: &EventQuery) -> (String, Vec<SqlValue>) {
    let f = &q.filter;
    let mut args: Vec<SqlValue> = vec![SqlValue::Integer(q.after)];
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
    if let Some(to) = &f.to {
        args.push(SqlValue::Text(to.clone()));
        let n = args.len();
        clauses.push(format!("(e.message_to = ?{n} OR (e.message_to = '{BROADCAST}' AND e.actor <> ?{n}))"));
    }
    // What happened: an event type or a message type, either one.
    let mut what = Vec::new();
    if !f.event_types.is_empty() {
        let first = args.len() + 1;
        args.extend(f.event_types.iter().map(|t| SqlValue::Text(t.as_str().to_string())));
        what.push(format!("e.event_type IN ({})", super::tx::marks(first, f.event_types.len())));
    }
    if f.message_types.iter().any(|t| t == ANY_TYPE) {
        what.push("e.message_type IS NOT NULL".to_string());
    } else if !f.message_types.is_empty() {
        let first = args.len() + 1;
        args.extend(f.message_types.iter().map(|t| SqlValue::Text(t.clone())));
        what.push(format!("e.message_type IN ({})", super::tx::marks(first, f.message_types.len())));
    }
    if !what.is_empty() {
        clauses.push(format!("({})", what.join(" OR ")));
    }
    let statuses: Vec<&str> = f.statuses.iter().map(|s| s.as_str()).collect();
    let kinds: Vec<&str> = f.kinds.iter().map(|s| s.as_str()).collect();
    for (col, vals) in [("thread_status", statuses), ("message_kind", kinds)] {
        if vals.is_empty() {
            continue;
        }
        let first = args.len() + 1;
        args.extend(vals.iter().map(|v| SqlValue::Text(v.to_string())));
        clauses.push(format!("e.{col} IN ({})", super::tx::marks(first, vals.len())));
    }
    (clauses.join(" AND "), args)
}

impl Events for SqliteTx<'_> {
    fn event_insert(&mut self, e: &Event) -> Result<i64> {
        self.conn
            .prepare_cached(
                "INSERT INTO events (run_id, task_id, thread_id, source, event_type, message_id, summary, \
                 payload_json, created_at, actor, assigned_to, created_by, thread_status, message_kind, task_status, \
                 message_type, message_to) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
            )?
            .execute(params![
                e.run_id,
                e.task_id,
                e.thread_id,
                e.source,
                e.event_type.as_str(),
                e.message_id,
                e.summary,
                e.payload_json.to_string(),
                e.created_at,
                e.actor,
                e.assigned_to,
                e.created_by,
                e.thread_status.map_or("", |s| s.as_str()),
                e.message.as_ref().map(|m| m.kind.as_str()),
                e.task_status.map(|s| s.as_str()),
                e.message.as_ref().and_then(|m| m.msg_type.as_deref()),
                e.message.as_ref().map(|m| m.to_agent.as_str()),
            ])?;
        Ok(self.conn.last_insert_rowid())
    }

    fn events_after(&self, q: &EventQuery, limit: u32) -> Result<Vec<Event>> {
        let (clause, args) = filter_sql(q);
        let sql = format!("SELECT {EVENT_COLUMNS} FROM events e WHERE {clause} ORDER BY e.event_id LIMIT {limit}");
        let mut events = self.map(&sql, params_from_iter(args), rows::event)?;
        for e in &mut events {
            if let Some(mid) = &e.message_id {
                let m = self.message(mid)?;
                e.set_message(m);
            }
        }
        Ok(events)
    }

    fn events_page(&self, q: &EventQuery, limit: u32, max_bytes: usize) -> Result<Vec<Event>> {
        let (clause, args) = filter_sql(q);
        let sql = format!("SELECT {EVENT_COLUMNS} FROM events e WHERE {clause} ORDER BY e.event_id LIMIT {limit}");
        let mut stmt = self.conn.prepare_cached(&sql)?;
        let mut found = stmt.query(params_from_iter(args))?;
        let (mut events, mut bytes) = (Vec::new(), 0);
        while bytes < max_bytes
            && let Some(row) = found.next()?
        {
            let mut e = rows::event(row)?;
            if let Some(mid) = &e.message_id {
                let m = self.message(mid)?;
                e.set_message(m);
            }
            bytes += crate::weight::weight(&e);
            events.push(e);
        }
        Ok(events)
    }

    fn last_event_id(&self) -> Result<i64> {
        Ok(self.conn.query_row("SELECT COALESCE(MAX(event_id), 0) FROM events", [], |r| r.get(0))?)
    }

    fn events_mail(&self, event_ids: &[i64]) -> Result<Vec<CopyOf>> {
        if event_ids.is_empty() {
            return Ok(Vec::new());
        }
        // Copies are keyed by (recipient, event_id): walk the distinct recipients one index
        // seek each (a loose index scan), then look up these events under each of them,
        // never a scan of the whole mail table.
        let sql = format!(
            "WITH RECURSIVE r(recipient) AS (SELECT MIN(recipient) FROM mail UNION ALL \
             SELECT (SELECT MIN(recipient) FROM mail WHERE recipient > r.recipient) FROM r WHERE r.recipient IS NOT NULL) \
             SELECT x.event_id, x.recipient, x.priority, x.expires_at FROM r JOIN mail x ON x.recipient = r.recipient \
             WHERE x.event_id IN ({}) ORDER BY x.event_id, x.recipient",
            super::tx::marks(1, event_ids.len())
        );
        self.map(&sql, params_from_iter(event_ids), rows::copy_of)
    }
}
