//! Linked peer tasks: `send --to-peer` reaches the tasks linked to the sender's task, so
//! neither session hardcodes the other's id. Links are symmetric and never removed.

use coord_proto::types::*;
use rusqlite::Connection;
use serde_json::json;

use crate::db::WriteCtx;
use crate::error::{Error, Result};
use crate::events::{self, Draft};
use crate::inbox::check_id;
use crate::util;

/// The tasks linked to `task_id`, sorted.
pub fn of(conn: &Connection, task_id: &str) -> Result<Vec<String>> {
    check_id("task_id", task_id)?;
    let mut stmt = conn.prepare_cached("SELECT peer_task_id FROM peers WHERE task_id = ?1 ORDER BY peer_task_id")?;
    let rows = stmt.query_map([task_id], |r| r.get(0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// `peers.link`.
pub fn link(ctx: &mut WriteCtx<'_>, p: PeerLinkParams) -> Result<PeersResult> {
    check_id("task_id", &p.task_id)?;
    check_id("peer_task_id", &p.peer_task_id)?;
    if p.task_id == p.peer_task_id {
        return Err(Error::invalid("a task cannot be its own peer"));
    }
    let now = util::ts(util::now());
    let mut stmt = ctx
        .conn
        .prepare_cached("INSERT OR IGNORE INTO peers (task_id, peer_task_id, created_at) VALUES (?1, ?2, ?3)")?;
    let added =
        stmt.execute([&p.task_id, &p.peer_task_id, &now])? + stmt.execute([&p.peer_task_id, &p.task_id, &now])?;
    let event_id = if added > 0 {
        let payload = json!({"task_id": p.task_id, "peer_task_id": p.peer_task_id});
        let summary = format!("linked {} and {} as peers", p.task_id, p.peer_task_id);
        Some(events::record(ctx, &Draft::about(EventType::PeersLinked, "", &p.task_id, "", &summary, &payload, &now))?)
    } else {
        None
    };
    Ok(PeersResult { peers: of(ctx.conn, &p.task_id)?, task_id: p.task_id, event_id })
}
