//! The agent registry: identities (register, list, show, heartbeat), `last_seen_at`
//! bookkeeping, unregistered agents recorded on first sight, and the project's
//! strict-agents setting that makes sends from or to unknown agents fail.
//!
//! Bookkeeping records no event of its own: `last_seen_at` moves on every call an agent
//! makes (an event per call would drown the stream), and an unknown name is recorded as an
//! unregistered agent inside the call that named it, whose own event tells the story.
//! Registrations, status changes and settings changes each record one.

use coord_proto::ErrorCode;
use coord_proto::types::*;
use serde_json::json;

use super::check::{self, invalid_args};
use super::events::{self, Draft};
use crate::error::{Error, Result};
use crate::store::Tx;
use crate::time::Ts;

const MAX_ROLE: usize = 100;
const MAX_DISPLAY: usize = 200;
const STRICT_KEY: &str = "strict_agents";

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
pub fn strict(tx: &dyn Tx) -> Result<bool> {
    Ok(tx.setting(STRICT_KEY)?.as_deref() == Some("true"))
}

/// `inbox.init`: apply the strict-agents setting when given (recording `settings.changed`
/// when it changes); returns whether strict agents is on.
pub fn init(tx: &mut dyn Tx, now: Ts, p: InitParams) -> Result<bool> {
    let Some(on) = p.strict_agents else { return strict(tx) };
    if strict(tx)? != on {
        tx.setting_put(STRICT_KEY, if on { "true" } else { "false" })?;
        let payload = json!({ STRICT_KEY: on });
        let summary = format!("strict agents {}", if on { "on" } else { "off" });
        events::record(tx, &Draft::about(EventType::SettingsChanged, "", "", "", &summary, &payload, now))?;
    }
    Ok(on)
}

/// An agent, or `agent_not_found`.
pub fn show(tx: &dyn Tx, agent_id: &str) -> Result<Agent> {
    check::agent_name("agent_id", agent_id)?;
    tx.agent(agent_id)?.ok_or_else(|| Error::app(ErrorCode::AgentNotFound, format!("agent '{agent_id}' not found")))
}

fn is_registered(tx: &dyn Tx, agent_id: &str) -> Result<bool> {
    Ok(tx.agent(agent_id)?.is_some_and(|a| a.registered))
}

/// In strict mode, an agent acting on mail or reservations must be registered
/// (`agent_not_found` otherwise).
pub fn check_known(tx: &dyn Tx, agent_id: &str) -> Result<()> {
    if strict(tx)? && !is_registered(tx, agent_id)? {
        return Err(Error::app(
            ErrorCode::AgentNotFound,
            format!("agent '{agent_id}' is not registered (strict agents: register it with agents.register)"),
        ));
    }
    Ok(())
}

/// In strict mode, refuse a sender or recipient that is not registered. `broadcast` is
/// always a valid recipient.
pub fn check_parties(tx: &dyn Tx, from: &str, to: Option<&str>) -> Result<()> {
    if !strict(tx)? {
        return Ok(());
    }
    if !is_registered(tx, from)? {
        return Err(Error::app(
            ErrorCode::UnknownSender,
            format!("sender '{from}' is not a registered agent (strict agents: register it with agents.register)"),
        ));
    }
    if let Some(to) = to
        && to != BROADCAST
        && !is_registered(tx, to)?
    {
        return Err(Error::app(
            ErrorCode::UnknownRecipient,
            format!("recipient '{to}' is not a registered agent (strict agents)"),
        ));
    }
    Ok(())
}

fn unregistered(agent_id: &str, seen: Option<Ts>, now: Ts) -> Agent {
    Agent {
        agent_id: agent_id.to_string(),
        display_name: String::new(),
        role: String::new(),
        status: AgentStatus::Idle,
        registered: false,
        created_at: now.to_string(),
        last_seen_at: seen.map(|t| t.to_string()),
        version: 1,
    }
}

