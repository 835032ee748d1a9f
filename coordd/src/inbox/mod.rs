//! The inbox domain: threads, messages, leases, artifacts and read marks.
//!
//! `write` holds the state-changing operations (`lease` the lease ones among them) (each runs inside the writer's transaction
//! and appends its event there); `read` holds the queries that run on the reader pool.
//! This file holds what both share: row mapping and input validation.

mod lease;
pub mod read;
pub mod write;

#[cfg(test)]
mod tests;

use coord_proto::types::{Artifact, ArtifactInput, LeaseView, Message, MessageInput, Thread};
use coord_proto::{MAX_LIMIT, types::ThreadStatus};
use rusqlite::Row;
use serde_json::Value;

use crate::db::{json_col, parse_col, parse_opt_col};
use crate::error::{Error, Result};

/// Columns of [`thread_from_row`], with the current lease joined in.
pub const THREAD_COLUMNS: &str = "t.thread_id, t.run_id, t.task_id, t.subject, t.created_by, \
     t.assigned_to, t.status, t.priority, t.latest_message_id, t.created_at, t.updated_at, \
     l.agent_id, l.generation, l.claimed_at, l.expires_at, l.released_at";
/// `FROM` clause matching [`THREAD_COLUMNS`].
pub const THREAD_FROM: &str = "threads t LEFT JOIN leases l ON l.thread_id = t.thread_id";

/// Columns of [`message_from_row`].
pub const MESSAGE_COLUMNS: &str = "m.message_id, m.thread_id, m.from_agent, m.to_agent, m.kind, \
     m.summary, m.body, m.payload_json, m.created_at, m.event_id, m.category, m.requires_ack";

/// Columns of [`artifact_from_row`].
pub const ARTIFACT_COLUMNS: &str = "a.artifact_id, a.message_id, a.path, a.kind, a.metadata_json, a.created_at";

/// Map a row selected with [`THREAD_COLUMNS`]; `now` decides whether the lease is active.
pub fn thread_from_row(row: &Row<'_>, now: &str) -> rusqlite::Result<Thread> {
    let lease_agent: Option<String> = row.get(11)?;
    let lease = match lease_agent {
        None => None,
        Some(agent_id) => {
            let expires_at: String = row.get(14)?;
            let released_at: Option<String> = row.get(15)?;
            Some(LeaseView {
                agent_id,
                generation: row.get(12)?,
                claimed_at: row.get(13)?,
                active: released_at.is_none() && expires_at.as_str() > now,
                expires_at,
            })
        }
    };
    Ok(Thread {
        thread_id: row.get(0)?,
        run_id: row.get(1)?,
        task_id: row.get(2)?,
        subject: row.get(3)?,
        created_by: row.get(4)?,
        assigned_to: row.get(5)?,
        status: parse_col(row, 6)?,
        priority: parse_col(row, 7)?,
        latest_message_id: row.get(8)?,
        created_at: row.get(9)?,
        updated_at: row.get(10)?,
        lease,
    })
}

/// Map a row selected with [`MESSAGE_COLUMNS`] (artifacts are loaded separately).
pub fn message_from_row(row: &Row<'_>) -> rusqlite::Result<Message> {
    Ok(Message {
        message_id: row.get(0)?,
        thread_id: row.get(1)?,
        from_agent: row.get(2)?,
        to_agent: row.get(3)?,
        kind: parse_col(row, 4)?,
        summary: row.get(5)?,
        body: row.get(6)?,
        payload_json: json_col(row, 7)?,
        created_at: row.get(8)?,
        event_id: row.get(9)?,
        category: parse_opt_col(row, 10)?,
        requires_ack: row.get(11)?,
        artifacts: Vec::new(),
    })
}

/// Map a row selected with [`ARTIFACT_COLUMNS`].
pub fn artifact_from_row(row: &Row<'_>) -> rusqlite::Result<Artifact> {
    Ok(Artifact {
        artifact_id: row.get(0)?,
        message_id: row.get(1)?,
        path: row.get(2)?,
        kind: row.get(3)?,
        metadata_json: json_col(row, 4)?,
        created_at: row.get(5)?,
    })
}

/// Longest agent name or id accepted, in characters.
const MAX_NAME: usize = 200;
/// Longest subject accepted, in characters.
const MAX_SUBJECT: usize = 1000;
/// Longest summary accepted.
const MAX_SUMMARY: usize = 4000;

