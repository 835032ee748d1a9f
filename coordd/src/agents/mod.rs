//! The agent registry: identities (register, list, show, heartbeat), `last_seen_at`
//! bookkeeping, unregistered agents recorded on first sight, and the project's
//! strict-agents setting that makes sends from or to unknown agents fail.
//!
//! Bookkeeping appends no event of its own: `last_seen_at` moves on every call an agent
//! makes (an event per call would drown the stream), and an unknown name is recorded as an
//! unregistered agent inside the call that named it, whose own event tells the story.
//! Registrations, status changes and settings changes each append one.

#[cfg(test)]
mod tests;

use coord_proto::ErrorCode;
use coord_proto::types::*;
use rusqlite::{Connection, OptionalExtension, Row};
use serde_json::json;

use crate::db::{WriteCtx, parse_col};
use crate::error::{Error, Result};
use crate::events::{self, Draft};
use crate::inbox::check_agent;
use crate::util;

const AGENT_COLUMNS: &str = "agent_id, display_name, role, status, registered, created_at, last_seen_at, version";
const MAX_ROLE: usize = 100;
const MAX_DISPLAY: usize = 200;
const STRICT_KEY: &str = "strict_agents";

fn agent_from_row(r: &Row<'_>) -> rusqlite::Result<Agent> {
    Ok(Agent {
        agent_id: r.get(0)?,
        display_name: r.get(1)?,
        role: r.get(2)?,
        status: parse_col(r, 3)?,
        registered: r.get(4)?,
        created_at: r.get(5)?,
        last_seen_at: r.get(6)?,
        version: r.get(7)?,
    })
}

/// An `invalid_args` error (the agents layer's name for invalid input).
pub fn invalid_args(msg: impl Into<String>) -> Error {
    Error::app(ErrorCode::InvalidArgs, msg)
}

/// An agent name as the agents layer checks it: [`check_agent`]'s rule, `invalid_args`.
pub fn check_name(field: &str, name: &str) -> Result<()> {
    check_agent(field, name).map_err(|e| invalid_args(e.to_app().message))
}

/// A registered agent id: `^[a-z0-9]+(?:-[a-z0-9]+)*$`, 3 to 48 characters, and not the
/// reserved recipient name `broadcast`.
pub fn check_agent_id(id: &str) -> Result<()> {
    let len = id.chars().count();
    if !(AGENT_ID_MIN..=AGENT_ID_MAX).contains(&len) {
        return Err(invalid_args(format!(
            "agent id '{id}' must be {AGENT_ID_MIN} to {AGENT_ID_MAX} characters long (it has {len})"
        )));
    }
    let well_formed = id
        .split('-')
        .all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()));
    if !well_formed {
        return Err(invalid_args(format!(
            "agent id '{id}' must be lowercase letters and digits in groups joined by single hyphens \
             (^[a-z0-9]+(?:-[a-z0-9]+)*$)"
        )));
    }
    if id == BROADCAST {
        return Err(invalid_args("'broadcast' is reserved: it addresses every registered agent"));
    }
    Ok(())
}

/// Is the project in strict-agents mode?
pub fn strict(conn: &Connection) -> Result<bool> {
    let v: Option<String> = conn
        .prepare_cached("SELECT value FROM settings WHERE key = ?1")?
        .query_row([STRICT_KEY], |r| r.get(0))
        .optional()?;
    Ok(v.as_deref() == Some("true"))
}

/// Turn strict agents on or off; appends `settings.changed` when the value changes.
pub fn set_strict(ctx: &mut WriteCtx<'_>, on: bool) -> Result<()> {
    if strict(ctx.conn)? == on {
        return Ok(());
    }
    ctx.conn
        .prepare_cached("INSERT INTO settings (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = ?2")?
        .execute([STRICT_KEY, if on { "true" } else { "false" }])?;
    let now = util::ts(util::now());
    let payload = json!({ STRICT_KEY: on });
    let summary = format!("strict agents {}", if on { "on" } else { "off" });
    events::record(ctx, &Draft::about(EventType::SettingsChanged, "", "", "", &summary, &payload, &now))?;
    Ok(())
}

