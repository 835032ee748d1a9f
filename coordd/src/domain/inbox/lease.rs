//! Leases: claim (exclusive, fenced by a generation and a secret token), renew, and the
//! holder check every worker action goes through. Each change records its event.

use coord_proto::types::*;
use coord_proto::{AppError, DEFAULT_LEASE_SECONDS, ErrorCode, MAX_LEASE_SECONDS};
use serde_json::{Value, json};

use super::thread;
use crate::domain::check;
use crate::domain::events::{self, Draft};
use crate::error::{Error, Result};
use crate::ids;
use crate::store::Tx;
use crate::store::repos::LeaseRow;
use crate::time::Ts;

/// Only the agent holding the thread's live lease may act as its worker; with a token, only
/// the process holding that exact grant.
pub fn require_holder(lease: Option<&LeaseRow>, t: &Thread, agent: &str, token: Option<&str>, now: Ts) -> Result<()> {
    let holder = |msg: String| Error::app(ErrorCode::NotLeaseHolder, msg);
    let Some(l) = lease else {
        return Err(holder(format!("thread '{}' is not claimed; claim it first", t.thread_id)));
    };
    if l.released_at.is_some() {
        return Err(holder(format!("the lease on thread '{}' was released", t.thread_id)));
    }
    let expires_at = l.expires_at.to_string();
    if l.agent_id != agent {
        if l.expires_at > now {
            return Err(Error::App(
                AppError::new(
                    ErrorCode::NotLeaseHolder,
                    format!("thread '{}' is leased by '{}', not '{agent}'", t.thread_id, l.agent_id),
                )
                .with_details(json!({"holder": l.agent_id, "expires_at": expires_at})),
            ));
        }
        return Err(holder(format!("'{agent}' does not hold the lease on thread '{}'", t.thread_id)));
    }
    if let Some(tok) = token
        && tok != l.token
    {
        return Err(Error::app(
            ErrorCode::StaleLease,
            format!(
                "lease token does not match the current lease on thread '{}' (a newer claim replaced it)",
                t.thread_id
            ),
        ));
    }
    if l.expires_at <= now {
        return Err(Error::App(
            AppError::new(
                ErrorCode::LeaseExpired,
                format!("the lease on thread '{}' expired at {expires_at}; claim it again", t.thread_id),
            )
            .with_details(json!({"expired_at": expires_at})),
        ));
    }
    Ok(())
}

fn lease_seconds(v: Option<u64>) -> Result<u64> {
    match v.unwrap_or(DEFAULT_LEASE_SECONDS) {
        0 => Err(Error::invalid("lease_seconds must be at least 1")),
        n if n > MAX_LEASE_SECONDS => Err(Error::invalid(format!("lease_seconds must be at most {MAX_LEASE_SECONDS}"))),
        n => Ok(n),
    }
}

fn lease_event(
    tx: &mut dyn Tx,
    thread: &Thread,
    event_type: EventType,
    actor: &str,
    summary: &str,
    payload: &Value,
    now: Ts,
) -> Result<i64> {
    events::record(tx, &Draft::for_thread(event_type, thread, actor, summary, payload, now))
}

