//! Reconcile: inbox thread changes drive task and run state. [`on_thread`] runs inside the
//! inbox write's transaction (so a thread's change and its task's change commit together),
//! and `orch.reconcile` re-applies the same rules to a whole run as an idempotent repair.
//!
//! Rules, for the thread of a task's *current* attempt:
//! claimed or in_progress → task in_progress; blocked → blocked; done → done (dependents
//! whose dependencies are now all done become ready); failed → failed (then the run's
//! auto-retry applies); cancelled → cancelled. The run's status is then derived from all
//! its tasks ([`refresh_run`]). Threads of older attempts only update their attempt.

use coord_proto::types::*;
use rusqlite::OptionalExtension;
use serde_json::json;

use super::*;
use crate::db::WriteCtx;
use crate::error::Result;

fn attempt_by_thread(conn: &rusqlite::Connection, thread_id: &str) -> Result<Option<Attempt>> {
    let sql = format!("SELECT {ATTEMPT_COLUMNS} FROM attempts WHERE thread_id = ?1");
    Ok(conn.prepare_cached(&sql)?.query_row([thread_id], attempt_from_row).optional()?)
}

/// Called by every inbox write after it changed `thread` (status after the change).
pub fn on_thread(ctx: &mut WriteCtx<'_>, thread: &Thread, actor: &str, now: &str) -> Result<()> {
    if thread.run_id.is_empty() {
        return Ok(());
    }
    if let Some(attempt) = attempt_by_thread(ctx.conn, &thread.thread_id)? {
        apply(ctx, attempt, thread.status, actor, now, None)?;
        return Ok(());
    }
    super::council::on_thread(ctx, thread, actor, now)
}

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

/// Bring an attempt and (if current) its task in line with its thread's status. Returns
/// whether the task changed; `changed` collects changed tasks for `orch.reconcile`.
fn apply(
    ctx: &mut WriteCtx<'_>,
    attempt: Attempt,
    thread_status: ThreadStatus,
    actor: &str,
    now: &str,
    changed: Option<&mut Vec<Task>>,
) -> Result<bool> {
    let a_status = attempt_status(thread_status);
    if a_status != attempt.status {
        let ended = (a_status != AttemptStatus::Live).then_some(now);
        ctx.conn
            .prepare_cached(
                "UPDATE attempts SET status = ?4, ended_at = COALESCE(ended_at, ?5) \
                 WHERE run_id = ?1 AND task_id = ?2 AND attempt = ?3",
            )?
            .execute(rusqlite::params![attempt.run_id, attempt.task_id, attempt.attempt, a_status.as_str(), ended])?;
    }
    let mut task = load_task(ctx.conn, &attempt.run_id, &attempt.task_id)?;
    if task.attempt != attempt.attempt {
        return Ok(false);
    }
    let want = task_status(thread_status);
    if task.status == want {
        return Ok(false);
    }
    set_task_status(ctx.conn, &mut task, want, now)?;
    let attempt = Attempt { status: a_status, ..attempt };
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
        TaskStatus::Pending | TaskStatus::Ready => unreachable!("threads never map to pending or ready"),
    };
    let mut payload = json!({"attempt": attempt.attempt, "thread_id": attempt.thread_id, "worker": attempt.worker});
    if want == TaskStatus::Failed {
        let run = load_run(ctx.conn, &task.run_id)?;
        payload["auto_retry"] = json!(schedule_auto_retry(ctx, &task, &run)?);
    }
    task_event(ctx, event, &task, Some(&attempt), actor, &summary, &payload, now)?;
    if want == TaskStatus::Done {
        release_dependents(ctx, &task, actor, now)?;
    }
    refresh_run(ctx, &task.run_id, actor, now)?;
    if let Some(c) = changed {
        c.push(task);
    }
    Ok(true)
}

/// The run's auto-retry policy: retry automatically while the run allows more automatic
/// retries for this task and the task has attempts left. The retry itself (a new thread and
/// a fresh worktree) happens after the commit, driven by the `task.failed` event.
fn schedule_auto_retry(ctx: &mut WriteCtx<'_>, task: &Task, run: &Run) -> Result<bool> {
    let used: u32 = ctx
        .conn
        .prepare_cached("SELECT auto_retries FROM tasks WHERE run_id = ?1 AND task_id = ?2")?
        .query_row([&task.run_id, &task.task_id], |r| r.get(0))?;
    let retry = run.status == RunStatus::Active && used < run.auto_retry && task.attempt < task.max_attempts;
    if retry {
        ctx.conn
            .prepare_cached(
                "UPDATE tasks SET auto_retries = auto_retries + 1, retry_pending = 1 WHERE run_id = ?1 AND task_id = ?2",
            )?
            .execute([&task.run_id, &task.task_id])?;
    }
    Ok(retry)
}

