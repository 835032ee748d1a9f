//! The `view.*` read models: several domains joined in one read, so a dashboard draws a
//! view from one call. They never write.
//!
//! - [`agents`]: the registry + the threads each agent holds (inbox) + its session
//!   mailbox's queued count (mail).
//! - [`run`]: the run's tasks (orch) with their current worker, blocking question or
//!   failure message (inbox) and the run's councils.
//! - [`timeline`]: mail copies with their delivery state.

use coord_proto::types::*;

use crate::domain::agents as registry;
use crate::domain::check;
use crate::domain::inbox::read;
use crate::domain::mail::{copies, delivery};
use crate::domain::orch::{council, model, plan};
use crate::error::{Error, Result};
use crate::store::Tx;
use crate::store::repos::TimelineQuery;
use crate::time::Ts;

/// Open threads listed per agent at most.
const HELD_THREADS_MAX: u32 = 50;

/// `view.agents`.
pub fn agents(tx: &dyn Tx, now: Ts, p: &AgentsViewParams, last_event_id: i64) -> Result<AgentsView> {
    let list = registry::list(tx, &AgentListParams { include_unregistered: !p.registered_only, ..Default::default() })?;
    let mut out = Vec::with_capacity(list.len());
    for agent in list {
        if agent.agent_id.starts_with(TASK_RECIPIENT_PREFIX) {
            continue;
        }
        let counts =
            delivery::pending(tx, now, &PendingParams { agent: Some(agent.agent_id.clone()), ..Default::default() })?;
        let held = ListParams {
            assigned_to: Some(agent.agent_id.clone()),
            statuses: vec![ThreadStatus::Claimed, ThreadStatus::InProgress, ThreadStatus::Blocked],
            limit: Some(HELD_THREADS_MAX),
            ..Default::default()
        };
        let threads: Vec<HeldThread> = read::list(tx, now, held)?
            .into_iter()
            .map(|t| HeldThread {
                thread_id: t.thread_id,
                run_id: t.run_id,
                task_id: t.task_id,
                subject: t.subject,
                status: t.status,
                lease: t.lease,
            })
            .collect();
        let activity = activity(&agent, &threads, now);
        out.push(AgentOverview { agent, activity, pending: counts.pending, urgent: counts.urgent, threads });
    }
    Ok(AgentsView { agents: out, last_event_id })
}

/// Busy with a live lease, stale with a lapsed one (or long unseen while holding work),
/// idle with nothing held.
fn activity(agent: &Agent, threads: &[HeldThread], now: Ts) -> ActivityState {
    if threads.is_empty() {
        return ActivityState::Idle;
    }
    let lapsed = threads.iter().any(|t| !t.lease.as_ref().is_some_and(|l| l.active));
    let unseen = agent
        .last_seen_at
        .as_deref()
        .and_then(|s| Ts::parse(s).ok())
        .is_none_or(|seen| now.secs_since(seen) > STALE_AFTER_SECONDS);
    if lapsed || unseen { ActivityState::Stale } else { ActivityState::Busy }
}

/// `view.run`.
pub fn run(tx: &dyn Tx, run_id: &str, last_event_id: i64) -> Result<RunGraph> {
    let view = plan::view(tx, run_id, last_event_id)?;
    let mut tasks = Vec::with_capacity(view.tasks.len());
    for task in view.tasks {
        let attempt = if task.attempt > 0 { model::current_attempt(tx, &task)? } else { None };
        let (mut question, mut failure) = (None, None);
        if let Some(a) = &attempt {
            match task.status {
                TaskStatus::Blocked => {
                    question = tx.messages().latest_message_of_kind(&a.thread_id, MessageKind::Question)?
                }
                TaskStatus::Failed => {
                    failure = tx.messages().latest_message_of_kind(&a.thread_id, MessageKind::Result)?
                }
                _ => {}
            }
        }
        tasks.push(GraphTask {
            worker: attempt.as_ref().map(|a| a.worker.clone()),
            thread_id: attempt.map(|a| a.thread_id),
            question,
            failure,
            task,
        });
    }
    let mut councils = Vec::new();
    for i in 1..=tx.councils().councils_count(run_id)? {
        councils.push(council::show(tx, run_id, &format!("C{i}"))?);
    }
    let q = SessionListParams { run_id: Some(run_id.to_string()), ..Default::default() };
    let sessions = tx.launches().launch_list(&q)?;
    Ok(RunGraph { run: view.run, tasks, councils, sessions, last_event_id })
}

/// `view.timeline`.
pub fn timeline(tx: &dyn Tx, now: Ts, p: TimelineParams, last_event_id: i64) -> Result<TimelineView> {
    let narrowed = [p.agent.is_some(), p.thread_id.is_some(), p.run_id.is_some()].iter().filter(|b| **b).count();
    if narrowed > 1 {
        return Err(check::invalid_args("give at most one of agent, thread_id and run_id"));
    }
    if let Some(a) = &p.agent {
        check::agent("agent", a)?;
    }
    if let Some(t) = &p.thread_id {
        check::id("thread_id", t)?;
    }
    if let Some(r) = &p.run_id {
        check::id("run_id", r)?;
    }
    let limit = match p.limit {
        None => TIMELINE_LIMIT_DEFAULT,
        Some(n) if (1..=TIMELINE_LIMIT_MAX).contains(&n) => n,
        Some(n) => return Err(check::invalid_args(format!("limit must be 1 to {TIMELINE_LIMIT_MAX}, got {n}"))),
    };
    if p.before_event.is_some_and(|e| e < 0) {
        return Err(Error::invalid("before_event must not be negative"));
    }
    let q =
        TimelineQuery { agent: p.agent, thread_id: p.thread_id, run_id: p.run_id, before_event: p.before_event, limit };
    let items = tx.mail().mail_timeline(&q)?.into_iter().map(|r| copies::item(r, now)).collect();
    Ok(TimelineView { items, last_event_id })
}
