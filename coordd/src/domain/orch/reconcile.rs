//! Reconcile: a thread's change drives its attempt, task and run. [`on_attempt_thread`]
//! runs inside the transaction of the inbox change (so a thread's change and its task's
//! change commit together), and `orch.reconcile` ([`run`]) re-applies the same rules to a
//! whole run as an idempotent repair.
//!
//! Rules, for the thread of a task's *current* attempt: claimed or in_progress → task
//! in_progress; blocked → blocked; done → done (a code task with a branch then waits to be
//! merged into the run's integration branch, see `merge`; otherwise dependents whose
//! dependencies are now all done become ready); failed → failed (then the run's auto-retry policy applies);
//! cancelled → cancelled. The run's status is then derived from all its tasks. Threads of
//! older attempts only update their attempt.

use coord_proto::types::*;
use serde_json::json;

use super::model::*;
use crate::error::{Error, Result};
use crate::store::Tx;
use crate::store::repos::RetryState;
use crate::time::Ts;

/// The attempt status a thread status implies.
fn attempt_status(s: ThreadStatus) -> AttemptStatus {
    match s {
        ThreadStatus::Done => AttemptStatus::Done,
        ThreadStatus::Failed => AttemptStatus::Failed,
        ThreadStatus::Cancelled => AttemptStatus::Cancelled,
        _ => AttemptStatus::Live,
    }
}

/// The task status a thread status implies, for the current attempt.
fn task_status(s: ThreadStatus) -> TaskStatus {
    match s {
        ThreadStatus::Pending => TaskStatus::Dispatched,
        ThreadStatus::Claimed | ThreadStatus::InProgress => TaskStatus::InProgress,
        ThreadStatus::Blocked => TaskStatus::Blocked,
        ThreadStatus::Done => TaskStatus::Done,
        ThreadStatus::Failed => TaskStatus::Failed,
        ThreadStatus::Cancelled => TaskStatus::Cancelled,
    }
}

/// Bring an attempt and (if it is current) its task in line with its thread's status.
/// Returns the task when it changed.
pub fn on_attempt_thread(
    tx: &mut dyn Tx,
    now: Ts,
    mut attempt: Attempt,
    thread_status: ThreadStatus,
    actor: &str,
) -> Result<Option<Task>> {
    let a_status = attempt_status(thread_status);
    if a_status != attempt.status {
        attempt.status = a_status;
        if a_status != AttemptStatus::Live && attempt.ended_at.is_none() {
            attempt.ended_at = Some(now.to_string());
        }
        tx.attempts_mut().attempt_save(&attempt)?;
    }
    let mut task = load_task(tx, &attempt.run_id, &attempt.task_id)?;
    let want = task_status(thread_status);
    if task.attempt != attempt.attempt || task.status == want {
        return Ok(None);
    }
    set_task_status(tx, &mut task, want, now)?;
    let (event, summary) = match want {
        TaskStatus::Dispatched => (EventType::TaskDispatched, format!("{} waits for {}", task.task_id, attempt.worker)),
        TaskStatus::InProgress => {
            (EventType::TaskInProgress, format!("{} in progress by {}", task.task_id, attempt.worker))
        }
        TaskStatus::Blocked => {
            (EventType::TaskBlocked, format!("{} blocked: {} needs an answer", task.task_id, attempt.worker))
        }
        TaskStatus::Done => (EventType::TaskDone, format!("{} done by {}", task.task_id, attempt.worker)),
        TaskStatus::Failed => (EventType::TaskFailed, format!("{} failed (attempt {})", task.task_id, attempt.attempt)),
        TaskStatus::Cancelled => (EventType::TaskCancelled, format!("{} cancelled", task.task_id)),
        TaskStatus::Pending | TaskStatus::Ready => {
            return Err(Error::Internal("a thread status never maps to pending or ready".into()));
        }
    };
    let mut payload = json!({"attempt": attempt.attempt, "thread_id": attempt.thread_id, "worker": attempt.worker});
    if want == TaskStatus::Failed {
        payload["auto_retry"] = json!(schedule_auto_retry(tx, &task)?);
    }
    if want == TaskStatus::Done && super::merge::on_done(tx, &mut task, &attempt)? {
        payload["merge"] = json!("pending");
        payload["branch"] = json!(attempt.branch);
        // Whether the daemon merges it by itself, so a reader knows not to run `orch merge`.
        payload["auto_merge"] = json!(load_run(tx, &task.run_id)?.auto_merge);
    }
    task_event(tx, event, &task, Some(&attempt), (actor, &summary, &payload), now)?;
    if payload["merge"] == json!("pending") {
        // Every merge goes through the merge queue: the attempt is its candidate now.
        super::queue::on_done(tx, now, &task, &attempt)?;
    }
    if want == TaskStatus::Done {
        release_dependents(tx, &task, actor, now)?;
    }
    refresh_run(tx, &task.run_id, actor, now)?;
    Ok(Some(task))
}

