//! File-scope reservations: reserve (exclusive or shared, with a TTL), release, stale
//! takeover with a fencing generation, listing (who holds this file?) and the check the
//! git pre-commit hook runs. Reservations are never deleted: released and taken-over ones
//! stay as history. Whether scopes overlap is decided by [`glob`].

pub mod glob;

#[cfg(test)]
mod glob_props;
#[cfg(test)]
mod tests;

use coord_proto::types::*;
use coord_proto::{AppError, ErrorCode, MAX_LIMIT};

use crate::bound;
use crate::domain::check::{self, invalid_args};
use crate::domain::events::{self, Draft};
use crate::error::{Error, Result};
use crate::ids;
use crate::store::Tx;
use crate::store::repos::{ReservationQuery, StoredReservation};
use crate::time::Ts;

/// A stored reservation as seen at `now`: stale once it is active past its expiry.
pub fn view(s: StoredReservation, now: Ts) -> Reservation {
    let mut r = s.reservation;
    r.stale = r.state == ReservationState::Active && s.expires <= now;
    r
}

/// Every active reservation (stale ones included) as seen at `now`.
pub fn active(tx: &dyn Tx, now: Ts) -> Result<Vec<Reservation>> {
    Ok(tx.reservations().reservations_active()?.into_iter().map(|s| view(s, now)).collect())
}

fn scope_arg(scope: &str) -> Result<String> {
    glob::normalize_scope(scope).map_err(invalid_args)
}

fn describe(r: &Reservation) -> String {
    let mode = if r.shared { "shared" } else { "exclusive" };
    format!("{}'s {mode} reservation of '{}' (task {}, until {})", r.agent_id, r.scope, r.task_id, r.expires_at)
}

fn details(key: &str, rs: &[Reservation]) -> serde_json::Value {
    serde_json::json!({ key: rs })
}

fn event(tx: &mut dyn Tx, t: EventType, r: &Reservation, actor: &str, summary: &str, now: Ts) -> Result<i64> {
    let payload = serde_json::to_value(r).unwrap_or_default();
    events::record(tx, &Draft::about(t, &r.agent_id, &r.task_id, actor, summary, &payload, now))
}

fn close(r: &mut Reservation, state: ReservationState, now: Ts) {
    r.state = state;
    r.stale = false;
    r.released_at = Some(now.to_string());
}

/// `reservations.reserve`.
pub fn reserve(tx: &mut dyn Tx, now: Ts, p: ReserveParams) -> Result<ReserveResult> {
    check::agent_name("agent", &p.agent)?;
    let scope = scope_arg(&p.scope)?;
    let task = match p.task_id.as_deref().map(str::trim) {
        Some(t) if !t.is_empty() => t.to_string(),
        _ => return Err(Error::app(ErrorCode::MissingTaskId, "a reservation is made for a task: name it (task_id)")),
    };
    check::id("task_id", &task)?;
    let ttl = p.ttl_minutes.unwrap_or(RESERVATION_TTL_DEFAULT);
    if !(RESERVATION_TTL_MIN..=RESERVATION_TTL_MAX).contains(&ttl) {
        return Err(invalid_args(format!(
            "ttl must be {RESERVATION_TTL_MIN} to {RESERVATION_TTL_MAX} minutes, got {ttl}"
        )));
    }
    let expires_at = now.plus_secs(u64::from(ttl) * 60);

    let mut conflicts = Vec::new();
    let mut stale = Vec::new();
    let mut own = None;
    for r in active(tx, now)? {
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
            AppError::new(ErrorCode::ReservationConflict, format!("'{scope}' overlaps {}", describe(first)))
                .with_details(details("conflicts", &conflicts)),
        ));
    }
    if let Some(first) = stale.first().filter(|_| !p.takeover_stale) {
        return Err(Error::App(
            AppError::new(
                ErrorCode::ReservationStaleFound,
                format!("'{scope}' overlaps {}, which has expired; take it over with takeover_stale", describe(first)),
            )
            .with_details(details("stale", &stale)),
        ));
    }

    // The agent already holds this exact scope, live and in the same mode: extend it.
    if let Some(mut r) = own.clone().filter(|r| !r.stale && r.shared == p.shared) {
        r.expires_at = expires_at.to_string();
        r.task_id = task;
        tx.reservations_mut().reservation_save(&r)?;
        let summary = format!("{} extended its reservation of {}", p.agent, r.scope);
        let event_id = event(tx, EventType::ReservationCreated, &r, &p.agent, &summary, now)?;
        return Ok(ReserveResult { reservation: r, taken_over: vec![], renewed: true, event_id });
    }

    let mut generation = tx.reservations().reservation_max_generation(&scope)?;
    let mut taken_over = Vec::with_capacity(stale.len());
    for mut r in stale {
        close(&mut r, ReservationState::Expired, now);
        tx.reservations_mut().reservation_save(&r)?;
        generation = generation.max(r.generation);
        let summary = format!("{} took over the stale reservation of {} by {}", p.agent, r.scope, r.agent_id);
        event(tx, EventType::ReservationExpired, &r, &p.agent, &summary, now)?;
        taken_over.push(r);
    }
    // Its own stale reservation, or one in the other mode, is replaced.
    if let Some(mut r) = own {
        let state = if r.stale { ReservationState::Expired } else { ReservationState::Released };
        close(&mut r, state, now);
        tx.reservations_mut().reservation_save(&r)?;
    }
    let r = Reservation {
        reservation_id: ids::new_id("res"),
        scope,
        agent_id: p.agent.clone(),
        task_id: task,
        shared: p.shared,
        state: ReservationState::Active,
        stale: false,
        generation: generation + 1,
        created_at: now.to_string(),
        expires_at: expires_at.to_string(),
        released_at: None,
    };
    tx.reservations_mut().reservation_insert(&r)?;
    let mode = if r.shared { "shared" } else { "exclusive" };
    let summary = format!("{} reserved {} ({mode}, generation {})", r.agent_id, r.scope, r.generation);
    let event_id = event(tx, EventType::ReservationCreated, &r, &p.agent, &summary, now)?;
    Ok(ReserveResult { reservation: r, taken_over, renewed: false, event_id })
}

