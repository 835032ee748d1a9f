//! Events: every change to shared state records exactly one, in the same transaction,
//! published after the commit. [`Draft`] describes an event about to be written; event
//! filters are resolved here ([`resolve`]) and matched against live events ([`matches`]),
//! which must agree with the storage-side filter of `Events::events_after`.

use coord_proto::DEFAULT_LIMIT;
use coord_proto::types::*;
use serde_json::Value;

use super::check;
use crate::bound::{fit, items_budget};
use crate::error::{Error, Result};
use crate::store::repos::EventQuery;
use crate::store::{Tx, assemble};
use crate::time::Ts;

/// Which layer wrote an event.
pub const SOURCE_INBOX: &str = "inbox";
pub const SOURCE_ORCH: &str = "orch";
pub const SOURCE_AGENTS: &str = "agents";
pub const SOURCE_LAUNCH: &str = "launch";

/// An event about to be written: what it is about, its context after the change, and what
/// caused it.
pub struct Draft<'a> {
    pub event_type: EventType,
    pub source: &'static str,
    pub run_id: &'a str,
    pub task_id: &'a str,
    pub thread_id: &'a str,
    pub assigned_to: &'a str,
    pub created_by: &'a str,
    pub thread_status: Option<ThreadStatus>,
    pub task_status: Option<TaskStatus>,
    pub actor: &'a str,
    pub message_id: Option<&'a str>,
    pub summary: &'a str,
    pub payload: &'a Value,
    pub at: Ts,
}

impl<'a> Draft<'a> {
    /// An event about nothing in particular yet: no run, task or thread, no statuses.
    pub fn new(
        event_type: EventType,
        source: &'static str,
        actor: &'a str,
        summary: &'a str,
        payload: &'a Value,
        at: Ts,
    ) -> Self {
        Draft {
            event_type,
            source,
            run_id: "",
            task_id: "",
            thread_id: "",
            assigned_to: "",
            created_by: "",
            thread_status: None,
            task_status: None,
            actor,
            message_id: None,
            summary,
            payload,
            at,
        }
    }

    /// An inbox event about a thread, as the thread stands after the change.
    pub fn for_thread(
        event_type: EventType,
        thread: &'a Thread,
        actor: &'a str,
        summary: &'a str,
        payload: &'a Value,
        at: Ts,
    ) -> Self {
        Draft {
            run_id: &thread.run_id,
            task_id: &thread.task_id,
            thread_id: &thread.thread_id,
            assigned_to: &thread.assigned_to,
            created_by: &thread.created_by,
            thread_status: Some(thread.status),
            ..Draft::new(event_type, SOURCE_INBOX, actor, summary, payload, at)
        }
    }

    /// An agents-layer event about no thread: `owner` is the agent it concerns (its
    /// `assigned_to` and `created_by`), so `agent` filters follow it.
    pub fn about(
        event_type: EventType,
        owner: &'a str,
        task_id: &'a str,
        actor: &'a str,
        summary: &'a str,
        payload: &'a Value,
        at: Ts,
    ) -> Self {
        Draft {
            task_id,
            assigned_to: owner,
            created_by: owner,
            ..Draft::new(event_type, SOURCE_AGENTS, actor, summary, payload, at)
        }
    }

    /// The event, without its id yet.
    pub fn event(&self) -> Event {
        Event {
            event_id: 0,
            event_type: self.event_type,
            source: self.source.to_string(),
            run_id: self.run_id.to_string(),
            task_id: self.task_id.to_string(),
            thread_id: self.thread_id.to_string(),
            actor: self.actor.to_string(),
            assigned_to: self.assigned_to.to_string(),
            created_by: self.created_by.to_string(),
            thread_status: self.thread_status,
            task_status: self.task_status,
            message_id: self.message_id.map(str::to_string),
            summary: self.summary.to_string(),
            payload_json: self.payload.clone(),
            created_at: self.at.to_string(),
            message: None,
            message_type: None,
            mail: None,
        }
    }
}

/// Store an event and queue it for publication after the commit; returns its id.
pub fn record(tx: &mut dyn Tx, d: &Draft<'_>) -> Result<i64> {
    let mut e = d.event();
    e.event_id = tx.events_mut().event_insert(&e)?;
    let id = e.event_id;
    tx.publish(e);
    Ok(id)
}

/// [`resolve`] for a wait: an `after_event` past the latest event is refused
/// (`cursor_ahead`), since nothing could ever wake it.
pub fn resolve_wait(tx: &dyn Tx, f: EventFilter, default_after: i64) -> Result<EventQuery> {
    if let Some(n) = f.after_event.filter(|n| *n > 0) {
        let latest = tx.events().last_event_id()?;
        if n > latest {
            return Err(Error::cursor_ahead("after_event", "event", n, latest));
        }
    }
    resolve(tx, f, default_after)
}

