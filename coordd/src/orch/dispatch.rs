//! Attempts and their inbox threads: the database half of dispatch, retry and reassign
//! (their worktrees were made beforehand, off the writer; see `service`), and answering a
//! blocked task. A dispatch is the durable handoff, not the execution: it creates attempt N,
//! the inbox thread (kind `task`, run and task set, assigned to the worker, its payload
//! carrying the attempt, worktree, branch, base and acceptance criteria) and moves the task
//! to `dispatched`, all in one transaction.

use coord_proto::ErrorCode;
use coord_proto::types::*;
use serde_json::{Value, json};

use super::git::Created;
use super::*;
use crate::db::WriteCtx;
use crate::error::{Error, Result};
use crate::inbox;
use crate::util;

/// Why an attempt is being opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Dispatch,
    Retry,
    Reassign,
}

/// One attempt to open, decided before the write.
#[derive(Debug, Clone)]
pub struct Plan {
    pub task_id: String,
    /// The attempt number to create (the task's current attempt + 1).
    pub attempt: u32,
    pub worker: String,
    pub repo: Option<String>,
    pub worktree: Option<Created>,
    pub previous: Option<Attempt>,
}

/// Check that `task` may get a new attempt of this kind.
pub fn check_mode(task: &Task, mode: Mode) -> Result<()> {
    let ok = match mode {
        Mode::Dispatch => task.status == TaskStatus::Ready,
        Mode::Retry => matches!(task.status, TaskStatus::Failed | TaskStatus::Cancelled),
        Mode::Reassign => task.status.is_live(),
    };
    if !ok {
        let what = match mode {
            Mode::Dispatch => "only ready tasks can be dispatched",
            Mode::Retry => "only failed or cancelled tasks can be retried",
            Mode::Reassign => "only a task with a live attempt (dispatched, in_progress or blocked) can be reassigned",
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

/// Summaries of a previous thread's messages, so a new worker has the context.
fn history(ctx: &WriteCtx<'_>, thread_id: &str) -> Result<Value> {
    let shown = inbox::read::show(ctx.conn, thread_id)?;
    let lines: Vec<Value> = shown
        .messages
        .iter()
        .map(|m| json!({"from": m.from_agent, "kind": m.kind, "summary": m.summary, "message_id": m.message_id}))
        .collect();
    Ok(Value::Array(lines))
}

/// Open the planned attempts. Each task must still be in the state the plan was made for
/// (another leader command may have raced it): otherwise the whole call fails with a
/// conflict and nothing is written.
pub fn record(ctx: &mut WriteCtx<'_>, run_id: &str, plans: Vec<Plan>, mode: Mode) -> Result<Vec<Dispatch>> {
    let run = load_run(ctx.conn, run_id)?;
    if run.status == RunStatus::Cancelled {
        return Err(Error::app(ErrorCode::InvalidTransition, format!("run '{run_id}' is cancelled")));
    }
    let now = util::ts(util::now());
    let mut out = Vec::with_capacity(plans.len());
    for plan in plans {
        let mut task = load_task(ctx.conn, run_id, &plan.task_id)?;
        if task.attempt + 1 != plan.attempt {
            return Err(Error::app(
                ErrorCode::LeaseConflict,
                format!(
                    "task '{}' changed while dispatching (now at attempt {}); try again",
                    task.task_id, task.attempt
                ),
            ));
        }
        check_mode(&task, mode)?;
        let wt = plan.worktree.as_ref();
        let mut payload = json!({
            "run_id": run_id,
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
                payload["history"] = history(ctx, &prev.thread_id)?;
            }
        }
        let mut body = task.body.clone();
        if !task.acceptance.is_empty() {
            let gap = if body.is_empty() { "" } else { "\n\n" };
            body.push_str(&format!("{gap}Acceptance criteria:\n{}", task.acceptance));
        }
        let summary = match mode {
            Mode::Dispatch => task.title.clone(),
            Mode::Retry => format!("{} (retry, attempt {})", task.title, plan.attempt),
            Mode::Reassign => format!("{} (reassigned, attempt {})", task.title, plan.attempt),
        };
        let sent = inbox::write::send(
            ctx,
            SendParams {
                from: run.created_by.clone(),
                to: plan.worker.clone(),
                subject: Some(inbox::subject_from(&format!("[{run_id}/{}] ", task.task_id), &task.title)),
                run_id: Some(run_id.to_string()),
                task_id: Some(task.task_id.clone()),
                kind: Some(MessageKind::Task),
                priority: Some(task.priority),
                message: MessageInput {
                    summary,
                    body: Some(body),
                    payload_json: Some(payload.clone()),
                    artifacts: vec![],
                },
                ..Default::default()
            },
        )?;
        let attempt = Attempt {
            run_id: run_id.to_string(),
            task_id: task.task_id.clone(),
            attempt: plan.attempt,
            thread_id: sent.thread.thread_id.clone(),
            worker: plan.worker.clone(),
            status: AttemptStatus::Live,
            repo: plan.repo.clone(),
            worktree_path: wt.map(|w| w.path.display().to_string()),
            branch: wt.map(|w| w.branch.clone()),
            base_rev: wt.map(|w| w.base_rev.clone()),
            base_branch: wt.and_then(|w| w.base_branch.clone()),
            previous_thread_id: plan.previous.as_ref().map(|p| p.thread_id.clone()),
            started_at: now.clone(),
            ended_at: None,
        };
        ctx.conn
            .prepare_cached(&format!(
                "INSERT INTO attempts ({ATTEMPT_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, NULL)"
            ))?
            .execute(rusqlite::params![
                attempt.run_id,
                attempt.task_id,
                attempt.attempt,
                attempt.thread_id,
                attempt.worker,
                attempt.status.as_str(),
                attempt.repo,
                attempt.worktree_path,
                attempt.branch,
                attempt.base_rev,
                attempt.base_branch,
                attempt.previous_thread_id,
                attempt.started_at,
            ])?;
        ctx.conn
            .prepare_cached("UPDATE tasks SET attempt = ?3, retry_pending = 0 WHERE run_id = ?1 AND task_id = ?2")?
            .execute(rusqlite::params![run_id, task.task_id, plan.attempt])?;
        task.attempt = plan.attempt;
        set_task_status(ctx.conn, &mut task, TaskStatus::Dispatched, &now)?;
        let d = Dispatch {
            task_id: task.task_id.clone(),
            attempt: plan.attempt,
            thread_id: attempt.thread_id.clone(),
            assigned_to: plan.worker.clone(),
            worktree_path: attempt.worktree_path.clone(),
            branch: attempt.branch.clone(),
            base_rev: attempt.base_rev.clone(),
        };
        let what = match mode {
            Mode::Dispatch => "dispatched",
            Mode::Retry => "retried",
            Mode::Reassign => "reassigned",
        };
        let summary = format!("{} {what} to {} (attempt {})", task.task_id, plan.worker, plan.attempt);
        let mut ev_payload = serde_json::to_value(&d).unwrap_or(Value::Null);
        ev_payload["mode"] = json!(what);
        task_event(
            ctx,
            EventType::TaskDispatched,
            &task,
            Some(&attempt),
            &run.created_by,
            &summary,
            &ev_payload,
            &now,
        )?;
        if mode == Mode::Reassign
            && let Some(prev) = &plan.previous
        {
            // The old attempt is no longer current, so reconcile only closes the attempt.
            inbox::write::cancel(
                ctx,
                CancelParams {
                    agent: run.created_by.clone(),
                    thread_id: prev.thread_id.clone(),
                    reason: format!("reassigned to {} (attempt {})", plan.worker, plan.attempt),
                    artifacts: vec![],
                },
            )?;
        }
        out.push(d);
    }
    super::reconcile::refresh_run(ctx, run_id, &run.created_by, &now)?;
    Ok(out)
}

/// `orch.answer`: reply with kind `answer` in the current attempt's thread (which wakes the
/// worker's `inbox wait-reply`, and resumes a blocked task).
pub fn answer(ctx: &mut WriteCtx<'_>, p: AnswerParams) -> Result<MessageResult> {
    let run = load_run(ctx.conn, &p.run_id)?;
    let task = load_task(ctx.conn, &p.run_id, &p.task_id)?;
    let attempt = current_attempt(ctx.conn, &task)?.filter(|a| a.status == AttemptStatus::Live).ok_or_else(|| {
        Error::app(
            ErrorCode::InvalidTransition,
            format!("task '{}' has no live attempt to answer ({})", task.task_id, task.status),
        )
    })?;
    inbox::write::reply(
        ctx,
        ReplyParams {
            from: p.from.unwrap_or(run.created_by),
            to: Some(attempt.worker),
            thread_id: attempt.thread_id,
            kind: Some(MessageKind::Answer),
            message: p.message,
        },
    )
}

/// `orch.blocked`: blocked tasks with the question that blocks each.
pub fn blocked(conn: &rusqlite::Connection, run_id: &str) -> Result<BlockedResult> {
    load_run(conn, run_id)?;
    let mut out = Vec::new();
    for task in run_tasks(conn, run_id)?.into_iter().filter(|t| t.status == TaskStatus::Blocked) {
        let Some(a) = current_attempt(conn, &task)? else { continue };
        let mid: Option<String> = conn
            .prepare_cached(
                "SELECT message_id FROM messages WHERE thread_id = ?1 AND kind = 'question' ORDER BY event_id DESC LIMIT 1",
            )?
            .query_row([&a.thread_id], |r| r.get(0))
            .ok();
        let question = match mid {
            Some(m) => inbox::read::message(conn, &m)?,
            None => None,
        };
        out.push(BlockedTask { task, thread_id: a.thread_id, worker: a.worker, question });
    }
    Ok(BlockedResult { blocked: out })
}
