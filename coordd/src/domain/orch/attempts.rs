//! Attempts: what dispatch, retry and reassign record (their worktrees are made before,
//! outside any transaction; see `services::dispatch`), where `orch.answer` replies, and
//! `orch.blocked`.
//!
//! A dispatch is the durable handoff, not the execution: it opens attempt N's inbox thread
//! (kind `task`, run and task set, assigned to the worker, its payload carrying the
//! attempt, worktree, branch, base and acceptance criteria), records the attempt and moves
//! the task to `dispatched`, all in one transaction. The thread is opened *before* the
//! attempt row exists, so the reconcile of that new thread finds no attempt and does
//! nothing (`ops::open_thread` does not run it at all).

use std::path::PathBuf;

use coord_proto::ErrorCode;
use coord_proto::types::*;
use serde_json::{Value, json};

use super::model::*;
use crate::bound;
use crate::domain::check;
use crate::error::{Error, Result};
use crate::store::Tx;
use crate::store::repos::RetryState;
use crate::time::Ts;

/// Why an attempt is being opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Dispatch,
    Retry,
    Reassign,
    /// A done task sent back to its worker (the merge queue, a review), with feedback.
    Return,
}

impl Mode {
    fn verb(self) -> &'static str {
        match self {
            Mode::Dispatch => "dispatched",
            Mode::Retry => "retried",
            Mode::Reassign => "reassigned",
            Mode::Return => "returned",
        }
    }
}

/// A worktree made for an attempt.
#[derive(Debug, Clone)]
pub struct Worktree {
    pub path: PathBuf,
    pub branch: String,
    pub base_rev: String,
    pub base_branch: Option<String>,
}

/// One attempt to open, decided before the write.
#[derive(Debug, Clone)]
pub struct Plan {
    pub task_id: String,
    /// The attempt number to create (the task's current attempt + 1).
    pub attempt: u32,
    pub worker: String,
    pub repo: Option<String>,
    pub worktree: Option<Worktree>,
    pub previous: Option<Attempt>,
    /// The host of the daemon making the attempt (where its worktree is made).
    pub host: Option<String>,
    /// What went wrong with the previous attempt's work, for the worker (a return, or a
    /// retry of a task the merge queue failed): appended to the thread's body.
    pub feedback: Option<String>,
}

/// Check that `task` may get a new attempt of this kind.
/// Every task whose failure scheduled an automatic retry not made yet, as `(run, task)`
/// with its last attempt (whose host says where its worktree is).
pub fn retries_due(tx: &dyn Tx) -> Result<Vec<(String, String, Option<Attempt>)>> {
    last_attempts(tx, tx.tasks().tasks_retry_pending()?)
}

/// Attempts that have a worktree, of one run or all, by run, task and attempt.
pub fn with_worktree(tx: &dyn Tx, run_id: Option<&str>) -> Result<Vec<Attempt>> {
    tx.attempts().attempts_with_worktree(run_id)
}

/// Each `(run, task)` with its last attempt.
pub fn last_attempts(tx: &dyn Tx, tasks: Vec<(String, String)>) -> Result<Vec<(String, String, Option<Attempt>)>> {
    let mut out = Vec::with_capacity(tasks.len());
    for (run_id, task_id) in tasks {
        let last = tx.attempts().attempts_of(&run_id, &task_id)?.pop();
        out.push((run_id, task_id, last));
    }
    Ok(out)
}

pub fn check_mode(task: &Task, mode: Mode) -> Result<()> {
    let ok = match mode {
        Mode::Dispatch => task.status == TaskStatus::Ready,
        Mode::Retry => matches!(task.status, TaskStatus::Failed | TaskStatus::Cancelled),
        Mode::Reassign => task.status.is_live(),
        Mode::Return => task.status == TaskStatus::Done,
    };
    if !ok {
        let what = match mode {
            Mode::Dispatch => "only ready tasks can be dispatched",
            Mode::Retry => "only failed or cancelled tasks can be retried",
            Mode::Reassign => "only a task with a live attempt (dispatched, in_progress or blocked) can be reassigned",
            Mode::Return => "only a done task goes back to its worker",
        };
        return Err(Error::app(
            ErrorCode::InvalidTransition,
            format!("task '{}' is {}: {what}", task.task_id, task.status),
        ));
    }
    if mode == Mode::Retry && task.attempt >= task.max_attempts {
        return Err(Error::app(
            ErrorCode::InvalidTransition,
            format!("task '{}' has used all {} of its attempts (max_attempts)", task.task_id, task.max_attempts),
        ));
    }
    Ok(())
}

