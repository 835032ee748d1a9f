//! Linked peer tasks: `send` with `to_peer` reaches the tasks linked to the sender's task,
//! so neither session hardcodes the other's id. Links are symmetric and never removed.

use coord_proto::types::*;
use serde_json::json;

use crate::domain::check;
use crate::domain::events::{self, Draft};
use crate::error::{Error, Result};
use crate::store::Tx;
use crate::time::Ts;

/// The tasks linked to `task_id`, sorted.
pub fn of(tx: &dyn Tx, task_id: &str) -> Result<Vec<String>> {
    check::id("task_id", task_id)?;
    tx.peers_of(task_id)
}

/// `peers.link`.
pub fn link(tx: &mut dyn Tx, now: Ts, p: PeerLinkParams) -> Result<PeersResult> {
    check::id("task_id", &p.task_id)?;
    check::id("peer_task_id", &p.peer_task_id)?;
    if p.task_id == p.peer_task_id {
        return Err(Error::invalid("a task cannot be its own peer"));
    }
    let event_id = if tx.peer_link(&p.task_id, &p.peer_task_id, now)? {
        let payload = json!({"task_id": p.task_id, "peer_task_id": p.peer_task_id});
        let summary = format!("linked {} and {} as peers", p.task_id, p.peer_task_id);
        Some(events::record(tx, &Draft::about(EventType::PeersLinked, "", &p.task_id, "", &summary, &payload, now))?)
    } else {
        None
    };
    Ok(PeersResult { peers: tx.peers_of(&p.task_id)?, task_id: p.task_id, event_id })
}

/// `peers.list`.
pub fn list(tx: &dyn Tx, p: PeerListParams) -> Result<PeersResult> {
    let peers = of(tx, &p.task_id)?;
    Ok(PeersResult { task_id: p.task_id, peers, event_id: None })
}
