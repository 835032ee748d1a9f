//! Messages, artifacts and the event stream on PostgreSQL, including the storage side of
//! event filters (which must agree with `domain::events::matches`, as SQLite's does).
//! Event ids come from the counter row (see [`super::tx::EventIds`]), never a sequence.

use coord_proto::types::*;

use super::deferred::{EVENTS, MESSAGES};
use super::tx::{Args, PgTx};
use crate::error::Result;
use crate::store::assemble;
use crate::store::repos::{CopyOf, EventQuery, Events, Messages, Within};
use crate::store::rows::{self, ARTIFACT_COLUMNS, EVENT_COLUMNS, MESSAGE_COLUMNS};

/// Events read by the first round trip of a bounded page (`events_page`).
const FIRST_CHUNK: u32 = 8;

impl PgTx<'_> {
    fn artifacts_of(&self, message_id: &str) -> Result<Vec<Artifact>> {
        let sql = format!("SELECT {ARTIFACT_COLUMNS} FROM artifacts a WHERE a.message_id = $1 ORDER BY a.seq");
        self.map(&sql, &[&message_id], rows::artifact)
    }
}

impl Messages for PgTx<'_> {
    fn message_insert(&mut self, m: &Message) -> Result<()> {
        self.insert(
            &MESSAGES,
            vec![
                (&m.message_id).into(),
                (&m.thread_id).into(),
                (&m.from_agent).into(),
                (&m.to_agent).into(),
                m.kind.as_str().into(),
                (&m.summary).into(),
                (&m.body).into(),
                m.payload_json.to_string().into(),
                (&m.created_at).into(),
                m.event_id.into(),
                m.category.map(|c| c.as_str()).into(),
                m.requires_ack.into(),
                (&m.msg_type).into(),
            ],
        )?;
        for a in &m.artifacts {
            self.exec(
                "INSERT INTO artifacts (artifact_id, message_id, path, kind, metadata_json, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6)",
                &[&a.artifact_id, &a.message_id, &a.path, &a.kind, &a.metadata_json.to_string(), &a.created_at],
            )?;
        }
        Ok(())
    }

    fn message(&self, message_id: &str) -> Result<Option<Message>> {
        let sql = format!("SELECT {MESSAGE_COLUMNS} FROM messages m WHERE m.message_id = $1");
        let Some(mut msg) = self.map_one(&sql, &[&message_id], rows::message)? else { return Ok(None) };
        msg.artifacts = self.artifacts_of(&msg.message_id)?;
        Ok(Some(msg))
    }

    fn thread_messages(&self, thread_id: &str) -> Result<Vec<Message>> {
        let sql = format!("SELECT {MESSAGE_COLUMNS} FROM messages m WHERE m.thread_id = $1 ORDER BY m.event_id, m.seq");
        let mut messages = self.map(&sql, &[&thread_id], rows::message)?;
        let sql = format!(
            "SELECT {ARTIFACT_COLUMNS} FROM artifacts a JOIN messages m ON m.message_id = a.message_id \
             WHERE m.thread_id = $1 ORDER BY a.seq"
        );
        assemble::attach_artifacts(&mut messages, self.map(&sql, &[&thread_id], rows::artifact)?);
        Ok(messages)
    }

    fn thread_messages_after(&self, thread_id: &str, after_event: i64, max_bytes: usize) -> Result<Within<Message>> {
        let sql = format!(
            "SELECT {MESSAGE_COLUMNS} FROM messages m WHERE m.thread_id = $1 AND m.event_id > $2 ORDER BY m.event_id, m.seq"
        );
        let mut read =
            self.map_within(&sql, &[&thread_id, &after_event], max_bytes, rows::message, Some(&rows::same_event))?;
        if let Some(last) = read.items.last().map(|m| m.event_id) {
            let sql = format!(
                "SELECT {ARTIFACT_COLUMNS} FROM artifacts a JOIN messages m ON m.message_id = a.message_id \
                 WHERE m.thread_id = $1 AND m.event_id > $2 AND m.event_id <= $3 ORDER BY a.seq"
            );
            let artifacts = self.map(&sql, &[&thread_id, &after_event, &last], rows::artifact)?;
            assemble::attach_artifacts(&mut read.items, artifacts);
        }
        Ok(read)
    }

    fn last_message_event(&self, thread_id: &str) -> Result<i64> {
        let v = self.map_one(
            "SELECT COALESCE(MAX(event_id), 0)::bigint FROM messages WHERE thread_id = $1",
            &[&thread_id],
            |r| r.i(0),
        )?;
        Ok(v.unwrap_or(0))
    }

    fn latest_message_of_kind(&self, thread_id: &str, kind: MessageKind) -> Result<Option<Message>> {
        let id = self.map_one(
            "SELECT message_id FROM messages WHERE thread_id = $1 AND kind = $2 ORDER BY event_id DESC LIMIT 1",
            &[&thread_id, &kind.as_str()],
            |r| r.s(0),
        )?;
        match id {
            Some(id) => self.message(&id),
            None => Ok(None),
        }
    }

    fn last_message_event_from(&self, thread_id: &str, from_agent: &str) -> Result<i64> {
        let v = self.map_one(
            "SELECT COALESCE(MAX(event_id), 0)::bigint FROM messages WHERE thread_id = $1 AND from_agent = $2",
            &[&thread_id, &from_agent],
            |r| r.i(0),
        )?;
        Ok(v.unwrap_or(0))
    }

    fn message_cursor(&self, message_id: &str) -> Result<Option<(i64, String)>> {
        self.map_one("SELECT event_id, thread_id FROM messages WHERE message_id = $1", &[&message_id], |r| {
            Ok((r.i(0)?, r.s(1)?))
        })
    }
}