/// Check a filter and turn `after_message` and `after_latest_from` into an event cursor
/// (the latest of the cursors given). `default_after` applies when no cursor is given.
pub fn resolve(tx: &dyn Tx, f: EventFilter, default_after: i64) -> Result<EventQuery> {
    if let Some(a) = &f.agent {
        check::agent("agent", a)?;
    }
    if let Some(a) = &f.to {
        check::agent("to", a)?;
    }
    for t in &f.message_types {
        check::id("message_types", t)?;
    }
    if let Some(t) = &f.thread_id {
        check::id("thread_id", t)?;
        if !tx.threads().thread_exists(t)? {
            return Err(Error::not_found(format!("thread '{t}' not found")));
        }
    }
    let mut after = match f.after_event {
        Some(n) if n < 0 => return Err(Error::invalid("after_event must not be negative")),
        Some(n) => n,
        None if f.after_message.is_some() || f.after_latest_from.is_some() => 0,
        None => default_after,
    };
    if let Some(mid) = &f.after_message {
        let (ev, thread) =
            tx.messages().message_cursor(mid)?.ok_or_else(|| Error::not_found(format!("message '{mid}' not found")))?;
        if let Some(t) = &f.thread_id
            && *t != thread
        {
            return Err(Error::invalid(format!("message '{mid}' is not in thread '{t}'")));
        }
        after = after.max(ev);
    }
    if let Some(a) = &f.after_latest_from {
        check::agent("after_latest_from", a)?;
        let Some(t) = &f.thread_id else {
            return Err(Error::invalid("after_latest_from needs thread_id: the thread whose messages it looks at"));
        };
        after = after.max(tx.messages().last_message_event_from(t, a)?);
    }
    Ok(EventQuery { after, filter: f })
}

/// Stored events matching `q`, oldest first: at most `limit`, and the backend may stop once
/// they weigh `max_bytes` (always at least one).
pub fn page(tx: &dyn Tx, q: &EventQuery, limit: u32, max_bytes: usize) -> Result<Vec<Event>> {
    tx.events().events_page(q, limit, max_bytes)
}

/// [`page`] for a replay: each message event with the copies its send gave (`mail`), as a
/// live event carries them, read for the whole page at once. A message the store holds no
/// copy of (one sent to its own sender) has none.
pub fn replay_page(tx: &dyn Tx, q: &EventQuery, limit: u32, max_bytes: usize) -> Result<Vec<Event>> {
    let mut events = page(tx, q, limit, max_bytes)?;
    assemble::attach_mail(tx.events(), &mut events)?;
    Ok(events)
}

/// Does a live event pass the filter? Must agree with `Events::events_after`.
pub fn matches(q: &EventQuery, e: &Event) -> bool {
    let f = &q.filter;
    let eq = |want: &Option<String>, have: &str| want.as_deref().is_none_or(|w| w == have);
    e.event_id > q.after
        && eq(&f.thread_id, &e.thread_id)
        && eq(&f.run_id, &e.run_id)
        && eq(&f.task_id, &e.task_id)
        && f.agent.as_deref().is_none_or(|a| (e.assigned_to == a || e.created_by == a) && e.actor != a)
        && (f.statuses.is_empty() || e.thread_status.is_some_and(|s| f.statuses.contains(&s)))
        && what_happened(f, e)
        && (f.kinds.is_empty() || e.message.as_ref().is_some_and(|m| f.kinds.contains(&m.kind)))
        && f.to.as_deref().is_none_or(|to| {
            e.message.as_ref().is_some_and(|m| m.to_agent == to || (m.to_agent == BROADCAST && e.actor != to))
        })
}

/// `event_types` and `message_types` together: either one may match.
fn what_happened(f: &EventFilter, e: &Event) -> bool {
    if f.event_types.is_empty() && f.message_types.is_empty() {
        return true;
    }
    let typed = e.message.as_ref().and_then(|m| m.msg_type.as_deref());
    f.event_types.contains(&e.event_type)
        || typed.is_some_and(|t| f.message_types.iter().any(|want| want == ANY_TYPE || want == t))
}

/// `events.list`: stored events after the cursor (from the start by default).
pub fn list(tx: &dyn Tx, p: EventsListParams) -> Result<EventsResult> {
    let limit = check::limit(p.limit, DEFAULT_LIMIT)?;
    let last_event_id = tx.events().last_event_id()?;
    let q = resolve(tx, p.filter, 0)?;
    let page = tx.events().events_page(&q, limit, items_budget())?;
    let (events, truncated) = bounded(page, limit, items_budget());
    let next_after = if truncated { events.last().map(|e| e.event_id) } else { None };
    Ok(EventsResult { events, last_event_id, truncated, next_after })
}

/// Keep the events of `page` (read with at most `limit`) that fit in `max_bytes` (always
/// the first, however large: `bound::fit`); whether the list stopped early for the bound.
fn bounded(page: Vec<Event>, limit: u32, max_bytes: usize) -> (Vec<Event>, bool) {
    // A backend may itself stop reading at the bound, before `limit` (events_page).
    let stopped_early =
        page.len() < limit as usize && page.iter().map(crate::weight::weight).sum::<usize>() >= max_bytes;
    let (kept, cut) = fit(page, max_bytes, crate::weight::weight);
    (kept, cut || stopped_early)
}
