//! Leases: claim (exclusive, fenced by generation and token), renew, the holder check
//! every worker action goes through, and release. Like all inbox writes, each runs inside
//! the writer's transaction and appends its event there.

use coord_proto::types::*;
use coord_proto::{AppError, DEFAULT_LEASE_SECONDS, ErrorCode, MAX_LEASE_SECONDS};
use rusqlite::{Connection, OptionalExtension};
use serde_json::{Value, json};

use super::read;
use super::write::{Clock, mark_read_through, open_thread, save_thread};
use super::*;
use crate::db::WriteCtx;
use crate::error::{Error, Result};
use crate::events::{self, Draft};
use crate::util;

/// The stored lease row of a thread.
struct LeaseRow {
    agent: String,
    token: String,
    expires_at: String,
    released_at: Option<String>,
}

fn lease_row(conn: &Connection, thread_id: &str) -> Result<Option<LeaseRow>> {
    Ok(conn
        .prepare_cached("SELECT agent_id, lease_token, expires_at, released_at FROM leases WHERE thread_id = ?1")?
        .query_row([thread_id], |r| {
            Ok(LeaseRow { agent: r.get(0)?, token: r.get(1)?, expires_at: r.get(2)?, released_at: r.get(3)? })
        })
        .optional()?)
}