/// WHERE clause and arguments selecting the events `domain::events::matches` accepts.
fn filter_sql(q: &EventQuery, args: &mut Args) -> String {
    let f = &q.filter;
    let mut clauses = vec![format!("e.event_id > {}", args.push(q.after))];
    for (col, v) in [("thread_id", &f.thread_id), ("run_id", &f.run_id), ("task_id", &f.task_id)] {
        if let Some(v) = v {
            clauses.push(format!("e.{col} = {}", args.push(v.clone())));
        }
    }
    if let Some(a) = &f.agent {
        let n = args.push(a.clone());
        clauses.push(format!("((e.assigned_to = {n} OR e.created_by = {n}) AND e.actor <> {n})"));
    }
    if let Some(to) = &f.to {
        let n = args.push(to.clone());
        clauses.push(format!("(e.message_to = {n} OR (e.message_to = '{BROADCAST}' AND e.actor <> {n}))"));
    }
    // What happened: an event type or a message type, either one.
    let mut what = Vec::new();
    if !f.event_types.is_empty() {
        let types: Vec<String> = f.event_types.iter().map(|s| s.as_str().to_string()).collect();
        what.push(format!("e.event_type = ANY({})", args.push(types)));
    }
    if f.message_types.iter().any(|t| t == ANY_TYPE) {
        what.push("e.message_type IS NOT NULL".to_string());
    } else if !f.message_types.is_empty() {
        what.push(format!("e.message_type = ANY({})", args.push(f.message_types.clone())));
    }
    if !what.is_empty() {
        clauses.push(format!("({})", what.join(" OR ")));
    }
    let statuses: Vec<String> = f.statuses.iter().map(|s| s.as_str().to_string()).collect();
    let kinds: Vec<String> = f.kinds.iter().map(|s| s.as_str().to_string()).collect();
    for (col, vals) in [("thread_status", statuses), ("message_kind", kinds)] {
        if !vals.is_empty() {
            clauses.push(format!("e.{col} = ANY({})", args.push(vals)));
        }
    }
    clauses.join(" AND ")
}

