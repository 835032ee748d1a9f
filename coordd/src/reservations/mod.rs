//! File-scope reservations: reserve (exclusive or shared, with a TTL), release, stale
//! takeover with a fencing generation, listing (who holds this file?) and the check the
//! git pre-commit hook runs. Rows are never deleted: released and taken-over reservations
//! stay as history. Overlap between scopes is decided by [`glob`].

pub mod glob;
#[cfg(test)]
mod tests;

use std::time::Duration;

use coord_proto::ErrorCode;
use coord_proto::types::*;
use rusqlite::{Connection, Row, params_from_iter, types::Value as SqlValue};

use crate::agents::{self, invalid_args};
use crate::db::{WriteCtx, parse_col};
use crate::error::{Error, Result};
use crate::events::{self, Draft};
use crate::inbox::check_id;
use crate::util;

const COLUMNS: &str =
    "reservation_id, scope, agent_id, task_id, shared, state, generation, created_at, expires_at, released_at";

fn from_row(r: &Row<'_>, now: &str) -> rusqlite::Result<Reservation> {
    let state: ReservationState = parse_col(r, 5)?;
    let expires_at: String = r.get(8)?;
    Ok(Reservation {
        reservation_id: r.get(0)?,
        scope: r.get(1)?,
        agent_id: r.get(2)?,
        task_id: r.get(3)?,
        shared: r.get(4)?,
        state,
        stale: state == ReservationState::Active && expires_at.as_str() <= now,
        generation: r.get(6)?,
        created_at: r.get(7)?,
        expires_at,
        released_at: r.get(9)?,
    })
}

fn check_who(agent: &str) -> Result<()> {
    agents::check_name("agent", agent)
}

fn scope_arg(scope: &str) -> Result<String> {
    glob::normalize(scope).map_err(invalid_args)
}