/// An agent name: non-empty, at most 200 characters, no whitespace or control characters.
pub fn check_agent(field: &str, value: &str) -> Result<()> {
    if value.is_empty() {
        return Err(Error::invalid(format!("{field} is required")));
    }
    if value.chars().count() > MAX_NAME {
        return Err(Error::invalid(format!("{field} is longer than {MAX_NAME} characters")));
    }
    if value.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(Error::invalid(format!("{field} '{value}' contains whitespace or control characters")));
    }
    Ok(())
}

/// A required identifier such as a thread id.
pub fn check_id(field: &str, value: &str) -> Result<()> {
    if value.trim().is_empty() {
        return Err(Error::invalid(format!("{field} is required")));
    }
    if value.chars().count() > MAX_NAME {
        return Err(Error::invalid(format!("{field} is longer than {MAX_NAME} characters")));
    }
    Ok(())
}

/// A thread subject: not blank, at most 1000 characters.
pub fn check_subject(subject: &str) -> Result<()> {
    if subject.trim().is_empty() {
        return Err(Error::invalid("subject must not be blank"));
    }
    if subject.chars().count() > MAX_SUBJECT {
        return Err(Error::invalid(format!("subject is longer than {MAX_SUBJECT} characters")));
    }
    Ok(())
}

/// A message's summary, payload and artifacts.
pub fn check_message(input: &MessageInput) -> Result<()> {
    check_summary(&input.summary)?;
    if let Some(p) = &input.payload_json {
        check_object("payload_json", p)?;
    }
    check_artifacts(&input.artifacts)
}

pub fn check_summary(summary: &str) -> Result<()> {
    check_text("summary", summary)
}

/// A one-line text field (summary, reason, goal, title, topic): not blank, at most 4000
/// characters.
pub fn check_text(field: &str, value: &str) -> Result<()> {
    if value.trim().is_empty() {
        return Err(Error::invalid(format!("{field} is required and must not be blank")));
    }
    if value.chars().count() > MAX_SUMMARY {
        return Err(Error::invalid(format!("{field} is longer than {MAX_SUMMARY} characters")));
    }
    Ok(())
}

/// A thread subject made from a prefix and free text, cut to the subject limit.
pub fn subject_from(prefix: &str, text: &str) -> String {
    let first = text.lines().next().unwrap_or_default();
    format!("{prefix}{first}").chars().take(MAX_SUBJECT).collect()
}

/// Deepest nesting accepted inside a payload or metadata object. Responses and events wrap
/// the object a few levels deeper, and JSON parsers commonly stop at 128 levels (serde_json
/// does), so a deeper payload could be stored but not read back by clients.
pub const MAX_JSON_DEPTH: usize = 64;

pub fn check_object(field: &str, v: &Value) -> Result<()> {
    if !v.is_object() {
        return Err(Error::invalid(format!("{field} must be a JSON object, got {v}")));
    }
    // Iterative, so no recursion limit of our own applies.
    let mut stack = vec![(v, 1usize)];
    while let Some((node, depth)) = stack.pop() {
        if depth > MAX_JSON_DEPTH {
            return Err(Error::invalid(format!("{field} is nested more than {MAX_JSON_DEPTH} levels deep")));
        }
        match node {
            Value::Array(items) => stack.extend(items.iter().map(|i| (i, depth + 1))),
            Value::Object(map) => stack.extend(map.values().map(|i| (i, depth + 1))),
            _ => {}
        }
    }
    Ok(())
}

pub fn check_artifacts(artifacts: &[ArtifactInput]) -> Result<()> {
    for a in artifacts {
        if a.path.trim().is_empty() {
            return Err(Error::invalid("artifact path must not be empty"));
        }
        if let Some(k) = &a.kind
            && k.trim().is_empty()
        {
            return Err(Error::invalid("artifact kind must not be empty"));
        }
        if let Some(m) = &a.metadata_json {
            check_object("artifact metadata_json", m)?;
        }
    }
    Ok(())
}

/// A `limit`: 1..=MAX_LIMIT, defaulting to `default`.
pub fn check_limit(limit: Option<u32>, default: u32) -> Result<u32> {
    match limit {
        None => Ok(default),
        Some(0) => Err(Error::invalid("limit must be at least 1")),
        Some(n) if n > MAX_LIMIT => Err(Error::invalid(format!("limit must be at most {MAX_LIMIT}"))),
        Some(n) => Ok(n),
    }
}

/// SQL placeholder list for a set of statuses, and their text values.
pub fn status_list(statuses: &[ThreadStatus]) -> (String, Vec<String>) {
    let marks = vec!["?"; statuses.len()].join(",");
    (marks, statuses.iter().map(|s| s.as_str().to_string()).collect())
}