impl Events for PgTx<'_> {
    fn events_after(&self, q: &EventQuery, limit: u32) -> Result<Vec<Event>> {
        let mut args = Args::default();
        let clause = filter_sql(q, &mut args);
        let sql = format!("SELECT {EVENT_COLUMNS} FROM events e WHERE {clause} ORDER BY e.event_id LIMIT {limit}");
        let mut events = self.map(&sql, &args.refs(), rows::event)?;
        // The page's messages, then their artifacts, by key: a replay page or a follower's
        // catch-up is three round trips, not two more per event. (A join would let a
        // generic plan hash the whole messages table.)
        let ids: Vec<String> = events.iter().filter_map(|e| e.message_id.clone()).collect();
        if ids.is_empty() {
            return Ok(events);
        }
        let sql = format!("SELECT {MESSAGE_COLUMNS} FROM messages m WHERE m.message_id = ANY($1)");
        let mut messages: std::collections::HashMap<String, Message> =
            self.map(&sql, &[&ids], rows::message)?.into_iter().map(|m| (m.message_id.clone(), m)).collect();
        let sql = format!("SELECT {ARTIFACT_COLUMNS} FROM artifacts a WHERE a.message_id = ANY($1) ORDER BY a.seq");
        for a in self.map(&sql, &[&ids], rows::artifact)? {
            if let Some(m) = messages.get_mut(&a.message_id) {
                m.artifacts.push(a);
            }
        }
        for e in &mut events {
            e.set_message(e.message_id.as_ref().and_then(|id| messages.get(id).cloned()));
        }
        Ok(events)
    }

    /// In chunks sized from the events read so far (the first: [`FIRST_CHUNK`]), so a page
    /// of large messages holds about `max_bytes` plus one event, and one of small events
    /// takes two or three round trips.
    fn events_page(&self, q: &EventQuery, limit: u32, max_bytes: usize) -> Result<Vec<Event>> {
        let (mut events, mut bytes, mut q) = (Vec::new(), 0, q.clone());
        let mut want = FIRST_CHUNK.min(limit);
        while want > 0 {
            let chunk = self.events_after(&q, want)?;
            let ended = chunk.len() < want as usize;
            for e in chunk {
                if bytes >= max_bytes {
                    return Ok(events);
                }
                bytes += crate::weight::weight(&e);
                q.after = e.event_id;
                events.push(e);
            }
            if ended || bytes >= max_bytes {
                break;
            }
            let left = limit - events.len() as u32;
            let each = bytes / events.len().max(1) + 1;
            want = left.min(u32::try_from((max_bytes - bytes) / each + 1).unwrap_or(u32::MAX));
        }
        Ok(events)
    }

    fn event_insert(&mut self, e: &Event) -> Result<i64> {
        let id = self.next_event_id()?;
        self.insert(
            &EVENTS,
            vec![
                id.into(),
                (&e.run_id).into(),
                (&e.task_id).into(),
                (&e.thread_id).into(),
                (&e.source).into(),
                e.event_type.as_str().into(),
                (&e.message_id).into(),
                (&e.summary).into(),
                e.payload_json.to_string().into(),
                (&e.created_at).into(),
                (&e.actor).into(),
                (&e.assigned_to).into(),
                (&e.created_by).into(),
                e.thread_status.map_or("", |s| s.as_str()).into(),
                e.message.as_ref().map(|m| m.kind.as_str()).into(),
                e.task_status.map(|s| s.as_str()).into(),
                e.message.as_ref().and_then(|m| m.msg_type.as_deref()).into(),
                e.message.as_ref().map(|m| m.to_agent.as_str()).into(),
            ],
        )?;
        Ok(id)
    }

    fn last_event_id(&self) -> Result<i64> {
        let last = self.map_one("SELECT COALESCE(MAX(event_id), 0)::bigint FROM events", &[], |r| r.i(0))?;
        Ok(last.unwrap_or(0))
    }

    fn events_mail(&self, event_ids: &[i64]) -> Result<Vec<CopyOf>> {
        if event_ids.is_empty() {
            return Ok(Vec::new());
        }
        // By the copies' index by event (`idx_mail_event`).
        let ids = event_ids.to_vec();
        self.map(
            "SELECT x.event_id, x.recipient, x.priority, x.expires_at FROM mail x \
             WHERE x.event_id = ANY($1) ORDER BY x.event_id, x.recipient",
            &[&ids],
            rows::copy_of,
        )
    }
}
