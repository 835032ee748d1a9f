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
use crate::bound;
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
    Ok(tx.agents().setting(STRICT_KEY)?.as_deref() == Some("true"))
}

/// `inbox.init`: apply the strict-agents setting when given (recording `settings.changed`
/// when it changes); returns whether strict agents is on.
pub fn init(tx: &mut dyn Tx, now: Ts, p: InitParams) -> Result<bool> {
    let Some(on) = p.strict_agents else { return strict(tx) };
    if strict(tx)? != on {
        tx.agents_mut().setting_put(STRICT_KEY, if on { "true" } else { "false" })?;
        let payload = json!({ STRICT_KEY: on });
        let summary = format!("strict agents {}", if on { "on" } else { "off" });
        events::record(tx, &Draft::about(EventType::SettingsChanged, "", "", "", &summary, &payload, now))?;
    }
    Ok(on)
}

/// An agent, or `agent_not_found`.
pub fn show(tx: &dyn Tx, agent_id: &str) -> Result<Agent> {
    check::agent_name("agent_id", agent_id)?;
    tx.agents()
        .agent(agent_id)?
        .ok_or_else(|| Error::app(ErrorCode::AgentNotFound, format!("agent '{agent_id}' not found")))
}

fn is_registered(tx: &dyn Tx, agent_id: &str) -> Result<bool> {
    Ok(tx.agents().agent(agent_id)?.is_some_and(|a| a.registered))
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
    if agent_id == BROADCAST || tx.agents().agent(agent_id)?.is_some() || strict(tx)? {
        return Ok(());
    }
    tx.agents_mut().agent_insert(&unregistered(agent_id, None, now))
}