/// `inbox.claim`: grant a lease unless another agent holds a live one. Any agent may claim;
/// the thread becomes assigned to the claimer. Re-claiming by the holder grants a new lease
/// (new token, next generation), which fences off any older process of that agent.
pub fn claim(tx: &mut dyn Tx, now: Ts, p: ClaimParams) -> Result<LeaseResult> {
    check::agent("agent", &p.agent)?;
    let secs = lease_seconds(p.lease_seconds)?;
    let (mut thread, _) = thread::open(tx, &p.thread_id, now)?;
    if let Some(l) = &thread.lease
        && l.active
        && l.agent_id != p.agent
    {
        return Err(Error::App(
            AppError::new(
                ErrorCode::LeaseConflict,
                format!("thread '{}' is already claimed by '{}' until {}", thread.thread_id, l.agent_id, l.expires_at),
            )
            .with_details(json!({"holder": l.agent_id, "expires_at": l.expires_at})),
        ));
    }
    let generation = thread.lease.as_ref().map_or(1, |l| l.generation + 1);
    let row = LeaseRow {
        agent_id: p.agent.clone(),
        token: ids::new_token(),
        generation,
        claimed_at: now,
        expires_at: now.plus_secs(secs),
        released_at: None,
    };
    tx.leases_mut().lease_grant(&thread.thread_id, &row)?;
    let lease = Lease {
        thread_id: thread.thread_id.clone(),
        agent_id: row.agent_id,
        lease_token: row.token,
        generation,
        claimed_at: now.to_string(),
        expires_at: row.expires_at.to_string(),
    };
    thread.status = ThreadStatus::Claimed;
    thread.assigned_to = p.agent.clone();
    thread.updated_at = now.to_string();
    thread.lease = Some(LeaseView {
        agent_id: lease.agent_id.clone(),
        generation,
        claimed_at: lease.claimed_at.clone(),
        expires_at: lease.expires_at.clone(),
        active: true,
    });
    tx.threads_mut().thread_save(&thread)?;
    let last = tx.messages().last_message_event(&thread.thread_id)?;
    tx.threads_mut().read_mark(&p.agent, &thread.thread_id, last)?;
    let summary = format!("claimed by {} (generation {generation})", p.agent);
    let payload = json!({"generation": generation, "expires_at": lease.expires_at});
    let event_id = lease_event(tx, &thread, EventType::ThreadClaimed, &p.agent, &summary, &payload, now)?;
    Ok(LeaseResult { thread, lease, event_id })
}

/// `inbox.renew`: extend the holder's live lease. Renewing never shortens a lease: the new
/// expiry is the later of the two.
pub fn renew(tx: &mut dyn Tx, now: Ts, p: RenewParams) -> Result<LeaseResult> {
    check::agent("agent", &p.agent)?;
    let secs = lease_seconds(p.lease_seconds)?;
    let (mut thread, row) = thread::open(tx, &p.thread_id, now)?;
    require_holder(row.as_ref(), &thread, &p.agent, p.lease_token.as_deref(), now)?;
    let row = row.expect("the holder check found a lease");
    let expires_at = row.expires_at.max(now.plus_secs(secs));
    tx.leases_mut().lease_set_expiry(&thread.thread_id, expires_at)?;
    if let Some(l) = &mut thread.lease {
        l.expires_at = expires_at.to_string();
        l.active = true;
    }
    let lease = Lease {
        thread_id: thread.thread_id.clone(),
        agent_id: row.agent_id,
        lease_token: row.token,
        generation: row.generation,
        claimed_at: row.claimed_at.to_string(),
        expires_at: expires_at.to_string(),
    };
    let summary = format!("lease renewed by {} until {}", p.agent, lease.expires_at);
    let payload = json!({"generation": lease.generation, "expires_at": lease.expires_at});
    let event_id = lease_event(tx, &thread, EventType::LeaseRenewed, &p.agent, &summary, &payload, now)?;
    Ok(LeaseResult { thread, lease, event_id })
}

/// End the thread's lease, if one is live, and show it inactive.
pub fn release(tx: &mut dyn Tx, thread: &mut Thread, now: Ts) -> Result<()> {
    tx.leases_mut().lease_release(&thread.thread_id, now)?;
    if let Some(l) = &mut thread.lease {
        l.active = false;
    }
    Ok(())
}

/// When the next unreleased, unreported lease runs out, if one does.
pub fn next_expiry(tx: &dyn Tx) -> Result<Option<Ts>> {
    tx.leases().lease_next_expiry()
}

/// Record `lease.expired` for every unreleased lease past its expiry, once per grant (the
/// lease and its thread do not change: expiry is computed whenever a lease is read).
pub fn report_expired(tx: &mut dyn Tx, now: Ts) -> Result<()> {
    for (thread_id, l) in tx.leases().leases_expired_unreported(now)? {
        tx.leases_mut().lease_mark_reported(&thread_id)?;
        let (thread, _) = thread::load(tx, &thread_id, now)?;
        if thread.status.is_terminal() {
            continue;
        }
        let expires_at = l.expires_at.to_string();
        let summary = format!("lease of {} on {thread_id} expired at {expires_at} without renewal", l.agent_id);
        let payload = json!({"agent": l.agent_id, "expires_at": expires_at, "generation": l.generation});
        lease_event(tx, &thread, EventType::LeaseExpired, &l.agent_id, &summary, &payload, now)?;
    }
    Ok(())
}