/// Every active reservation (stale ones included).
fn active(conn: &Connection, now: &str) -> Result<Vec<Reservation>> {
    let sql = format!("SELECT {COLUMNS} FROM reservations WHERE state = 'active' ORDER BY scope, reservation_id");
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map([], |r| from_row(r, now))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

fn describe(r: &Reservation) -> String {
    let mode = if r.shared { "shared" } else { "exclusive" };
    format!("{}'s {mode} reservation of '{}' (task {}, until {})", r.agent_id, r.scope, r.task_id, r.expires_at)
}

fn details(key: &str, rs: &[Reservation]) -> serde_json::Value {
    serde_json::json!({ key: rs })
}

fn set_state(conn: &Connection, id: &str, state: ReservationState, now: &str) -> Result<()> {
    conn.prepare_cached("UPDATE reservations SET state = ?2, released_at = ?3 WHERE reservation_id = ?1")?
        .execute([id, state.as_str(), now])?;
    Ok(())
}

fn event(ctx: &mut WriteCtx<'_>, t: EventType, r: &Reservation, actor: &str, summary: &str, now: &str) -> Result<i64> {
    let payload = serde_json::to_value(r).unwrap_or_default();
    events::record(ctx, &Draft::about(t, &r.agent_id, &r.task_id, actor, summary, &payload, now))
}

/// `reservations.reserve`.
pub fn reserve(ctx: &mut WriteCtx<'_>, p: ReserveParams) -> Result<ReserveResult> {
    check_who(&p.agent)?;
    agents::check_known(ctx.conn, &p.agent)?;
    let scope = scope_arg(&p.scope)?;
    let task = match p.task_id.as_deref().map(str::trim) {
        Some(t) if !t.is_empty() => t.to_string(),
        _ => return Err(Error::app(ErrorCode::MissingBeadId, "a reservation needs a task: pass --task (task_id)")),
    };
    check_id("task_id", &task)?;
    let ttl = p.ttl_minutes.unwrap_or(RESERVATION_TTL_DEFAULT);
    if !(RESERVATION_TTL_MIN..=RESERVATION_TTL_MAX).contains(&ttl) {
        return Err(invalid_args(format!(
            "ttl must be {RESERVATION_TTL_MIN} to {RESERVATION_TTL_MAX} minutes, got {ttl}"
        )));
    }
    let at = util::now();
    let now = util::ts(at);
    let expires_at = util::ts(at + Duration::from_secs(u64::from(ttl) * 60));

    let mut conflicts = Vec::new();
    let mut stale = Vec::new();
    let mut own = None;
    for r in active(ctx.conn, &now)? {
        if r.agent_id == p.agent {
            if r.scope == scope {
                own = Some(r);
            }
            continue;
        }
        if (r.shared && p.shared) || !glob::overlaps(&r.scope, &scope) {
            continue;
        }
        if r.stale { stale.push(r) } else { conflicts.push(r) }
    }
    if let Some(first) = conflicts.first() {
        return Err(Error::App(
            coord_proto::AppError::new(
                ErrorCode::ReservationConflict,
                format!("'{scope}' overlaps {}", describe(first)),
            )
            .with_details(details("conflicts", &conflicts)),
        ));
    }
    if let Some(first) = stale.first().filter(|_| !p.takeover_stale) {
        return Err(Error::App(
            coord_proto::AppError::new(
                ErrorCode::ReservationStaleFound,
                format!(
                    "'{scope}' overlaps {}, which has expired; pass --takeover-stale to take it over",
                    describe(first)
                ),
            )
            .with_details(details("stale", &stale)),
        ));
    }

    // The agent already holds this exact scope, live and in the same mode: extend it.
    if let Some(mut r) = own.clone().filter(|r| !r.stale && r.shared == p.shared) {
        ctx.conn
            .prepare_cached("UPDATE reservations SET expires_at = ?2, task_id = ?3 WHERE reservation_id = ?1")?
            .execute([&r.reservation_id, &expires_at, &task])?;
        r.expires_at = expires_at;
        r.task_id = task;
        let summary = format!("{} extended its reservation of {}", p.agent, r.scope);
        let event_id = event(ctx, EventType::ReservationCreated, &r, &p.agent, &summary, &now)?;
        return Ok(ReserveResult { reservation: r, taken_over: vec![], renewed: true, event_id });
    }

    let mut generation = max_generation(ctx.conn, &scope)?;
    let mut taken_over = Vec::with_capacity(stale.len());
    for mut r in stale {
        set_state(ctx.conn, &r.reservation_id, ReservationState::Expired, &now)?;
        r.state = ReservationState::Expired;
        r.stale = false;
        r.released_at = Some(now.clone());
        generation = generation.max(r.generation);
        let summary = format!("{} took over the stale reservation of {} by {}", p.agent, r.scope, r.agent_id);
        event(ctx, EventType::ReservationExpired, &r, &p.agent, &summary, &now)?;
        taken_over.push(r);
    }
    // Its own stale reservation, or one in the other mode, is replaced.
    if let Some(r) = own {
        let state = if r.stale { ReservationState::Expired } else { ReservationState::Released };
        set_state(ctx.conn, &r.reservation_id, state, &now)?;
    }
    let r = Reservation {
        reservation_id: util::new_id("res"),
        scope,
        agent_id: p.agent.clone(),
        task_id: task,
        shared: p.shared,
        state: ReservationState::Active,
        stale: false,
        generation: generation + 1,
        created_at: now.clone(),
        expires_at,
        released_at: None,
    };
    ctx.conn
        .prepare_cached(
            "INSERT INTO reservations (reservation_id, scope, agent_id, task_id, shared, state, generation, \
             created_at, expires_at) VALUES (?1, ?2, ?3, ?4, ?5, 'active', ?6, ?7, ?8)",
        )?
        .execute(rusqlite::params![
            r.reservation_id,
            r.scope,
            r.agent_id,
            r.task_id,
            r.shared,
            r.generation,
            r.created_at,
            r.expires_at
        ])?;
    let mode = if r.shared { "shared" } else { "exclusive" };
    let summary = format!("{} reserved {} ({mode}, generation {})", r.agent_id, r.scope, r.generation);
    let event_id = event(ctx, EventType::ReservationCreated, &r, &p.agent, &summary, &now)?;
    Ok(ReserveResult { reservation: r, taken_over, renewed: false, event_id })
}

/// The highest generation any reservation of exactly this scope ever had (0: none).
fn max_generation(conn: &Connection, scope: &str) -> Result<i64> {
    Ok(conn
        .prepare_cached("SELECT COALESCE(MAX(generation), 0) FROM reservations WHERE scope = ?1")?
        .query_row([scope], |r| r.get(0))?)
}

/// `reservations.release`: the owner releases its active reservation of exactly `scope`.
pub fn release(ctx: &mut WriteCtx<'_>, p: ReleaseParams) -> Result<ReleaseResult> {
    check_who(&p.agent)?;
    agents::check_known(ctx.conn, &p.agent)?;
    let scope = scope_arg(&p.scope)?;
    let now = util::ts(util::now());
    let holders: Vec<Reservation> = active(ctx.conn, &now)?.into_iter().filter(|r| r.scope == scope).collect();
    let Some(mut r) = holders.iter().find(|r| r.agent_id == p.agent).cloned() else {
        return Err(match holders.first() {
            Some(other) => Error::app(
                ErrorCode::ReleaseForbidden,
                format!("only the owner may release: '{scope}' is held by {}", describe(other)),
            ),
            None => Error::app(ErrorCode::ReservationNotFound, format!("no active reservation of '{scope}'")),
        });
    };
    set_state(ctx.conn, &r.reservation_id, ReservationState::Released, &now)?;
    r.state = ReservationState::Released;
    r.stale = false;
    r.released_at = Some(now.clone());
    let summary = format!("{} released {}", r.agent_id, r.scope);
    let event_id = event(ctx, EventType::ReservationReleased, &r, &p.agent, &summary, &now)?;
    Ok(ReleaseResult { reservation: r, event_id })
}

/// `reservations.list`: active reservations (or the whole history), filtered.
pub fn list(conn: &Connection, p: &ReservationListParams) -> Result<Vec<Reservation>> {
    let now = util::ts(util::now());
    let limit = crate::inbox::check_limit(p.limit, coord_proto::MAX_LIMIT)?;
    let path = p.path.as_deref().map(scope_arg).transpose()?;
    let mut clauses = Vec::new();
    let mut args: Vec<SqlValue> = Vec::new();
    if !p.include_history {
        clauses.push("state = 'active'".to_string());
    }
    for (col, v) in [("agent_id", &p.agent), ("task_id", &p.task_id)] {
        if let Some(v) = v {
            args.push(SqlValue::Text(v.clone()));
            clauses.push(format!("{col} = ?{}", args.len()));
        }
    }
    let filter = if clauses.is_empty() { String::new() } else { format!("WHERE {}", clauses.join(" AND ")) };
    let sql = format!("SELECT {COLUMNS} FROM reservations {filter} ORDER BY created_at DESC, reservation_id DESC");
    let mut stmt = conn.prepare_cached(&sql)?;
    let mut out = Vec::new();
    for r in stmt.query_map(params_from_iter(args), |r| from_row(r, &now))? {
        let r = r?;
        if path.as_deref().is_none_or(|f| glob::covers(&r.scope, f)) {
            out.push(r);
            if out.len() >= limit as usize {
                break;
            }
        }
    }
    Ok(out)
}

/// `reservations.check`: the paths that lie in another agent's live exclusive reservation.
pub fn check(conn: &Connection, p: &CheckPathsParams) -> Result<Vec<PathConflict>> {
    if let Some(a) = &p.agent {
        check_who(a)?;
    }
    let now = util::ts(util::now());
    let held: Vec<Reservation> = active(conn, &now)?
        .into_iter()
        .filter(|r| !r.stale && !r.shared && p.agent.as_deref() != Some(r.agent_id.as_str()))
        .collect();
    let mut out = Vec::new();
    for path in &p.paths {
        // A path no scope can name (a backslash, an absolute path) is held by nobody.
        let Ok(norm) = glob::normalize(path) else { continue };
        for r in held.iter().filter(|r| glob::covers(&r.scope, &norm)) {
            out.push(PathConflict { path: path.clone(), reservation: r.clone() });
        }
    }
    Ok(out)
}

/// Active reservations for `inbox.status`, filtered by task and agent.
pub fn active_for(conn: &Connection, task: Option<&str>, agent: Option<&str>, now: &str) -> Result<Vec<Reservation>> {
    Ok(active(conn, now)?
        .into_iter()
        .filter(|r| task.is_none_or(|t| r.task_id == t) && agent.is_none_or(|a| r.agent_id == a))
        .collect())
}
