//! Linked peer tasks: `send` with `to_peer` reaches the tasks linked to the sender's task,
//! so neither session hardcodes the other's id. Links are symmetric and never removed.

use coord_proto::types::*;
use serde_json::json;

use crate::bound;
use crate::domain::check;
use crate::domain::events::{self, Draft};
use crate::error::{Error, Result};
use crate::store::Tx;
use crate::time::Ts;

/// The tasks linked to `task_id`, sorted.
pub fn of(tx: &dyn Tx, task_id: &str) -> Result<Vec<String>> {
    check::id("task_id", task_id)?;
    tx.peers().peers_of(task_id)
}

/// `peers.link`.
pub fn link(tx: &mut dyn Tx, now: Ts, p: PeerLinkParams) -> Result<PeersResult> {
    check::id("task_id", &p.task_id)?;
    check::id("peer_task_id", &p.peer_task_id)?;
    if p.task_id == p.peer_task_id {
        return Err(Error::invalid("a task cannot be its own peer"));
    }
    let event_id = if tx.peers_mut().peer_link(&p.task_id, &p.peer_task_id, now)? {
        let payload = json!({"task_id": p.task_id, "peer_task_id": p.peer_task_id});
        let summary = format!("linked {} and {} as peers", p.task_id, p.peer_task_id);
        Some(events::record(tx, &Draft::about(EventType::PeersLinked, "", &p.task_id, "", &summary, &payload, now))?)
    } else {
        None
    };
    let peers = bound::page(tx.peers().peers_of(&p.task_id)?, String::clone);
    Ok(PeersResult {
        peers: peers.items,
        task_id: p.task_id,
        event_id,
        truncated: peers.truncated,
        next_after: peers.next_after,
    })
}

/// `peers.list`.
pub fn list(tx: &dyn Tx, p: PeerListParams) -> Result<PeersResult> {
    let peers = bound::after_key(of(tx, &p.task_id)?, p.after.as_deref(), |s| s.as_str())?;
    let page = bound::page(peers, String::clone);
    Ok(PeersResult {
        task_id: p.task_id,
        peers: page.items,
        event_id: None,
        truncated: page.truncated,
        next_after: page.next_after,
    })
}

#[cfg(test)]
mod tests {
    use coord_proto::ErrorCode;

    use super::*;
    use crate::store::sqlite::testing::Memory;

    fn pair(a: &str, b: &str) -> PeerLinkParams {
        PeerLinkParams { task_id: a.into(), peer_task_id: b.into() }
    }

    fn peers_of(m: &Memory, task: &str) -> Vec<String> {
        m.read(|tx, _| list(tx, PeerListParams { task_id: task.into(), after: None })).unwrap().peers
    }

    #[test]
    fn a_link_makes_each_task_the_others_peer_with_one_event() {
        let m = Memory::new();
        let r = m.write(|tx, now| link(tx, now, pair("front", "back"))).unwrap();
        assert_eq!((r.task_id.as_str(), r.peers.as_slice()), ("front", ["back".to_string()].as_slice()));
        let events = m.events();
        assert_eq!(events.len(), 1);
        assert_eq!((events[0].event_type, Some(events[0].event_id)), (EventType::PeersLinked, r.event_id));
        assert_eq!(events[0].task_id, "front");
        assert_eq!(peers_of(&m, "back"), ["front"], "links are symmetric");
    }

    #[test]
    fn linking_again_either_way_changes_nothing_and_records_no_event() {
        let m = Memory::new();
        m.write(|tx, now| link(tx, now, pair("front", "back"))).unwrap();
        let again = m.write(|tx, now| link(tx, now, pair("front", "back"))).unwrap();
        let reversed = m.write(|tx, now| link(tx, now, pair("back", "front"))).unwrap();
        assert_eq!((again.event_id, reversed.event_id), (None, None));
        assert_eq!(reversed.peers, ["front"]);
        assert_eq!(m.events().len(), 1);
        assert_eq!(peers_of(&m, "front"), ["back"]);
    }

    #[test]
    fn a_task_has_many_peers_listed_sorted_but_peers_of_peers_are_not_linked() {
        let m = Memory::new();
        for peer in ["zeta", "alpha", "mid"] {
            m.write(|tx, now| link(tx, now, pair("hub", peer))).unwrap();
        }
        assert_eq!(peers_of(&m, "hub"), ["alpha", "mid", "zeta"]);
        assert_eq!(peers_of(&m, "alpha"), ["hub"], "links are not transitive");
        assert!(peers_of(&m, "lonely").is_empty());
    }

    #[test]
    fn a_task_cannot_be_its_own_peer_and_both_ids_are_required() {
        let m = Memory::new();
        for p in [pair("front", "front"), pair("", "back"), pair("front", "  ")] {
            let e = m.write(|tx, now| link(tx, now, p.clone())).unwrap_err();
            assert_eq!(e.code(), Some(ErrorCode::InvalidInput), "{p:?}: {e}");
        }
        assert!(m.events().is_empty());
        assert!(peers_of(&m, "front").is_empty());
        let e = m.read(|tx, _| list(tx, PeerListParams { task_id: String::new(), after: None })).unwrap_err();
        assert_eq!(e.code(), Some(ErrorCode::InvalidInput));
    }
}