/// Load an agent (registered or recorded).
pub fn get(conn: &Connection, agent_id: &str) -> Result<Option<Agent>> {
    let sql = format!("SELECT {AGENT_COLUMNS} FROM agents WHERE agent_id = ?1");
    Ok(conn.prepare_cached(&sql)?.query_row([agent_id], agent_from_row).optional()?)
}

/// Load an agent or fail with `agent_not_found`.
pub fn show(conn: &Connection, agent_id: &str) -> Result<Agent> {
    check_name("agent_id", agent_id)?;
    get(conn, agent_id)?.ok_or_else(|| Error::app(ErrorCode::AgentNotFound, format!("agent '{agent_id}' not found")))
}

fn is_registered(conn: &Connection, agent_id: &str) -> Result<bool> {
    Ok(conn.prepare_cached("SELECT 1 FROM agents WHERE agent_id = ?1 AND registered = 1")?.exists([agent_id])?)
}

/// In strict mode, an agent acting on mail or reservations must be registered
/// (`agent_not_found` otherwise).
pub fn check_known(conn: &Connection, agent_id: &str) -> Result<()> {
    if strict(conn)? && !is_registered(conn, agent_id)? {
        return Err(Error::app(
            ErrorCode::AgentNotFound,
            format!("agent '{agent_id}' is not registered (strict agents: run `inbox agent register`)"),
        ));
    }
    Ok(())
}

/// In strict mode, refuse a sender or recipient that is not registered. `broadcast` is
/// always a valid recipient.
pub fn check_parties(conn: &Connection, from: &str, to: Option<&str>) -> Result<()> {
    if !strict(conn)? {
        return Ok(());
    }
    if !is_registered(conn, from)? {
        return Err(Error::app(
            ErrorCode::UnknownSender,
            format!("sender '{from}' is not a registered agent (strict agents: run `inbox agent register`)"),
        ));
    }
    if let Some(to) = to
        && to != BROADCAST
        && !is_registered(conn, to)?
    {
        return Err(Error::app(
            ErrorCode::UnknownRecipient,
            format!("recipient '{to}' is not a registered agent (strict agents)"),
        ));
    }
    Ok(())
}

/// Record an agent that was named (as a recipient) but is unknown, as an unregistered
/// agent. Nothing happens in strict mode or when the agent exists. No event of its own:
/// the message that named it is the event.
pub fn record(ctx: &mut WriteCtx<'_>, agent_id: &str, now: &str) -> Result<()> {
    if agent_id == BROADCAST || get(ctx.conn, agent_id)?.is_some() || strict(ctx.conn)? {
        return Ok(());
    }
    insert_unregistered(ctx, agent_id, None, now)
}

fn insert_unregistered(ctx: &mut WriteCtx<'_>, agent_id: &str, seen: Option<&str>, now: &str) -> Result<()> {
    ctx.conn
        .prepare_cached(
            "INSERT INTO agents (agent_id, status, registered, created_at, last_seen_at) \
             VALUES (?1, 'idle', 0, ?2, ?3)",
        )?
        .execute(rusqlite::params![agent_id, now, seen])?;
    Ok(())
}

/// The agent made a call: advance its `last_seen_at`, recording it first if it is unknown
/// (unless strict). Names that are not valid agent names are left alone: the call itself
/// rejects them.
pub fn touch(ctx: &mut WriteCtx<'_>, agent_id: &str) -> Result<()> {
    if agent_id.is_empty() || agent_id == BROADCAST || check_agent("agent", agent_id).is_err() {
        return Ok(());
    }
    let now = util::ts(util::now());
    let n = ctx
        .conn
        .prepare_cached("UPDATE agents SET last_seen_at = ?2 WHERE agent_id = ?1")?
        .execute([agent_id, &now])?;
    if n == 0 && !strict(ctx.conn)? {
        insert_unregistered(ctx, agent_id, Some(&now), &now)?;
    }
    Ok(())
}