/// The agents made calls: advance their `last_seen_at` (one statement for them all where
/// the backend allows), recording the unknown ones (unless strict). Names that are not
/// valid agent names are left alone: the calls themselves reject them.
pub fn touch(tx: &mut dyn Tx, agent_ids: &[&str], now: Ts) -> Result<()> {
    let valid: Vec<&str> = agent_ids
        .iter()
        .copied()
        .filter(|a| !a.is_empty() && *a != BROADCAST && check::agent("agent", a).is_ok())
        .collect();
    if valid.is_empty() {
        return Ok(());
    }
    let missing = tx.agents_mut().agents_touch(&valid, now)?;
    if missing.is_empty() || strict(tx)? {
        return Ok(());
    }
    for agent_id in missing {
        tx.agents_mut().agent_insert(&unregistered(&agent_id, Some(now), now))?;
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
    let display = p.display_name.as_deref().map(str::trim).filter(|d| !d.is_empty());
    if display.is_some_and(|d| d.chars().count() > MAX_DISPLAY) {
        return Err(invalid_args(format!("display name is longer than {MAX_DISPLAY} characters")));
    }
    let (agent, summary) = match tx.agents().agent(&p.agent_id)? {
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
            tx.agents_mut().agent_save(&agent)?;
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
            tx.agents_mut().agent_insert(&agent)?;
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
    touch(tx, &[p.agent_id.as_str()], now)?;
    let before = show(tx, &p.agent_id)?;
    let Some(status) = p.status.filter(|s| *s != before.status) else {
        return Ok(AgentResult { agent: before, event_id: None, secret: None });
    };
    let agent = Agent { status, ..before.clone() };
    tx.agents_mut().agent_save(&agent)?;
    let payload = json!({ "agent_id": agent.agent_id, "status": status, "previous": before.status });
    let summary = format!("{} is {status}", agent.agent_id);
    let draft = Draft::about(EventType::AgentStatus, &agent.agent_id, "", &agent.agent_id, &summary, &payload, now);
    let event_id = events::record(tx, &draft)?;
    Ok(AgentResult { agent, event_id: Some(event_id), secret: None })
}

/// `agents.list`: sorted by id.
pub fn list(tx: &dyn Tx, p: &AgentListParams) -> Result<AgentsResult> {
    let agents = bound::after_key(tx.agents().agents_list(p)?, p.after.as_deref(), |a| &a.agent_id)?;
    let page = bound::page(agents, |a: &Agent| a.agent_id.clone());
    Ok(AgentsResult { agents: page.items, truncated: page.truncated, next_after: page.next_after })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::store::sqlite::testing::Memory;
    use crate::time::Clock;

    fn reg(id: &str, role: &str) -> RegisterParams {
        RegisterParams { agent_id: id.into(), role: role.into(), ..Default::default() }
    }

    fn strict_on(m: &Memory) {
        let p = InitParams { strict_agents: Some(true), ..Default::default() };
        assert!(m.write(|tx, now| init(tx, now, p)).unwrap());
    }

    #[test]
    fn a_new_agent_is_registered_idle_under_its_own_name_with_one_event() {
        let m = Memory::new();
        let r = m.write(|tx, now| register(tx, now, reg("w-1", " backend "))).unwrap();
        let now = m.clock.now().to_string();
        assert_eq!(r.agent.agent_id, "w-1");
        assert_eq!(r.agent.display_name, "w-1", "the display name defaults to the id");
        assert_eq!(r.agent.role, "backend", "the role is trimmed");
        assert_eq!(r.agent.status, AgentStatus::Idle);
        assert!(r.agent.registered);
        assert_eq!(r.agent.version, 1);
        assert_eq!(r.agent.last_seen_at.as_deref(), Some(now.as_str()));
        let events = m.events();
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].event_type, EventType::AgentRegistered);
        assert_eq!(Some(events[0].event_id), r.event_id);
        assert_eq!(m.read(|tx, _| show(tx, "w-1")).unwrap(), r.agent);
    }

    #[test]
    fn a_blank_display_name_falls_back_to_the_id() {
        let m = Memory::new();
        let p = RegisterParams { display_name: Some("   ".into()), ..reg("w-1", "backend") };
        let r = m.write(|tx, now| register(tx, now, p.clone())).unwrap();
        assert_eq!(r.agent.display_name, "w-1");
    }

    #[test]
    fn a_duplicate_agent_id_is_refused_and_changes_nothing() {
        let m = Memory::new();
        m.write(|tx, now| register(tx, now, reg("w-1", "backend"))).unwrap();
        let e = m.write(|tx, now| register(tx, now, reg("w-1", "frontend"))).unwrap_err();
        assert_eq!(e.code(), Some(ErrorCode::DuplicateAgentId));
        let a = m.read(|tx, _| show(tx, "w-1")).unwrap();
        assert_eq!((a.role.as_str(), a.version), ("backend", 1));
        assert_eq!(m.events().len(), 1, "the refused registration records no event");
    }

    #[test]
    fn force_update_changes_only_the_role_and_name_and_bumps_the_version() {
        let m = Memory::new();
        let first = m.write(|tx, now| register(tx, now, reg("w-1", "backend"))).unwrap().agent;
        m.write(|tx, now| {
            heartbeat(tx, now, HeartbeatParams { agent_id: "w-1".into(), status: Some(AgentStatus::Busy) })
        })
        .unwrap();
        m.advance(Duration::from_secs(5));
        let p =
            RegisterParams { force_update: true, display_name: Some("Worker One".into()), ..reg("w-1", "frontend") };
        let updated = m.write(|tx, now| register(tx, now, p)).unwrap().agent;
        assert_eq!(updated.role, "frontend");
        assert_eq!(updated.display_name, "Worker One");
        assert_eq!(updated.version, 2);
        assert_eq!(updated.status, AgentStatus::Busy, "the status is not a registration field");
        assert_eq!(updated.created_at, first.created_at);
        assert!(m.events().last().unwrap().summary.starts_with("updated w-1"), "{:?}", m.events().last());
        let p = RegisterParams { force_update: true, ..reg("w-1", "ops") };
        let again = m.write(|tx, now| register(tx, now, p)).unwrap().agent;
        assert_eq!(again.display_name, "Worker One", "no display name keeps the current one");
        assert_eq!(again.version, 3);
    }

    #[test]
    fn malformed_ids_the_reserved_broadcast_and_blank_roles_are_refused_as_invalid_args() {
        let m = Memory::new();
        for id in ["ab", "Upper", "under_score", "a--b", "-ab", "ab-", BROADCAST, &"a".repeat(AGENT_ID_MAX + 1)] {
            let e = m.write(|tx, now| register(tx, now, reg(id, "r"))).unwrap_err();
            assert_eq!(e.code(), Some(ErrorCode::InvalidArgs), "{id}: {e}");
        }
        assert!(check_agent_id(&"a".repeat(AGENT_ID_MAX)).is_ok());
        assert!(check_agent_id("w-1-x9").is_ok());
        let e = m.write(|tx, now| register(tx, now, reg("w-1", "   "))).unwrap_err();
        assert_eq!(e.code(), Some(ErrorCode::InvalidArgs));
        let e = m.write(|tx, now| register(tx, now, reg("w-1", &"r".repeat(MAX_ROLE + 1)))).unwrap_err();
        assert_eq!(e.code(), Some(ErrorCode::InvalidArgs));
        assert!(m.read(|tx, _| tx.agents().agent("w-1")).unwrap().is_none());
    }

    #[test]
    fn an_agent_seen_before_registering_is_recorded_unregistered_and_registration_adopts_it() {
        let m = Memory::new();
        m.write(|tx, now| touch(tx, &["w-1"], now)).unwrap();
        let seen = m.read(|tx, _| show(tx, "w-1")).unwrap();
        assert!(!seen.registered);
        assert_eq!(seen.last_seen_at.as_deref(), Some(m.clock.now().to_string().as_str()));
        assert!(m.events().is_empty(), "bookkeeping records no event");
        let p = AgentListParams::default();
        assert!(
            m.read(|tx, _| list(tx, &p)).unwrap().agents.is_empty(),
            "unregistered agents are listed only on request"
        );
        let r = m.write(|tx, now| register(tx, now, reg("w-1", "backend"))).unwrap();
        assert!(r.agent.registered, "registering a recorded agent is not a duplicate");
        assert_eq!(r.agent.version, 2);
        assert_eq!(r.agent.display_name, "w-1");
        assert!(m.events()[0].summary.starts_with("registered w-1"), "{}", m.events()[0].summary);
    }

    #[test]
    fn strict_mode_refuses_unknown_agents_and_stops_recording_them() {
        let m = Memory::new();
        m.write(|tx, now| register(tx, now, reg("lead", "lead"))).unwrap();
        m.write(|tx, now| touch(tx, &["seen"], now)).unwrap();
        strict_on(&m);
        assert_eq!(m.events().last().unwrap().event_type, EventType::SettingsChanged);
        m.read(|tx, _| {
            assert_eq!(check_known(tx, "ghost").unwrap_err().code(), Some(ErrorCode::AgentNotFound));
            assert_eq!(
                check_known(tx, "seen").unwrap_err().code(),
                Some(ErrorCode::AgentNotFound),
                "seen is not registered"
            );
            check_known(tx, "lead").unwrap();
            assert_eq!(check_parties(tx, "ghost", Some("lead")).unwrap_err().code(), Some(ErrorCode::UnknownSender));
            assert_eq!(check_parties(tx, "lead", Some("ghost")).unwrap_err().code(), Some(ErrorCode::UnknownRecipient));
            check_parties(tx, "lead", Some(BROADCAST)).unwrap();
            Ok(())
        })
        .unwrap();
        m.write(|tx, now| touch(tx, &["ghost"], now)).unwrap();
        m.write(|tx, now| record_named(tx, "ghost", now)).unwrap();
        assert!(m.read(|tx, _| tx.agents().agent("ghost")).unwrap().is_none(), "strict mode records no unknown agent");
        let p = HeartbeatParams { agent_id: "ghost".into(), status: None };
        let e = m.write(|tx, now| heartbeat(tx, now, p)).unwrap_err();
        assert_eq!(e.code(), Some(ErrorCode::AgentNotFound));
    }

    #[test]
    fn the_same_strict_setting_again_records_no_event_and_lax_mode_checks_nothing() {
        let m = Memory::new();
        m.read(|tx, _| check_parties(tx, "ghost", Some("nobody"))).unwrap();
        strict_on(&m);
        strict_on(&m);
        let changes = m.events().iter().filter(|e| e.event_type == EventType::SettingsChanged).count();
        assert_eq!(changes, 1);
        let keep = InitParams::default();
        assert!(m.write(|tx, now| init(tx, now, keep)).unwrap(), "unset leaves strict mode on");
    }

    #[test]
    fn a_heartbeat_moves_last_seen_and_records_only_a_status_change() {
        let m = Memory::new();
        m.write(|tx, now| register(tx, now, reg("w-1", "backend"))).unwrap();
        m.advance(Duration::from_secs(30));
        let beat = |status| HeartbeatParams { agent_id: "w-1".into(), status };
        let r = m.write(|tx, now| heartbeat(tx, now, beat(None))).unwrap();
        assert_eq!(r.event_id, None);
        assert_eq!(r.agent.last_seen_at.as_deref(), Some(m.clock.now().to_string().as_str()));
        let r = m.write(|tx, now| heartbeat(tx, now, beat(Some(AgentStatus::Busy)))).unwrap();
        assert_eq!(r.agent.status, AgentStatus::Busy);
        let last = m.events().pop().unwrap();
        assert_eq!((last.event_type, Some(last.event_id)), (EventType::AgentStatus, r.event_id));
        assert_eq!(last.payload_json["previous"], "idle");
        let r = m.write(|tx, now| heartbeat(tx, now, beat(Some(AgentStatus::Busy)))).unwrap();
        assert_eq!(r.event_id, None, "the same status again is no change");
        assert_eq!(m.read(|tx, _| show(tx, "w-1")).unwrap().status, AgentStatus::Busy);
    }
}