/// The tasks one `orch.dispatch` opens, each with its worker; checked on a read snapshot.
pub fn dispatchable(tx: &dyn Tx, p: &DispatchParams) -> Result<Vec<(Task, String)>> {
    let run = open_run(tx, &p.run_id)?;
    let tasks = match &p.task_id {
        Some(t) => vec![load_task(tx, &run.run_id, t)?],
        None => tx.tasks().tasks_ready(&run.run_id, coord_proto::MAX_LIMIT)?,
    };
    tasks
        .into_iter()
        .map(|t| {
            check_mode(&t, Mode::Dispatch)?;
            let worker = p.to.clone().or_else(|| t.assign_to.clone()).ok_or_else(|| {
                Error::invalid(format!(
                    "task '{}' has no assignee: pass `to`, or add the task with assign_to",
                    t.task_id
                ))
            })?;
            Ok((t, worker))
        })
        .collect()
}

/// The task a retry or reassign opens a new attempt of, with its current attempt.
pub fn retryable(tx: &dyn Tx, p: &RetryParams, mode: Mode) -> Result<(Task, Option<Attempt>)> {
    let task = load_task(tx, &p.run_id, &p.task_id)?;
    check_mode(&task, mode)?;
    for dep in &task.depends_on {
        let d = load_task(tx, &p.run_id, dep)?;
        if !satisfies(&d) {
            let state = match d.merge_state {
                Some(m) if d.status == TaskStatus::Done => format!("done, merge {m}"),
                _ => d.status.to_string(),
            };
            return Err(Error::app(
                ErrorCode::InvalidTransition,
                format!("task '{}' depends on '{dep}', which is {state}", task.task_id),
            ));
        }
    }
    let prev = current_attempt(tx, &task)?;
    Ok((task, prev))
}

/// Summaries of a previous thread's messages, so a new worker has the context.
fn history(tx: &dyn Tx, thread_id: &str) -> Result<Value> {
    let lines = tx
        .messages()
        .thread_messages(thread_id)?
        .iter()
        .map(|m| json!({"from": m.from_agent, "kind": m.kind, "summary": m.summary, "message_id": m.message_id}))
        .collect();
    Ok(Value::Array(lines))
}

/// Check that the planned attempt can still be opened (another leader command may have
/// raced the plan: then the whole call fails with a conflict and nothing is written), and
/// say what its thread is: the `send` that opens it.
pub fn thread_for(tx: &dyn Tx, run: &Run, plan: &Plan, mode: Mode) -> Result<SendParams> {
    let task = load_task(tx, &run.run_id, &plan.task_id)?;
    if task.attempt + 1 != plan.attempt {
        return Err(Error::app(
            ErrorCode::LeaseConflict,
            format!("task '{}' changed while dispatching (now at attempt {}); try again", task.task_id, task.attempt),
        ));
    }
    check_mode(&task, mode)?;
    let wt = plan.worktree.as_ref();
    let mut payload = json!({
        "run_id": run.run_id,
        "task_id": task.task_id,
        "attempt": plan.attempt,
        "title": task.title,
        "kind": task.kind,
        "acceptance": task.acceptance,
        "worktree_path": wt.map(|w| w.path.display().to_string()),
        "branch": wt.map(|w| w.branch.clone()),
        "base_rev": wt.map(|w| w.base_rev.clone()),
    });
    if let Some(prev) = &plan.previous {
        payload["previous_thread_id"] = json!(prev.thread_id);
        payload["previous_worker"] = json!(prev.worker);
        if mode == Mode::Reassign {
            payload["history"] = history(tx, &prev.thread_id)?;
        }
    }
    let mut body = task.body.clone();
    if !task.acceptance.is_empty() {
        let gap = if body.is_empty() { "" } else { "\n\n" };
        body.push_str(&format!("{gap}Acceptance criteria:\n{}", task.acceptance));
    }
    if let Some(f) = &plan.feedback {
        let gap = if body.is_empty() { "" } else { "\n\n" };
        body.push_str(&format!("{gap}{f}"));
        payload["feedback"] = json!(f);
    }
    let summary = match mode {
        Mode::Dispatch => task.title.clone(),
        Mode::Retry => format!("{} (retry, attempt {})", task.title, plan.attempt),
        Mode::Reassign => format!("{} (reassigned, attempt {})", task.title, plan.attempt),
        Mode::Return => format!("{} (sent back, attempt {})", task.title, plan.attempt),
    };
    Ok(SendParams {
        from: run.created_by.clone(),
        to: plan.worker.clone(),
        subject: Some(check::subject_from(&format!("[{}/{}] ", run.run_id, task.task_id), &task.title)),
        run_id: Some(run.run_id.clone()),
        task_id: Some(task.task_id.clone()),
        kind: Some(MessageKind::Task),
        priority: Some(task.priority),
        message: MessageInput { summary, body: Some(body), payload_json: Some(payload), artifacts: vec![] },
        ..Default::default()
    })
}

