//! `inbox.status`: the coordination summary. Active reservations, the messages that
//! require an ack and have none yet (with how long they have waited), and counts of mail
//! and reservations by state, optionally narrowed to one task and/or one agent.

use coord_proto::types::*;
use rusqlite::Connection;

use crate::error::Result;
use crate::mail::{ITEM_COLUMNS, ITEM_FROM, item_from_row};
use crate::{inbox, reservations, util};

/// Most unacked messages listed (the count is exact).
const MAX_UNACKED: u32 = 500;

pub fn status(conn: &Connection, p: &StatusParams) -> Result<StatusResult> {
    if let Some(a) = &p.agent {
        inbox::check_agent("agent", a)?;
    }
    let at = util::now();
    let now = util::ts(at);
    let task = p.task_id.as_deref();
    let agent = p.agent.as_deref();
    let reservations = reservations::active_for(conn, task, agent, &now)?;

    // Unacked: messages to the agent, or from it and still waiting for someone's ack.
    let sql = format!(
        "SELECT {ITEM_COLUMNS} FROM {ITEM_FROM} WHERE m.requires_ack = 1 AND x.state <> 'acked' \
         AND (?1 IS NULL OR t.task_id = ?1) AND (?2 IS NULL OR x.recipient = ?2 OR m.from_agent = ?2) \
         ORDER BY x.event_id LIMIT {MAX_UNACKED}"
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let unacked = stmt
        .query_map(rusqlite::params![task, agent], item_from_row)?
        .map(|r| {
            r.map(|mail| {
                let sent = humantime::parse_rfc3339(&mail.created_at).unwrap_or(at);
                let waiting_seconds = at.duration_since(sent).map_or(0, |d| d.as_secs());
                UnackedItem { mail, waiting_seconds }
            })
        })
        .collect::<Result<Vec<_>, _>>()?;

    let mut counts = StatusCounts::default();
    let mut stmt = conn.prepare_cached(
        "SELECT x.state, m.requires_ack, COUNT(*) FROM mail x JOIN messages m ON m.message_id = x.message_id \
         JOIN threads t ON t.thread_id = m.thread_id \
         WHERE (?1 IS NULL OR t.task_id = ?1) AND (?2 IS NULL OR x.recipient = ?2) GROUP BY x.state, m.requires_ack",
    )?;
    let rows = stmt.query_map(rusqlite::params![task, agent], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, bool>(1)?, r.get::<_, i64>(2)? as u64))
    })?;
    for row in rows {
        let (state, requires_ack, n) = row?;
        match state.as_str() {
            "unread" => counts.unread += n,
            "read" => counts.read += n,
            _ => counts.acked += n,
        }
        if requires_ack && state != "acked" {
            counts.unacked_required += n;
        }
    }
    let mut stmt = conn.prepare_cached(
        "SELECT state, expires_at <= ?3, COUNT(*) FROM reservations \
         WHERE (?1 IS NULL OR task_id = ?1) AND (?2 IS NULL OR agent_id = ?2) GROUP BY 1, 2",
    )?;
    let rows = stmt.query_map(rusqlite::params![task, agent, now], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, bool>(1)?, r.get::<_, i64>(2)? as u64))
    })?;
    for row in rows {
        match row? {
            (s, true, n) if s == "active" => counts.reservations_stale += n,
            (s, false, n) if s == "active" => counts.reservations_active += n,
            (s, _, n) if s == "released" => counts.reservations_released += n,
            (_, _, n) => counts.reservations_expired += n,
        }
    }
    Ok(StatusResult { reservations, unacked, counts })
}