/// `reservations.release`: the owner releases its active reservation of exactly `scope`.
pub fn release(tx: &mut dyn Tx, now: Ts, p: ReleaseParams) -> Result<ReleaseResult> {
    check::agent_name("agent", &p.agent)?;
    let scope = scope_arg(&p.scope)?;
    let holders: Vec<Reservation> = active(tx, now)?.into_iter().filter(|r| r.scope == scope).collect();
    let Some(mut r) = holders.iter().find(|r| r.agent_id == p.agent).cloned() else {
        return Err(match holders.first() {
            Some(other) => Error::app(
                ErrorCode::ReleaseForbidden,
                format!("only the owner may release: '{scope}' is held by {}", describe(other)),
            ),
            None => Error::app(ErrorCode::ReservationNotFound, format!("no active reservation of '{scope}'")),
        });
    };
    close(&mut r, ReservationState::Released, now);
    tx.reservations_mut().reservation_save(&r)?;
    let summary = format!("{} released {}", r.agent_id, r.scope);
    let event_id = event(tx, EventType::ReservationReleased, &r, &p.agent, &summary, now)?;
    Ok(ReleaseResult { reservation: r, event_id })
}

/// `reservations.list`: active reservations (or the whole history), filtered; with a path,
/// only those whose scope covers it.
pub fn list(tx: &dyn Tx, now: Ts, p: ReservationListParams) -> Result<ReservationsResult> {
    let limit = check::limit(p.limit, MAX_LIMIT)? as usize;
    let path = p.path.as_deref().map(|p| glob::normalize(p).map_err(invalid_args)).transpose()?;
    let q = ReservationQuery { agent: p.agent, task_id: p.task_id, include_history: p.include_history };
    let all = tx.reservations().reservations_list(&q)?;
    let after = bound::after_key(all, p.after.as_deref(), |s| &s.reservation.reservation_id)?;
    let listed = after
        .into_iter()
        .map(|s| view(s, now))
        .filter(|r| path.as_deref().is_none_or(|f| glob::covers(&r.scope, f)))
        .take(limit)
        .collect();
    let page = bound::page(listed, |r: &Reservation| r.reservation_id.clone());
    Ok(ReservationsResult { reservations: page.items, truncated: page.truncated, next_after: page.next_after })
}

/// `reservations.check`: the conflicts after the first `offset`, within the reply's bound;
/// when truncated, `next_after` is the offset of the next page.
pub fn check_page(tx: &dyn Tx, now: Ts, p: CheckPathsParams) -> Result<CheckPathsResult> {
    let offset = p.offset.unwrap_or(0);
    let conflicts: Vec<PathConflict> = check(tx, now, p)?.into_iter().skip(offset as usize).collect();
    let page = bound::page(conflicts, |_| ());
    let next_after = page.truncated.then(|| offset + page.items.len() as u32);
    Ok(CheckPathsResult { conflicts: page.items, truncated: page.truncated, next_after })
}

/// The paths that lie in another agent's live exclusive reservation, path by path.
pub fn check(tx: &dyn Tx, now: Ts, p: CheckPathsParams) -> Result<Vec<PathConflict>> {
    if let Some(a) = &p.agent {
        check::agent_name("agent", a)?;
    }
    let held: Vec<Reservation> = active(tx, now)?
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