/// Dependents of a finished task whose dependencies are now all done become ready.
fn release_dependents(ctx: &mut WriteCtx<'_>, task: &Task, actor: &str, now: &str) -> Result<()> {
    for d in dependents(ctx.conn, &task.run_id, &task.task_id)? {
        let mut dep = load_task(ctx.conn, &task.run_id, &d)?;
        if dep.status != TaskStatus::Pending {
            continue;
        }
        if super::plan::all_done(ctx.conn, &task.run_id, &dep.depends_on)? {
            set_task_status(ctx.conn, &mut dep, TaskStatus::Ready, now)?;
            let summary = format!("{} is ready", dep.task_id);
            task_event(ctx, EventType::TaskReady, &dep, None, actor, &summary, &json!({"after": task.task_id}), now)?;
        }
    }
    Ok(())
}

/// Derive the run's status from its tasks and record any change with its event: done when
/// every task is done or cancelled (at least one done); failed while a task is failed with
/// no automatic retry pending; active otherwise. A cancelled run stays cancelled.
pub fn refresh_run(ctx: &mut WriteCtx<'_>, run_id: &str, actor: &str, now: &str) -> Result<()> {
    let mut run = load_run(ctx.conn, run_id)?;
    if run.status == RunStatus::Cancelled {
        return Ok(());
    }
    // Called on every task change, so it must not count a large run's tasks: three
    // index probes on (run_id, status) decide; full counts only when the status changes.
    let exists = |sql: &str| -> Result<bool> { Ok(ctx.conn.prepare_cached(sql)?.exists([run_id])?) };
    let open = exists(
        "SELECT 1 FROM tasks WHERE run_id = ?1 \
         AND status IN ('pending', 'ready', 'dispatched', 'in_progress', 'blocked', 'failed')",
    )?;
    let any_done = exists("SELECT 1 FROM tasks WHERE run_id = ?1 AND status = 'done'")?;
    let failed_for_good = exists("SELECT 1 FROM tasks WHERE run_id = ?1 AND status = 'failed' AND retry_pending = 0")?;
    let want = if !open && any_done {
        RunStatus::Done
    } else if failed_for_good {
        RunStatus::Failed
    } else {
        RunStatus::Active
    };
    if want == run.status {
        return Ok(());
    }
    let (total, done, failed): (i64, i64, i64) = ctx.conn.query_row(
        "SELECT COUNT(*), COALESCE(SUM(status = 'done'), 0), COALESCE(SUM(status = 'failed'), 0) \
         FROM tasks WHERE run_id = ?1",
        [run_id],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )?;
    set_run_status(ctx.conn, &mut run, want, now)?;
    let (event, summary) = match want {
        RunStatus::Done => (EventType::RunDone, format!("run {run_id} done: {done} of {total} tasks done")),
        RunStatus::Failed => (EventType::RunFailed, format!("run {run_id} failed: {failed} task(s) failed")),
        _ => (EventType::RunResumed, format!("run {run_id} is active again")),
    };
    run_event(ctx, event, &run, actor, &summary, &json!({"total": total, "done": done, "failed": failed}), now)?;
    Ok(())
}

/// `orch.reconcile`: re-derive every task of the run from its current thread, release
/// dependents whose dependencies are done, and finish the run if it is. Idempotent.
pub fn run(ctx: &mut WriteCtx<'_>, run_id: &str) -> Result<Vec<Task>> {
    let run = load_run(ctx.conn, run_id)?;
    let now = crate::util::ts(crate::util::now());
    let actor = run.created_by.clone();
    let mut changed = Vec::new();
    for task in run_tasks(ctx.conn, run_id)? {
        if let Some(attempt) = current_attempt(ctx.conn, &task)? {
            let status: String = ctx
                .conn
                .prepare_cached("SELECT status FROM threads WHERE thread_id = ?1")?
                .query_row([&attempt.thread_id], |r| r.get(0))?;
            let status: ThreadStatus = status.parse().map_err(crate::error::Error::Internal)?;
            apply(ctx, attempt, status, &actor, &now, Some(&mut changed))?;
        } else if task.status == TaskStatus::Pending && super::plan::all_done(ctx.conn, run_id, &task.depends_on)? {
            let mut t = task.clone();
            set_task_status(ctx.conn, &mut t, TaskStatus::Ready, &now)?;
            task_event(
                ctx,
                EventType::TaskReady,
                &t,
                None,
                &actor,
                &format!("{} is ready", t.task_id),
                &json!({}),
                &now,
            )?;
            changed.push(t);
        }
    }
    refresh_run(ctx, run_id, &actor, &now)?;
    Ok(changed)
}
