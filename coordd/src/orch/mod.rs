//! The orch domain: runs, the task graph, attempts and council reviews, kept beside the
//! inbox tables in the same database and behind the same writer.
//!
//! - [`plan`]: runs, tasks, dependencies (cycles refused), the ready queue, cancel.
//! - [`dispatch`]: attempts and their inbox threads (dispatch, retry, reassign, answer).
//! - [`reconcile`]: thread changes → task and run state, in the inbox write's transaction.
//! - [`git`]: worktrees with git2 (always run off the writer, in `spawn_blocking`).
//! - [`worktrees`]: listing and safe pruning of attempt worktrees.
//! - [`council`]: the two-phase, three-reviewer council review.
//! - [`service`]: the async steps that combine git and the database, and auto-retry.
//!
//! This file holds what they share: row mapping, validation and orch events.

pub mod council;
pub mod dispatch;
pub mod git;
pub mod plan;
pub mod reconcile;
pub mod service;
pub mod worktrees;

#[cfg(test)]
mod tests;

use coord_proto::types::*;
use rusqlite::{Connection, OptionalExtension, Row};
use serde_json::Value;

use crate::db::{WriteCtx, parse_col};
use crate::error::{Error, Result};
use crate::events::{self, Draft, SOURCE_ORCH};

pub const RUN_COLUMNS: &str = "run_id, goal, status, created_by, auto_retry, created_at, updated_at";

pub fn run_from_row(r: &Row<'_>) -> rusqlite::Result<Run> {
    Ok(Run {
        run_id: r.get(0)?,
        goal: r.get(1)?,
        status: parse_col(r, 2)?,
        created_by: r.get(3)?,
        auto_retry: r.get(4)?,
        created_at: r.get(5)?,
        updated_at: r.get(6)?,
    })
}

pub const TASK_COLUMNS: &str = "t.run_id, t.task_id, t.title, t.body, t.acceptance, t.priority, t.assign_to, \
     t.role, t.kind, t.max_attempts, t.status, t.attempt, t.created_at, t.updated_at";

/// Map a task row; `depends_on` is filled by [`load_deps`].
pub fn task_from_row(r: &Row<'_>) -> rusqlite::Result<Task> {
    Ok(Task {
        run_id: r.get(0)?,
        task_id: r.get(1)?,
        title: r.get(2)?,
        body: r.get(3)?,
        acceptance: r.get(4)?,
        priority: parse_col(r, 5)?,
        assign_to: r.get(6)?,
        role: r.get(7)?,
        kind: parse_col(r, 8)?,
        max_attempts: r.get(9)?,
        status: parse_col(r, 10)?,
        attempt: r.get(11)?,
        depends_on: Vec::new(),
        created_at: r.get(12)?,
        updated_at: r.get(13)?,
    })
}

pub const ATTEMPT_COLUMNS: &str = "run_id, task_id, attempt, thread_id, worker, status, repo, worktree_path, \
     branch, base_rev, base_branch, previous_thread_id, started_at, ended_at";

pub fn attempt_from_row(r: &Row<'_>) -> rusqlite::Result<Attempt> {
    Ok(Attempt {
        run_id: r.get(0)?,
        task_id: r.get(1)?,
        attempt: r.get(2)?,
        thread_id: r.get(3)?,
        worker: r.get(4)?,
        status: parse_col(r, 5)?,
        repo: r.get(6)?,
        worktree_path: r.get(7)?,
        branch: r.get(8)?,
        base_rev: r.get(9)?,
        base_branch: r.get(10)?,
        previous_thread_id: r.get(11)?,
        started_at: r.get(12)?,
        ended_at: r.get(13)?,
    })
}

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

pub fn prio_rank(p: Priority) -> i64 {
    match p {
        Priority::Urgent => 3,
        Priority::High => 2,
        Priority::Normal => 1,
        Priority::Low => 0,
    }
}

pub fn load_run(conn: &Connection, run_id: &str) -> Result<Run> {
    conn.prepare_cached(&format!("SELECT {RUN_COLUMNS} FROM runs WHERE run_id = ?1"))?
        .query_row([run_id], run_from_row)
        .optional()?
        .ok_or_else(|| Error::not_found(format!("run '{run_id}' not found")))
}

pub fn load_task(conn: &Connection, run_id: &str, task_id: &str) -> Result<Task> {
    let mut task = conn
        .prepare_cached(&format!("SELECT {TASK_COLUMNS} FROM tasks t WHERE t.run_id = ?1 AND t.task_id = ?2"))?
        .query_row([run_id, task_id], task_from_row)
        .optional()?
        .ok_or_else(|| Error::not_found(format!("task '{task_id}' not found in run '{run_id}'")))?;
    task.depends_on = load_deps(conn, run_id, task_id)?;
    Ok(task)
}

pub fn load_deps(conn: &Connection, run_id: &str, task_id: &str) -> Result<Vec<String>> {
    let mut stmt =
        conn.prepare_cached("SELECT depends_on FROM task_deps WHERE run_id = ?1 AND task_id = ?2 ORDER BY depends_on")?;
    Ok(stmt.query_map([run_id, task_id], |r| r.get(0))?.collect::<Result<_, _>>()?)
}