/// Record an agent that was named (as a recipient) but is unknown, as an unregistered
/// agent. Nothing happens in strict mode or when the agent exists. No event of its own:
/// the message that named it is the event.
pub fn record_named(tx: &mut dyn Tx, agent_id: &str, now: Ts) -> Result<()> {
    if agent_id == BROADCAST || tx.agent(agent_id)?.is_some() || strict(tx)? {
        return Ok(());
    }
    tx.agent_insert(&unregistered(agent_id, None, now))
}

/// The agent made a call: advance its `last_seen_at`, recording it first if it is unknown
/// (unless strict). Names that are not valid agent names are left alone: the call itself
/// rejects them.
pub fn touch(tx: &mut dyn Tx, agent_id: &str, now: Ts) -> Result<()> {
    if agent_id.is_empty() || agent_id == BROADCAST || check::agent("agent", agent_id).is_err() {
        return Ok(());
    }
    if !tx.agent_touch(agent_id, now)? && !strict(tx)? {
        tx.agent_insert(&unregistered(agent_id, Some(now), now))?;
    }
    Ok(())
}

/// `agents.register`.
pub fn register(tx: &mut dyn Tx, now: Ts, p: RegisterParams) -> Result<AgentResult> {
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
    let (agent, summary) = match tx.agent(&p.agent_id)? {
        Some(a) if a.registered && !p.force_update => {
            return Err(Error::app(
                ErrorCode::DuplicateAgentId,
                format!("agent '{}' is already registered (force_update changes its role or name)", a.agent_id),
            ));
        }
        Some(a) => {
            // A force update (or the registration of a recorded agent) changes only the
            // display name and the role.
            let summary = format!("{} {} ({role})", if a.registered { "updated" } else { "registered" }, p.agent_id);
            let display_name = match display {
                Some(d) => d.to_string(),
                None if a.display_name.is_empty() => a.agent_id.clone(),
                None => a.display_name.clone(),
            };
            let agent = Agent {
                display_name,
                role: role.to_string(),
                registered: true,
                version: a.version + 1,
                last_seen_at: Some(now.to_string()),
                ..a
            };
            tx.agent_save(&agent)?;
            (agent, summary)
        }
        None => {
            let agent = Agent {
                agent_id: p.agent_id.clone(),
                display_name: display.unwrap_or(&p.agent_id).to_string(),
                role: role.to_string(),
                status: AgentStatus::Idle,
                registered: true,
                created_at: now.to_string(),
                last_seen_at: Some(now.to_string()),
                version: 1,
            };
            tx.agent_insert(&agent)?;
            (agent, format!("registered {} ({role})", p.agent_id))
        }
    };
    let payload = serde_json::to_value(&agent).unwrap_or_default();
    let draft = Draft::about(EventType::AgentRegistered, &agent.agent_id, "", &agent.agent_id, &summary, &payload, now);
    let event_id = events::record(tx, &draft)?;
    Ok(AgentResult { agent, event_id: Some(event_id), secret: None })
}

/// `agents.heartbeat`: the agent is alive, optionally with a new status.
pub fn heartbeat(tx: &mut dyn Tx, now: Ts, p: HeartbeatParams) -> Result<AgentResult> {
    check::agent_name("agent_id", &p.agent_id)?;
    touch(tx, &p.agent_id, now)?;
    let before = show(tx, &p.agent_id)?;
    let Some(status) = p.status.filter(|s| *s != before.status) else {
        return Ok(AgentResult { agent: before, event_id: None, secret: None });
    };
    let agent = Agent { status, ..before.clone() };
    tx.agent_save(&agent)?;
    let payload = json!({ "agent_id": agent.agent_id, "status": status, "previous": before.status });
    let summary = format!("{} is {status}", agent.agent_id);
    let draft = Draft::about(EventType::AgentStatus, &agent.agent_id, "", &agent.agent_id, &summary, &payload, now);
    let event_id = events::record(tx, &draft)?;
    Ok(AgentResult { agent, event_id: Some(event_id), secret: None })
}

/// `agents.list`: sorted by id.
pub fn list(tx: &dyn Tx, p: &AgentListParams) -> Result<Vec<Agent>> {
    tx.agents_list(p)
}