/// Record the attempt whose thread was just opened, and move its task to `dispatched`.
pub fn record(tx: &mut dyn Tx, now: Ts, run: &Run, plan: &Plan, thread_id: &str, mode: Mode) -> Result<Dispatch> {
    let mut task = load_task(tx, &run.run_id, &plan.task_id)?;
    let wt = plan.worktree.as_ref();
    let attempt = Attempt {
        run_id: run.run_id.clone(),
        task_id: task.task_id.clone(),
        attempt: plan.attempt,
        thread_id: thread_id.to_string(),
        worker: plan.worker.clone(),
        status: AttemptStatus::Live,
        repo: plan.repo.clone(),
        worktree_path: wt.map(|w| w.path.display().to_string()),
        branch: wt.map(|w| w.branch.clone()),
        base_rev: wt.map(|w| w.base_rev.clone()),
        base_branch: wt.and_then(|w| w.base_branch.clone()),
        previous_thread_id: plan.previous.as_ref().map(|p| p.thread_id.clone()),
        started_at: now.to_string(),
        ended_at: None,
        host: plan.host.clone(),
    };
    tx.attempts_mut().attempt_insert(&attempt)?;
    let retry = tx.tasks().task_retry(&run.run_id, &task.task_id)?;
    tx.tasks_mut().task_set_retry(&run.run_id, &task.task_id, RetryState { pending: false, ..retry })?;
    task.attempt = plan.attempt;
    set_task_status(tx, &mut task, TaskStatus::Dispatched, now)?;
    let d = Dispatch {
        task_id: task.task_id.clone(),
        attempt: plan.attempt,
        thread_id: attempt.thread_id.clone(),
        assigned_to: plan.worker.clone(),
        worktree_path: attempt.worktree_path.clone(),
        branch: attempt.branch.clone(),
        base_rev: attempt.base_rev.clone(),
    };
    let summary = format!("{} {} to {} (attempt {})", task.task_id, mode.verb(), plan.worker, plan.attempt);
    let mut payload = serde_json::to_value(&d).unwrap_or(Value::Null);
    payload["mode"] = json!(mode.verb());
    if let Some(f) = &plan.feedback {
        payload["feedback"] = json!(f);
    }
    task_event(tx, EventType::TaskDispatched, &task, Some(&attempt), (&run.created_by, &summary, &payload), now)?;
    Ok(d)
}

/// Where `orch.answer` replies: a blocked task's current attempt's thread, which must be
/// live; and the run's creator (the one the worker asked).
pub fn answer_target(tx: &dyn Tx, p: AnswerParams) -> Result<(ReplyParams, String)> {
    let run = load_run(tx, &p.run_id)?;
    let task = load_task(tx, &p.run_id, &p.task_id)?;
    // An answer settles a question: once the task left `blocked` (answered already, say)
    // there is none to answer, and a second answer would reach the worker mid-work.
    if task.status != TaskStatus::Blocked {
        return Err(Error::app(
            ErrorCode::InvalidTransition,
            format!(
                "task '{}' is {}, not blocked: it has no question to answer (write to its worker with inbox send)",
                task.task_id, task.status
            ),
        ));
    }
    let attempt = current_attempt(tx, &task)?.filter(|a| a.status == AttemptStatus::Live).ok_or_else(|| {
        Error::app(
            ErrorCode::InvalidTransition,
            format!("task '{}' has no live attempt to answer ({})", task.task_id, task.status),
        )
    })?;
    let reply = ReplyParams {
        from: p.from.unwrap_or_else(|| run.created_by.clone()),
        to: Some(attempt.worker),
        thread_id: attempt.thread_id,
        kind: Some(MessageKind::Answer),
        message: p.message,
    };
    Ok((reply, run.created_by))
}

/// `orch.blocked`: blocked tasks with the question that blocks each.
pub fn blocked(tx: &dyn Tx, p: &RunPageParams) -> Result<BlockedResult> {
    load_run(tx, &p.run_id)?;
    let tasks = tx.tasks().run_tasks(&p.run_id)?;
    let mut out = Vec::new();
    for task in bound::after_key(tasks, p.after.as_deref(), |t| &t.task_id)?.into_iter() {
        if task.status != TaskStatus::Blocked {
            continue;
        }
        let Some(a) = current_attempt(tx, &task)? else { continue };
        let question = tx.messages().latest_message_of_kind(&a.thread_id, MessageKind::Question)?;
        out.push(BlockedTask { task, thread_id: a.thread_id, worker: a.worker, question });
    }
    let page = bound::page(out, |b: &BlockedTask| b.task.task_id.clone());
    Ok(BlockedResult { blocked: page.items, truncated: page.truncated, next_after: page.next_after })
}