pub fn dependents(conn: &Connection, run_id: &str, task_id: &str) -> Result<Vec<String>> {
    let mut stmt =
        conn.prepare_cached("SELECT task_id FROM task_deps WHERE run_id = ?1 AND depends_on = ?2 ORDER BY task_id")?;
    Ok(stmt.query_map([run_id, task_id], |r| r.get(0))?.collect::<Result<_, _>>()?)
}

/// All tasks of a run in creation order, with their dependencies.
pub fn run_tasks(conn: &Connection, run_id: &str) -> Result<Vec<Task>> {
    let mut tasks: Vec<Task> = conn
        .prepare_cached(&format!("SELECT {TASK_COLUMNS} FROM tasks t WHERE t.run_id = ?1 ORDER BY t.rowid"))?
        .query_map([run_id], task_from_row)?
        .collect::<Result<_, _>>()?;
    let mut deps: std::collections::HashMap<String, Vec<String>> = std::collections::HashMap::new();
    let mut stmt =
        conn.prepare_cached("SELECT task_id, depends_on FROM task_deps WHERE run_id = ?1 ORDER BY depends_on")?;
    for row in stmt.query_map([run_id], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))? {
        let (t, d) = row?;
        deps.entry(t).or_default().push(d);
    }
    for t in &mut tasks {
        t.depends_on = deps.remove(&t.task_id).unwrap_or_default();
    }
    Ok(tasks)
}

pub fn attempts(conn: &Connection, run_id: &str, task_id: &str) -> Result<Vec<Attempt>> {
    let sql = format!("SELECT {ATTEMPT_COLUMNS} FROM attempts WHERE run_id = ?1 AND task_id = ?2 ORDER BY attempt");
    Ok(conn.prepare_cached(&sql)?.query_map([run_id, task_id], attempt_from_row)?.collect::<Result<_, _>>()?)
}

pub fn current_attempt(conn: &Connection, task: &Task) -> Result<Option<Attempt>> {
    let sql = format!("SELECT {ATTEMPT_COLUMNS} FROM attempts WHERE run_id = ?1 AND task_id = ?2 AND attempt = ?3");
    Ok(conn
        .prepare_cached(&sql)?
        .query_row(rusqlite::params![task.run_id, task.task_id, task.attempt], attempt_from_row)
        .optional()?)
}

/// Write a task's status (and bump `updated_at`).
pub fn set_task_status(conn: &Connection, task: &mut Task, status: TaskStatus, now: &str) -> Result<()> {
    conn.prepare_cached("UPDATE tasks SET status = ?3, updated_at = ?4 WHERE run_id = ?1 AND task_id = ?2")?
        .execute(rusqlite::params![task.run_id, task.task_id, status.as_str(), now])?;
    task.status = status;
    task.updated_at = now.to_string();
    Ok(())
}

pub fn set_run_status(conn: &Connection, run: &mut Run, status: RunStatus, now: &str) -> Result<()> {
    conn.prepare_cached("UPDATE runs SET status = ?2, updated_at = ?3 WHERE run_id = ?1")?
        .execute(rusqlite::params![run.run_id, status.as_str(), now])?;
    run.status = status;
    run.updated_at = now.to_string();
    Ok(())
}

/// Append an orch event about a task (thread fields from its current attempt, if any).
/// (The arguments are the event's columns; a struct would only rename them.)
#[allow(clippy::too_many_arguments)]
pub fn task_event(
    ctx: &mut WriteCtx<'_>,
    event_type: EventType,
    task: &Task,
    attempt: Option<&Attempt>,
    actor: &str,
    summary: &str,
    payload: &Value,
    now: &str,
) -> Result<i64> {
    let thread_id = attempt.map_or("", |a| a.thread_id.as_str());
    let worker = attempt.map_or("", |a| a.worker.as_str());
    // The leader is the task's "creator", so an `agent` filter for the leader sees it.
    let leader = load_run(ctx.conn, &task.run_id)?.created_by;
    events::record(
        ctx,
        &Draft {
            event_type,
            source: SOURCE_ORCH,
            run_id: &task.run_id,
            task_id: &task.task_id,
            thread_id,
            assigned_to: worker,
            created_by: &leader,
            thread_status: None,
            task_status: Some(task.status),
            actor,
            message_id: None,
            message_kind: None,
            summary,
            payload,
            created_at: now,
        },
    )
}

/// Append an orch event about a run.
pub fn run_event(
    ctx: &mut WriteCtx<'_>,
    event_type: EventType,
    run: &Run,
    actor: &str,
    summary: &str,
    payload: &Value,
    now: &str,
) -> Result<i64> {
    events::record(
        ctx,
        &Draft {
            event_type,
            source: SOURCE_ORCH,
            run_id: &run.run_id,
            task_id: "",
            thread_id: "",
            assigned_to: "",
            created_by: &run.created_by,
            thread_status: None,
            task_status: None,
            actor,
            message_id: None,
            message_kind: None,
            summary,
            payload,
            created_at: now,
        },
    )
}