/// `agents.register`.
pub fn register(ctx: &mut WriteCtx<'_>, p: RegisterParams) -> Result<AgentResult> {
    check_agent_id(&p.agent_id)?;
    let role = p.role.trim();
    if role.is_empty() {
        return Err(invalid_args("role is required and must not be blank"));
    }
    if role.chars().count() > MAX_ROLE {
        return Err(invalid_args(format!("role is longer than {MAX_ROLE} characters")));
    }
    let display = p.display_name.as_deref().map(str::trim);
    if display.is_some_and(|d| d.chars().count() > MAX_DISPLAY) {
        return Err(invalid_args(format!("display name is longer than {MAX_DISPLAY} characters")));
    }
    let now = util::ts(util::now());
    let existing = get(ctx.conn, &p.agent_id)?;
    let summary = match &existing {
        Some(a) if a.registered && !p.force_update => {
            return Err(Error::app(
                ErrorCode::DuplicateAgentId,
                format!(
                    "agent '{}' is already registered (pass --force-update to change its role or name)",
                    a.agent_id
                ),
            ));
        }
        Some(a) => {
            // A force update (or the registration of a recorded agent) changes only the
            // display name and the role.
            let display = match display {
                Some(d) => d.to_string(),
                None if a.display_name.is_empty() => a.agent_id.clone(),
                None => a.display_name.clone(),
            };
            ctx.conn
                .prepare_cached(
                    "UPDATE agents SET display_name = ?2, role = ?3, registered = 1, version = version + 1, \
                     last_seen_at = ?4 WHERE agent_id = ?1",
                )?
                .execute(rusqlite::params![p.agent_id, display, role, now])?;
            format!("{} {} ({role})", if a.registered { "updated" } else { "registered" }, p.agent_id)
        }
        None => {
            ctx.conn
                .prepare_cached(
                    "INSERT INTO agents (agent_id, display_name, role, status, registered, created_at, last_seen_at) \
                     VALUES (?1, ?2, ?3, 'idle', 1, ?4, ?4)",
                )?
                .execute(rusqlite::params![p.agent_id, display.unwrap_or(&p.agent_id), role, now])?;
            format!("registered {} ({role})", p.agent_id)
        }
    };
    let agent = show(ctx.conn, &p.agent_id)?;
    let payload = serde_json::to_value(&agent).unwrap_or_default();
    let draft =
        Draft::about(EventType::AgentRegistered, &agent.agent_id, "", &agent.agent_id, &summary, &payload, &now);
    let event_id = events::record(ctx, &draft)?;
    Ok(AgentResult { agent, event_id: Some(event_id) })
}

/// `agents.heartbeat`: the agent is alive, optionally with a new status.
pub fn heartbeat(ctx: &mut WriteCtx<'_>, p: HeartbeatParams) -> Result<AgentResult> {
    check_name("agent_id", &p.agent_id)?;
    touch(ctx, &p.agent_id)?;
    let before = show(ctx.conn, &p.agent_id)?;
    let Some(status) = p.status.filter(|s| *s != before.status) else {
        return Ok(AgentResult { agent: before, event_id: None });
    };
    ctx.conn
        .prepare_cached("UPDATE agents SET status = ?2 WHERE agent_id = ?1")?
        .execute([&p.agent_id, status.as_str()])?;
    let agent = show(ctx.conn, &p.agent_id)?;
    let now = agent.last_seen_at.clone().unwrap_or_default();
    let payload = json!({ "agent_id": agent.agent_id, "status": status, "previous": before.status });
    let summary = format!("{} is {status}", agent.agent_id);
    let draft = Draft::about(EventType::AgentStatus, &agent.agent_id, "", &agent.agent_id, &summary, &payload, &now);
    let event_id = events::record(ctx, &draft)?;
    Ok(AgentResult { agent, event_id: Some(event_id) })
}

/// `agents.list`: sorted by id.
pub fn list(conn: &Connection, p: &AgentListParams) -> Result<Vec<Agent>> {
    let sql = format!(
        "SELECT {AGENT_COLUMNS} FROM agents WHERE (?1 OR registered = 1) \
         AND (?2 IS NULL OR role = ?2) AND (?3 IS NULL OR status = ?3) ORDER BY agent_id"
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt
        .query_map(rusqlite::params![p.include_unregistered, p.role, p.status.map(|s| s.as_str())], agent_from_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Registered agents other than `except`, sorted: the recipients of a broadcast.
pub fn broadcast_recipients(conn: &Connection, except: &str) -> Result<Vec<String>> {
    let mut stmt =
        conn.prepare_cached("SELECT agent_id FROM agents WHERE registered = 1 AND agent_id <> ?1 ORDER BY agent_id")?;
    let rows = stmt.query_map([except], |r| r.get(0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}
