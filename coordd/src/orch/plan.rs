//! Runs, tasks and dependencies: creation, listing, the ready queue, dependency edits
//! (cycles refused) and cancellation. Every change appends its orch event.

use std::collections::HashSet;

use coord_proto::types::*;
use coord_proto::{DEFAULT_LIMIT, ErrorCode};
use rusqlite::{Connection, OptionalExtension, params_from_iter};
use serde_json::json;

use super::*;
use crate::db::WriteCtx;
use crate::error::{Error, Result};
use crate::inbox::{self, check_agent, check_limit};
use crate::util;

/// Default attempts per task.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 3;

pub fn view(conn: &Connection, run_id: &str, event_id: i64) -> Result<RunView> {
    Ok(RunView { run: load_run(conn, run_id)?, tasks: run_tasks(conn, run_id)?, event_id })
}

pub fn task_view(conn: &Connection, run_id: &str, task_id: &str) -> Result<TaskView> {
    Ok(TaskView {
        task: load_task(conn, run_id, task_id)?,
        dependents: dependents(conn, run_id, task_id)?,
        attempts: attempts(conn, run_id, task_id)?,
    })
}

/// `orch.runCreate`.
pub fn create_run(ctx: &mut WriteCtx<'_>, p: RunCreateParams) -> Result<RunView> {
    let conn = ctx.conn;
    inbox::check_text("goal", &p.goal)?;
    let created_by = p.created_by.unwrap_or_else(|| "leader".into());
    check_agent("created_by", &created_by)?;
    let run_id = match p.run_id {
        Some(id) => {
            check_ref_id("run id", &id)?;
            let exists = conn.prepare_cached("SELECT 1 FROM runs WHERE run_id = ?1")?.exists([&id])?;
            if exists {
                return Err(Error::invalid(format!("run '{id}' already exists")));
            }
            id
        }
        None => {
            let n: i64 = conn.query_row("SELECT COUNT(*) FROM runs", [], |r| r.get(0))?;
            let mut n = n + 1;
            loop {
                let id = format!("R{n}");
                if !conn.prepare_cached("SELECT 1 FROM runs WHERE run_id = ?1")?.exists([&id])? {
                    break id;
                }
                n += 1;
            }
        }
    };
    let now = util::ts(util::now());
    let run = Run {
        run_id,
        goal: p.goal,
        status: RunStatus::Active,
        created_by,
        auto_retry: p.auto_retry.unwrap_or(0),
        created_at: now.clone(),
        updated_at: now.clone(),
    };
    conn.prepare_cached(
        "INSERT INTO runs (run_id, goal, status, created_by, auto_retry, created_at, updated_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)",
    )?
    .execute(rusqlite::params![run.run_id, run.goal, run.status.as_str(), run.created_by, run.auto_retry, now])?;
    let payload = json!({"goal": run.goal, "auto_retry": run.auto_retry});
    let id = run_event(ctx, EventType::RunCreated, &run, &run.created_by, &run.goal, &payload, &now)?;
    Ok(RunView { run, tasks: vec![], event_id: id })
}

pub fn list_runs(conn: &Connection) -> Result<RunsResult> {
    let runs = conn
        .prepare_cached(&format!("SELECT {RUN_COLUMNS} FROM runs ORDER BY created_at, run_id"))?
        .query_map([], run_from_row)?
        .collect::<Result<_, _>>()?;
    Ok(RunsResult { runs })
}

fn open_run(conn: &Connection, run_id: &str) -> Result<Run> {
    let run = load_run(conn, run_id)?;
    if matches!(run.status, RunStatus::Cancelled) {
        return Err(Error::app(ErrorCode::InvalidTransition, format!("run '{run_id}' is cancelled")));
    }
    Ok(run)
}

