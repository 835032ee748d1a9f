//! What every orch rule shares: loading runs and tasks, changing their status, recording
//! orch events, and deriving a run's status from its tasks ([`refresh_run`]).

use coord_proto::ErrorCode;
use coord_proto::types::*;
use serde_json::{Value, json};

use crate::domain::events::{self, Draft, SOURCE_ORCH};
use crate::error::{Error, Result};
use crate::store::Tx;
use crate::time::Ts;

/// Run and task ids become parts of paths and git branch names: letters, digits, `.`, `_`
/// and `-`, starting with a letter or digit, at most 64 characters.
pub fn check_ref_id(field: &str, id: &str) -> Result<()> {
    let ok = !id.is_empty()
        && id.len() <= 64
        && id.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
        && id.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        && !id.contains("..");
    if !ok {
        return Err(Error::invalid(format!(
            "{field} '{id}' must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"
        )));
    }
    Ok(())
}

/// A run, if there is one of that id.
pub fn find_run(tx: &dyn Tx, run_id: &str) -> Result<Option<Run>> {
    tx.runs().run(run_id)
}

pub fn load_run(tx: &dyn Tx, run_id: &str) -> Result<Run> {
    find_run(tx, run_id)?.ok_or_else(|| Error::not_found(format!("run '{run_id}' not found")))
}

/// A run that still accepts changes (not cancelled).
pub fn open_run(tx: &dyn Tx, run_id: &str) -> Result<Run> {
    let run = load_run(tx, run_id)?;
    if run.status == RunStatus::Cancelled {
        return Err(Error::app(ErrorCode::InvalidTransition, format!("run '{run_id}' is cancelled")));
    }
    Ok(run)
}

pub fn load_task(tx: &dyn Tx, run_id: &str, task_id: &str) -> Result<Task> {
    tx.tasks()
        .task(run_id, task_id)?
        .ok_or_else(|| Error::not_found(format!("task '{task_id}' not found in run '{run_id}'")))
}

/// The task's current (latest) attempt, if it was ever dispatched.
pub fn current_attempt(tx: &dyn Tx, task: &Task) -> Result<Option<Attempt>> {
    tx.attempts().attempt(&task.run_id, &task.task_id, task.attempt)
}

pub fn set_task_status(tx: &mut dyn Tx, task: &mut Task, status: TaskStatus, now: Ts) -> Result<()> {
    task.status = status;
    task.updated_at = now.to_string();
    tx.tasks_mut().task_save(task)
}

pub fn set_run_status(tx: &mut dyn Tx, run: &mut Run, status: RunStatus, now: Ts) -> Result<()> {
    run.status = status;
    run.updated_at = now.to_string();
    tx.runs_mut().run_save(run)
}

/// Does a task let its dependents start? Done, and merged when it had something to merge
/// (see `merge`).
pub fn satisfies(t: &Task) -> bool {
    t.status == TaskStatus::Done && !matches!(t.merge_state, Some(MergeState::Pending | MergeState::Conflict))
}

/// Are all of these tasks done (and merged, when they had work to merge)?
pub fn all_done(tx: &dyn Tx, run_id: &str, deps: &[String]) -> Result<bool> {
    for d in deps {
        if tx.tasks().task(run_id, d)?.is_none_or(|t| !satisfies(&t)) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Record an orch event about a task (thread fields from its attempt, if any). The run's
/// creator (the leader) is the event's `created_by`, so an `agent` filter for the leader
/// sees it.
pub fn task_event(
    tx: &mut dyn Tx,
    event_type: EventType,
    task: &Task,
    attempt: Option<&Attempt>,
    (actor, summary, payload): (&str, &str, &Value),
    now: Ts,
) -> Result<i64> {
    let leader = load_run(tx, &task.run_id)?.created_by;
    let draft = Draft {
        run_id: &task.run_id,
        task_id: &task.task_id,
        thread_id: attempt.map_or("", |a| a.thread_id.as_str()),
        assigned_to: attempt.map_or("", |a| a.worker.as_str()),
        created_by: &leader,
        task_status: Some(task.status),
        ..Draft::new(event_type, SOURCE_ORCH, actor, summary, payload, now)
    };
    events::record(tx, &draft)
}

/// Record an orch event about a run.
pub fn run_event(
    tx: &mut dyn Tx,
    event_type: EventType,
    run: &Run,
    (actor, summary, payload): (&str, &str, &Value),
    now: Ts,
) -> Result<i64> {
    let draft = Draft {
        run_id: &run.run_id,
        created_by: &run.created_by,
        ..Draft::new(event_type, SOURCE_ORCH, actor, summary, payload, now)
    };
    events::record(tx, &draft)
}

/// Derive the run's status from its tasks and record any change with its event: done when
/// it has tasks and every one is done or cancelled (all of them cancelled too: nothing is
/// left to do, and a retry makes it active again); failed while a task is failed with no
/// automatic retry pending; active otherwise. A cancelled run stays cancelled.
///
/// It runs on every task change, so it must not count a large run's tasks: three indexed
/// existence probes decide, and the counts are taken only when the status changes.
pub fn refresh_run(tx: &mut dyn Tx, run_id: &str, actor: &str, now: Ts) -> Result<()> {
    let mut run = load_run(tx, run_id)?;
    if run.status == RunStatus::Cancelled {
        return Ok(());
    }
    use TaskStatus::*;
    // A done task whose merge is pending or in conflict still has work ahead of the run.
    let open = tx.tasks().run_has_task(run_id, &[Pending, Ready, Dispatched, InProgress, Blocked, Failed], None)?
        || tx.merges().run_has_unmerged(run_id)?;
    let any_finished = tx.tasks().run_has_task(run_id, &[Done, Cancelled], None)?;
    let failed_for_good = tx.tasks().run_has_task(run_id, &[Failed], Some(false))?;
    let want = if !open && any_finished {
        RunStatus::Done
    } else if failed_for_good {
        RunStatus::Failed
    } else {
        RunStatus::Active
    };
    if want == run.status {
        return Ok(());
    }
    let (total, done, failed) = tx.tasks().run_task_counts(run_id)?;
    set_run_status(tx, &mut run, want, now)?;
    let (event, summary) = match want {
        RunStatus::Done if done < total => {
            let cancelled = total - done;
            (EventType::RunDone, format!("run {run_id} done: {done} of {total} tasks done, {cancelled} cancelled"))
        }
        RunStatus::Done => (EventType::RunDone, format!("run {run_id} done: {done} of {total} tasks done")),
        RunStatus::Failed => (EventType::RunFailed, format!("run {run_id} failed: {failed} task(s) failed")),
        _ => (EventType::RunResumed, format!("run {run_id} is active again")),
    };
    let payload = json!({"total": total, "done": done, "failed": failed});
    run_event(tx, event, &run, (actor, &summary, &payload), now)?;
    Ok(())
}

/// Dependents of a finished (or merged) task whose dependencies are now all done become
/// ready.
pub fn release_dependents(tx: &mut dyn Tx, task: &Task, actor: &str, now: Ts) -> Result<()> {
    for d in tx.tasks().task_dependents(&task.run_id, &task.task_id)? {
        let mut dep = load_task(tx, &task.run_id, &d)?;
        if dep.status != TaskStatus::Pending || !all_done(tx, &task.run_id, &dep.depends_on)? {
            continue;
        }
        set_task_status(tx, &mut dep, TaskStatus::Ready, now)?;
        let summary = format!("{} is ready", dep.task_id);
        task_event(tx, EventType::TaskReady, &dep, None, (actor, &summary, &json!({"after": task.task_id})), now)?;
    }
    Ok(())
}