/// Only the agent holding the thread's live lease may act as its worker; with a token, only
/// the process holding that exact grant.
pub(super) fn require_holder(
    conn: &Connection,
    t: &Thread,
    agent: &str,
    token: Option<&str>,
    clock: &Clock,
) -> Result<()> {
    let holder = |msg: String| Error::app(ErrorCode::NotLeaseHolder, msg);
    let Some(LeaseRow { agent: holder_agent, token: holder_token, expires_at, released_at }) =
        lease_row(conn, &t.thread_id)?
    else {
        return Err(holder(format!("thread '{}' is not claimed; claim it first", t.thread_id)));
    };
    if released_at.is_some() {
        return Err(holder(format!("the lease on thread '{}' was released", t.thread_id)));
    }
    if holder_agent != agent {
        let active = expires_at.as_str() > clock.now.as_str();
        let e = if active {
            Error::App(
                AppError::new(
                    ErrorCode::NotLeaseHolder,
                    format!("thread '{}' is leased by '{holder_agent}', not '{agent}'", t.thread_id),
                )
                .with_details(json!({"holder": holder_agent, "expires_at": expires_at})),
            )
        } else {
            holder(format!("'{agent}' does not hold the lease on thread '{}'", t.thread_id))
        };
        return Err(e);
    }
    if let Some(tok) = token
        && tok != holder_token
    {
        return Err(Error::app(
            ErrorCode::StaleLease,
            format!(
                "lease token does not match the current lease on thread '{}' (a newer claim replaced it)",
                t.thread_id
            ),
        ));
    }
    if expires_at.as_str() <= clock.now.as_str() {
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

/// `inbox.claim`: grant a lease unless another agent holds a live one. Any agent may claim;
/// the thread becomes assigned to the claimer. Re-claiming by the holder grants a new lease
/// (new token, next generation), which fences off any older process of that agent.
pub fn claim(ctx: &mut WriteCtx<'_>, p: ClaimParams) -> Result<LeaseResult> {
    check_agent("agent", &p.agent)?;
    let secs = lease_seconds(p.lease_seconds)?;
    let clock = Clock::new();
    let conn = ctx.conn;
    let mut thread = open_thread(conn, &p.thread_id, &clock)?;
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
    let lease = Lease {
        thread_id: thread.thread_id.clone(),
        agent_id: p.agent.clone(),
        lease_token: util::new_token(),
        generation,
        claimed_at: clock.now.clone(),
        expires_at: util::ts_after(clock.at, secs),
    };
    conn.prepare_cached(
        "INSERT INTO leases (thread_id, agent_id, lease_token, claimed_at, expires_at, released_at, generation) \
         VALUES (?1, ?2, ?3, ?4, ?5, NULL, ?6) \
         ON CONFLICT (thread_id) DO UPDATE SET agent_id = excluded.agent_id, \
         lease_token = excluded.lease_token, claimed_at = excluded.claimed_at, \
         expires_at = excluded.expires_at, released_at = NULL, generation = excluded.generation, \
         expiry_reported = 0",
    )?
    .execute(rusqlite::params![
        lease.thread_id,
        lease.agent_id,
        lease.lease_token,
        lease.claimed_at,
        lease.expires_at,
        lease.generation
    ])?;
    thread.status = ThreadStatus::Claimed;
    thread.assigned_to = p.agent.clone();
    thread.updated_at = clock.now.clone();
    thread.lease = Some(LeaseView {
        agent_id: lease.agent_id.clone(),
        generation,
        claimed_at: lease.claimed_at.clone(),
        expires_at: lease.expires_at.clone(),
        active: true,
    });
    save_thread(conn, &thread)?;
    let last = read::last_message_event(conn, &thread.thread_id)?;
    mark_read_through(conn, &p.agent, &thread.thread_id, last)?;
    let summary = format!("claimed by {} (generation {generation})", p.agent);
    let payload = json!({"generation": generation, "expires_at": lease.expires_at});
    let event_id = lease_event(ctx, &thread, EventType::ThreadClaimed, &p.agent, &summary, &payload, &clock)?;
    crate::orch::reconcile::on_thread(ctx, &thread, &p.agent, &clock.now)?;
    Ok(LeaseResult { thread, lease, event_id })
}

fn lease_event(
    ctx: &mut WriteCtx<'_>,
    thread: &Thread,
    event_type: EventType,
    actor: &str,
    summary: &str,
    payload: &Value,
    clock: &Clock,
) -> Result<i64> {
    events::record(ctx, &Draft::for_thread(event_type, thread, actor, summary, payload, &clock.now))
}

/// `inbox.renew`: extend the holder's live lease.
pub fn renew(ctx: &mut WriteCtx<'_>, p: RenewParams) -> Result<LeaseResult> {
    check_agent("agent", &p.agent)?;
    let secs = lease_seconds(p.lease_seconds)?;
    let clock = Clock::new();
    let conn = ctx.conn;
    let mut thread = open_thread(conn, &p.thread_id, &clock)?;
    require_holder(conn, &thread, &p.agent, p.lease_token.as_deref(), &clock)?;
    // Renewing never shortens a lease: the new expiry is the later of the two.
    let expires_at = util::ts_after(clock.at, secs);
    conn.prepare_cached("UPDATE leases SET expires_at = MAX(expires_at, ?2) WHERE thread_id = ?1")?
        .execute(rusqlite::params![thread.thread_id, expires_at])?;
    let lease = conn
        .prepare_cached(
            "SELECT thread_id, agent_id, lease_token, generation, claimed_at, expires_at \
             FROM leases WHERE thread_id = ?1",
        )?
        .query_row([&thread.thread_id], |r| {
            Ok(Lease {
                thread_id: r.get(0)?,
                agent_id: r.get(1)?,
                lease_token: r.get(2)?,
                generation: r.get(3)?,
                claimed_at: r.get(4)?,
                expires_at: r.get(5)?,
            })
        })?;
    if let Some(l) = &mut thread.lease {
        l.expires_at = lease.expires_at.clone();
        l.active = true;
    }
    let summary = format!("lease renewed by {} until {}", p.agent, lease.expires_at);
    let payload = json!({"generation": lease.generation, "expires_at": lease.expires_at});
    let event_id = lease_event(ctx, &thread, EventType::LeaseRenewed, &p.agent, &summary, &payload, &clock)?;
    Ok(LeaseResult { thread, lease, event_id })
}

pub(super) fn release_lease(conn: &Connection, thread_id: &str, clock: &Clock) -> Result<()> {
    conn.prepare_cached("UPDATE leases SET released_at = ?2 WHERE thread_id = ?1 AND released_at IS NULL")?
        .execute(rusqlite::params![thread_id, clock.now])?;
    Ok(())
}
