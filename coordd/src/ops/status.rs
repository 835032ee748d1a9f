//! `inbox.status`: the coordination summary. Active reservations, the messages that
//! require an ack and have none yet (with how long they have waited), and counts of mail
//! and reservations by state, optionally narrowed to one task and/or one agent.

use coord_proto::types::*;

use crate::domain::mail::copies as mail;
use crate::domain::{check, reservations};
use crate::error::Result;
use crate::store::Tx;
use crate::time::Ts;

/// Most unacked messages listed (the count is exact).
const MAX_UNACKED: u32 = 500;

pub fn status(tx: &dyn Tx, now: Ts, p: &StatusParams) -> Result<StatusResult> {
    if let Some(a) = &p.agent {
        check::agent("agent", a)?;
    }
    let (task, agent) = (p.task_id.as_deref(), p.agent.as_deref());
    let reservations: Vec<Reservation> = reservations::active(tx, now)?
        .into_iter()
        .filter(|r| task.is_none_or(|t| r.task_id == t) && agent.is_none_or(|a| r.agent_id == a))
        .collect();
    // Unacked: messages to the agent, or from it and still waiting for someone's ack.
    let unacked = tx
        .mail()
        .mail_unacked(task, agent, MAX_UNACKED)?
        .into_iter()
        .map(|row| {
            let sent = Ts::parse(&row.created_at).unwrap_or(now);
            UnackedItem { waiting_seconds: now.secs_since(sent), mail: mail::item(row, now) }
        })
        .collect();
    let mut counts = StatusCounts::default();
    for (state, requires_ack, n) in tx.mail().mail_counts(task, agent)? {
        match state {
            MailState::Unread => counts.unread += n,
            MailState::Read => counts.read += n,
            MailState::Acked => counts.acked += n,
        }
        if requires_ack && state != MailState::Acked {
            counts.unacked_required += n;
        }
    }
    let r = tx.reservations().reservation_counts(task, agent, now)?;
    counts.reservations_active = r.active;
    counts.reservations_stale = r.stale;
    counts.reservations_released = r.released;
    counts.reservations_expired = r.expired;
    Ok(StatusResult { reservations, unacked, counts })
}