/// Are all of these tasks done?
pub(super) fn all_done(conn: &Connection, run_id: &str, deps: &[String]) -> Result<bool> {
    for d in deps {
        let status: Option<String> = conn
            .prepare_cached("SELECT status FROM tasks WHERE run_id = ?1 AND task_id = ?2")?
            .query_row([run_id, d], |r| r.get(0))
            .optional()?;
        if status.as_deref() != Some(TaskStatus::Done.as_str()) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// `orch.taskAdd`.
pub fn add_task(ctx: &mut WriteCtx<'_>, p: TaskAddParams) -> Result<TaskView> {
    let conn = ctx.conn;
    check_ref_id("task id", &p.task_id)?;
    inbox::check_text("title", &p.title)?;
    if let Some(a) = &p.assign_to {
        check_agent("assign_to", a)?;
    }
    let run = open_run(conn, &p.run_id)?;
    let exists = conn
        .prepare_cached("SELECT 1 FROM tasks WHERE run_id = ?1 AND task_id = ?2")?
        .exists([&p.run_id, &p.task_id])?;
    if exists {
        return Err(Error::invalid(format!("task '{}' already exists in run '{}'", p.task_id, p.run_id)));
    }
    let mut deps: Vec<String> = p.depends_on.iter().map(|d| d.trim().to_string()).filter(|d| !d.is_empty()).collect();
    deps.sort();
    deps.dedup();
    for d in &deps {
        if *d == p.task_id {
            return Err(Error::invalid(format!("task '{d}' cannot depend on itself")));
        }
        let found =
            conn.prepare_cached("SELECT 1 FROM tasks WHERE run_id = ?1 AND task_id = ?2")?.exists([&p.run_id, d])?;
        if !found {
            return Err(Error::not_found(format!("dependency '{d}' not found in run '{}'", p.run_id)));
        }
    }
    let max_attempts = p.max_attempts.unwrap_or(DEFAULT_MAX_ATTEMPTS);
    if max_attempts == 0 {
        return Err(Error::invalid("max_attempts must be at least 1"));
    }
    let now = util::ts(util::now());
    let status = if all_done(conn, &p.run_id, &deps)? { TaskStatus::Ready } else { TaskStatus::Pending };
    let priority = p.priority.unwrap_or(Priority::Normal);
    let task = Task {
        run_id: p.run_id.clone(),
        task_id: p.task_id.clone(),
        title: p.title,
        body: p.body.unwrap_or_default(),
        acceptance: p.acceptance.unwrap_or_default(),
        priority,
        assign_to: p.assign_to,
        role: p.role,
        kind: p.kind.unwrap_or(TaskKind::Code),
        max_attempts,
        status,
        attempt: 0,
        depends_on: deps.clone(),
        created_at: now.clone(),
        updated_at: now.clone(),
    };
    conn.prepare_cached(
        "INSERT INTO tasks (run_id, task_id, title, body, acceptance, priority, prio_rank, assign_to, role, kind, \
         max_attempts, status, attempt, created_at, updated_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, 0, ?13, ?13)",
    )?
    .execute(rusqlite::params![
        task.run_id,
        task.task_id,
        task.title,
        task.body,
        task.acceptance,
        task.priority.as_str(),
        prio_rank(task.priority),
        task.assign_to,
        task.role,
        task.kind.as_str(),
        task.max_attempts,
        task.status.as_str(),
        now,
    ])?;
    for d in &deps {
        conn.prepare_cached("INSERT INTO task_deps (run_id, task_id, depends_on) VALUES (?1, ?2, ?3)")?.execute([
            &task.run_id,
            &task.task_id,
            d,
        ])?;
    }
    let actor = run.created_by.clone();
    let payload = json!({"depends_on": deps, "kind": task.kind, "priority": task.priority});
    task_event(ctx, EventType::TaskAdded, &task, None, &actor, &task.title, &payload, &now)?;
    if task.status == TaskStatus::Ready {
        task_event(ctx, EventType::TaskReady, &task, None, &actor, &task.title, &json!({}), &now)?;
    }
    // A done run that gets new work is active again (a failed one stays failed).
    super::reconcile::refresh_run(ctx, &task.run_id, &actor, &now)?;
    task_view(ctx.conn, &task.run_id, &task.task_id)
}

pub fn list_tasks(conn: &Connection, p: &TaskListParams) -> Result<Vec<Task>> {
    load_run(conn, &p.run_id)?;
    let mut tasks = run_tasks(conn, &p.run_id)?;
    if !p.statuses.is_empty() {
        tasks.retain(|t| p.statuses.contains(&t.status));
    }
    if let Some(limit) = p.limit {
        tasks.truncate(check_limit(Some(limit), DEFAULT_LIMIT)? as usize);
    }
    Ok(tasks)
}

/// `orch.ready`: ready tasks, highest priority first, then oldest (served by the
/// `(run_id, status, prio_rank DESC)` index, whose rowid order is creation order).
pub fn ready(conn: &Connection, p: &TaskListParams) -> Result<Vec<Task>> {
    load_run(conn, &p.run_id)?;
    let limit = check_limit(p.limit, DEFAULT_LIMIT)?;
    let sql = format!(
        "SELECT {TASK_COLUMNS} FROM tasks t WHERE t.run_id = ?1 AND t.status = 'ready' \
         ORDER BY t.prio_rank DESC, t.rowid LIMIT {limit}"
    );
    let mut tasks: Vec<Task> = conn
        .prepare_cached(&sql)?
        .query_map(params_from_iter([&p.run_id]), task_from_row)?
        .collect::<Result<_, _>>()?;
    for t in &mut tasks {
        t.depends_on = load_deps(conn, &t.run_id, &t.task_id)?;
    }
    Ok(tasks)
}

/// Would `task_id → on` close a cycle? True when `task_id` is reachable from `on`.
fn reaches(conn: &Connection, run_id: &str, from: &str, target: &str) -> Result<Option<Vec<String>>> {
    let mut stack: Vec<Vec<String>> = vec![vec![from.to_string()]];
    let mut seen: HashSet<String> = HashSet::new();
    while let Some(path) = stack.pop() {
        let last = path.last().unwrap().clone();
        if last == target {
            return Ok(Some(path));
        }
        if !seen.insert(last.clone()) {
            continue;
        }
        for next in load_deps(conn, run_id, &last)? {
            let mut p = path.clone();
            p.push(next);
            stack.push(p);
        }
    }
    Ok(None)
}

fn editable(task: &Task) -> Result<()> {
    if !matches!(task.status, TaskStatus::Pending | TaskStatus::Ready) {
        return Err(Error::app(
            ErrorCode::InvalidTransition,
            format!("task '{}' is {}; dependencies can change only before dispatch", task.task_id, task.status),
        ));
    }
    Ok(())
}

/// Re-derive pending/ready for a task that has not been dispatched; appends `task.ready`
/// when it becomes ready.
fn refresh_readiness(ctx: &mut WriteCtx<'_>, task: &mut Task, actor: &str, now: &str) -> Result<()> {
    let ready = all_done(ctx.conn, &task.run_id, &task.depends_on)?;
    let want = if ready { TaskStatus::Ready } else { TaskStatus::Pending };
    if task.status != want {
        set_task_status(ctx.conn, task, want, now)?;
        if want == TaskStatus::Ready {
            task_event(ctx, EventType::TaskReady, task, None, actor, &task.title.clone(), &json!({}), now)?;
        }
    }
    Ok(())
}

/// `orch.depAdd` / `orch.depRemove`.
pub fn change_dep(ctx: &mut WriteCtx<'_>, p: DepParams, add: bool) -> Result<TaskView> {
    let conn = ctx.conn;
    let run = open_run(conn, &p.run_id)?;
    let mut task = load_task(conn, &p.run_id, &p.task_id)?;
    load_task(conn, &p.run_id, &p.on)?;
    editable(&task)?;
    if add {
        if p.on == p.task_id {
            return Err(Error::invalid(format!("task '{}' cannot depend on itself", p.task_id)));
        }
        if let Some(path) = reaches(conn, &p.run_id, &p.on, &p.task_id)? {
            return Err(Error::invalid(format!(
                "'{}' depending on '{}' would make a cycle: {} -> {}",
                p.task_id,
                p.on,
                p.task_id,
                path.join(" -> ")
            )));
        }
        conn.prepare_cached("INSERT OR IGNORE INTO task_deps (run_id, task_id, depends_on) VALUES (?1, ?2, ?3)")?
            .execute([&p.run_id, &p.task_id, &p.on])?;
    } else {
        let n = conn
            .prepare_cached("DELETE FROM task_deps WHERE run_id = ?1 AND task_id = ?2 AND depends_on = ?3")?
            .execute([&p.run_id, &p.task_id, &p.on])?;
        if n == 0 {
            return Err(Error::not_found(format!("task '{}' does not depend on '{}'", p.task_id, p.on)));
        }
    }
    task.depends_on = load_deps(conn, &p.run_id, &p.task_id)?;
    let now = util::ts(util::now());
    let summary = format!("{} {} {}", p.task_id, if add { "now depends on" } else { "no longer depends on" }, p.on);
    refresh_readiness(ctx, &mut task, &run.created_by, &now)?;
    let payload = json!({"depends_on": task.depends_on, "added": add, "on": p.on});
    task_event(ctx, EventType::TaskDepsChanged, &task, None, &run.created_by, &summary, &payload, &now)?;
    task_view(ctx.conn, &p.run_id, &p.task_id)
}

/// `orch.cancel`: one task, or every unfinished task and the run. Live attempts have their
/// threads cancelled; reconcile then marks those tasks cancelled.
pub fn cancel(ctx: &mut WriteCtx<'_>, p: CancelTaskParams) -> Result<RunView> {
    inbox::check_text("reason", &p.reason)?;
    let mut run = open_run(ctx.conn, &p.run_id)?;
    let now = util::ts(util::now());
    if p.task_id.is_none() {
        // Mark the run first, so cancelling its last live task cannot make it look done.
        set_run_status(ctx.conn, &mut run, RunStatus::Cancelled, &now)?;
        super::council::cancel_open(ctx, &run, &p.reason)?;
    }
    let targets: Vec<Task> = match &p.task_id {
        Some(t) => {
            let task = load_task(ctx.conn, &p.run_id, t)?;
            if task.status.is_terminal() {
                return Err(Error::app(ErrorCode::InvalidTransition, format!("task '{t}' is already {}", task.status)));
            }
            vec![task]
        }
        None => run_tasks(ctx.conn, &p.run_id)?.into_iter().filter(|t| !t.status.is_terminal()).collect(),
    };
    for mut task in targets {
        match current_attempt(ctx.conn, &task)? {
            Some(a) if a.status == AttemptStatus::Live => {
                let cancel = CancelParams {
                    agent: run.created_by.clone(),
                    thread_id: a.thread_id.clone(),
                    reason: p.reason.clone(),
                    artifacts: vec![],
                };
                // Reconcile (inside) marks the attempt and the task cancelled.
                inbox::write::cancel(ctx, cancel)?;
            }
            _ => {
                set_task_status(ctx.conn, &mut task, TaskStatus::Cancelled, &now)?;
                let payload = json!({"reason": p.reason});
                task_event(ctx, EventType::TaskCancelled, &task, None, &run.created_by, &p.reason, &payload, &now)?;
            }
        }
    }
    if p.task_id.is_none() {
        run_event(ctx, EventType::RunCancelled, &run, &run.created_by.clone(), &p.reason, &json!({}), &now)?;
    } else {
        super::reconcile::refresh_run(ctx, &p.run_id, &run.created_by, &now)?;
    }
    view(ctx.conn, &p.run_id, 0)
}