/// The run's auto-retry policy: retry automatically while the run allows more automatic
/// retries for this task and the task has attempts left. The retry itself (a new thread and
/// a fresh worktree) happens after the commit, driven by the `task.failed` event; the
/// flag set here survives a restart.
fn schedule_auto_retry(tx: &mut dyn Tx, task: &Task) -> Result<bool> {
    let run = load_run(tx, &task.run_id)?;
    let r = tx.tasks().task_retry(&task.run_id, &task.task_id)?;
    let retry = run.status == RunStatus::Active && r.auto_retries < run.auto_retry && task.attempt < task.max_attempts;
    if retry {
        tx.tasks_mut().task_set_retry(
            &task.run_id,
            &task.task_id,
            RetryState { auto_retries: r.auto_retries + 1, pending: true },
        )?;
    }
    Ok(retry)
}

/// Give up a scheduled automatic retry (it could not be made): the task stays failed and
/// the run says so.
pub fn abandon_auto_retry(tx: &mut dyn Tx, now: Ts, run_id: &str, task_id: &str) -> Result<()> {
    let r = tx.tasks().task_retry(run_id, task_id)?;
    tx.tasks_mut().task_set_retry(run_id, task_id, RetryState { pending: false, ..r })?;
    let actor = load_run(tx, run_id)?.created_by;
    refresh_run(tx, run_id, &actor, now)
}

/// `orch.reconcile`: re-derive every task of the run from its current thread, release
/// dependents whose dependencies are done, and finish the run if it is. Idempotent.
/// Returns the tasks that changed.
pub fn run(tx: &mut dyn Tx, now: Ts, run_id: &str) -> Result<Vec<Task>> {
    let actor = load_run(tx, run_id)?.created_by;
    let mut changed = Vec::new();
    for task in tx.tasks().run_tasks(run_id)? {
        if super::returns::failed_by_queue(tx, &task)? {
            // Its thread is done, but the merge queue failed it: that stands.
            continue;
        }
        if let Some(attempt) = current_attempt(tx, &task)? {
            let thread = tx
                .threads()
                .thread(&attempt.thread_id)?
                .ok_or_else(|| Error::Internal(format!("attempt thread '{}' is missing", attempt.thread_id)))?;
            changed.extend(on_attempt_thread(tx, now, attempt, thread.thread.status, &actor)?);
        } else if task.status == TaskStatus::Pending && all_done(tx, run_id, &task.depends_on)? {
            let mut t = task;
            set_task_status(tx, &mut t, TaskStatus::Ready, now)?;
            let summary = format!("{} is ready", t.task_id);
            task_event(tx, EventType::TaskReady, &t, None, (&actor, &summary, &json!({})), now)?;
            changed.push(t);
        }
    }
    refresh_run(tx, run_id, &actor, now)?;
    Ok(changed)
}
