//! The `view.*` read models: several domains joined in one read, so a dashboard draws a
//! view from one call. They never write.
//!
//! - [`agents`]: the registry + the threads each agent holds (inbox) + its session
//!   mailbox's queued count (mail) + its tasks that stand failed (inbox + orch).
//! - [`run`]: the run's tasks (orch) with their current worker, blocking question or
//!   failure message (inbox) and the run's councils.
//! - [`timeline`]: mail copies with their delivery state.

use coord_proto::ErrorCode;
use coord_proto::types::*;

use crate::bound;
use crate::domain::check;
use crate::domain::inbox::read;
use crate::domain::mail::{copies, delivery};
use crate::domain::orch::{council, model, queue};
use crate::error::{Error, Result};
use crate::store::Tx;
use crate::store::repos::TimelineQuery;
use crate::time::Ts;

/// Open threads listed per agent at most.
const HELD_THREADS_MAX: u32 = 50;

/// `view.agents`.
pub fn agents(tx: &dyn Tx, now: Ts, p: &AgentsViewParams, last_event_id: i64) -> Result<AgentsView> {
    let all =
        tx.agents().agents_list(&AgentListParams { include_unregistered: !p.registered_only, ..Default::default() })?;
    let list = bound::after_key(all, p.after.as_deref(), |a| &a.agent_id)?;
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
        let threads: Vec<HeldThread> = read::list(tx, now, held)?.threads.into_iter().map(held_thread).collect();
        let failed_tasks = failed_tasks(tx, now, &agent.agent_id)?;
        let activity = activity(&agent, &threads, now);
        out.push(AgentOverview {
            agent,
            activity,
            pending: counts.pending,
            urgent: counts.urgent,
            threads,
            failed_tasks,
        });
    }
    let page = bound::page(out, |a: &AgentOverview| a.agent.agent_id.clone());
    Ok(AgentsView { agents: page.items, last_event_id, truncated: page.truncated, next_after: page.next_after })
}

fn held_thread(t: Thread) -> HeldThread {
    HeldThread {
        thread_id: t.thread_id,
        run_id: t.run_id,
        task_id: t.task_id,
        subject: t.subject,
        status: t.status,
        lease: t.lease,
    }
}

/// The agent's failed task threads whose task still stands failed on that attempt: a task
/// retried or reassigned since has a newer attempt, and one retried and done is not failed.
fn failed_tasks(tx: &dyn Tx, now: Ts, agent: &str) -> Result<Vec<HeldThread>> {
    let q = ListParams {
        assigned_to: Some(agent.to_string()),
        statuses: vec![ThreadStatus::Failed],
        limit: Some(HELD_THREADS_MAX),
        ..Default::default()
    };
    let mut out = Vec::new();
    for t in read::list(tx, now, q)?.threads {
        if t.task_id.is_empty() || t.run_id.is_empty() {
            continue;
        }
        // A thread may name a run and task that orch does not know (a send's own ids).
        let task = match model::load_task(tx, &t.run_id, &t.task_id) {
            Ok(task) => task,
            Err(e) if e.code() == Some(ErrorCode::NotFound) => continue,
            Err(e) => return Err(e),
        };
        if task.status != TaskStatus::Failed {
            continue;
        }
        if model::current_attempt(tx, &task)?.is_some_and(|a| a.thread_id == t.thread_id) {
            out.push(held_thread(t));
        }
    }
    Ok(out)
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
pub fn run(tx: &dyn Tx, p: &RunViewParams, last_event_id: i64) -> Result<RunGraph> {
    let run_id = p.run_id.as_str();
    let run = model::load_run(tx, run_id)?;
    let all = bound::after_key(tx.tasks().run_tasks(run_id)?, p.after.as_deref(), |t| &t.task_id)?;
    let mut tasks = Vec::with_capacity(all.len());
    for task in all {
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
        let candidate = if task.kind == TaskKind::Code { queue::latest(tx, &task)? } else { None };
        tasks.push(GraphTask {
            candidate,
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
    let page = bound::page(tasks, |t: &GraphTask| t.task.task_id.clone());
    let (truncated, next_after) = (page.truncated, page.next_after);
    let mut usage = crate::domain::usage::show(tx, &run.run_id)?;
    usage.sessions.clear();
    Ok(RunGraph {
        run,
        tasks: page.items,
        councils,
        sessions,
        usage: Some(usage),
        last_event_id,
        truncated,
        next_after,
    })
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
    let (agent, thread_id, run_id, before_event) = (p.agent, p.thread_id, p.run_id, p.before_event);
    let q = TimelineQuery { agent, thread_id, run_id, before_event, limit, max_bytes: bound::items_budget() };
    let read = tx.mail().mail_timeline(&q)?.map(|r| copies::item(r, now));
    let page = bound::page_grouped(read, |m: &MailItem| m.event_id);
    Ok(TimelineView { items: page.items, last_event_id, truncated: page.truncated, next_after: page.next_after })
}
