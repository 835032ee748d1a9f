//! Changing a task after it was added: `orch.taskEdit` (which `orch task assign` uses)
//! and `orch.taskRemove`. What the worker was handed (title, body, acceptance, kind) can
//! change only before the first dispatch; who gets it next, its priority, role and attempt
//! limit until it is finished. A task that was ever dispatched is never removed (that would
//! lose its attempts' history): cancel it instead.

use coord_proto::ErrorCode;
use coord_proto::types::*;
use serde_json::{Value, json};

use super::model::*;
use super::plan::{refresh_readiness, task_view};
use crate::domain::check;
use crate::error::{Error, Result};
use crate::store::Tx;
use crate::time::Ts;

/// `orch.taskEdit`.
pub fn edit_task(tx: &mut dyn Tx, now: Ts, p: TaskEditParams) -> Result<TaskView> {
    let run = open_run(tx, &p.run_id)?;
    let mut task = load_task(tx, &p.run_id, &p.task_id)?;
    if task.status.is_terminal() {
        return Err(Error::app(
            ErrorCode::InvalidTransition,
            format!("task '{}' is {}: there is nothing left to edit", task.task_id, task.status),
        ));
    }
    let content = p.title.is_some() || p.body.is_some() || p.acceptance.is_some() || p.kind.is_some();
    if content && task.attempt > 0 {
        return Err(Error::app(
            ErrorCode::InvalidTransition,
            format!(
                "task '{}' was dispatched already (attempt {}): its worker has the text; change only the worker, \
                 priority, role or attempt limit, or cancel it and add a new task",
                task.task_id, task.attempt
            ),
        ));
    }
    let mut changed: Vec<&str> = Vec::new();
    let mut payload = serde_json::Map::new();
    let mut note = |field: &'static str, v: Value| {
        changed.push(field);
        payload.insert(field.to_string(), v);
    };
    if let Some(t) = p.title {
        check::text("title", &t)?;
        note("title", json!(t));
        task.title = t;
    }
    if let Some(b) = p.body {
        note("body", json!(b.len()));
        task.body = b;
    }
    if let Some(a) = p.acceptance {
        note("acceptance", json!(a));
        task.acceptance = a;
    }
    if let Some(k) = p.kind {
        note("kind", json!(k));
        task.kind = k;
    }
    if let Some(pr) = p.priority {
        note("priority", json!(pr));
        task.priority = pr;
    }
    if let Some(w) = p.assign_to {
        check::agent("assign_to", &w)?;
        note("assign_to", json!(w));
        task.assign_to = Some(w);
    }
    if let Some(r) = p.role {
        note("role", json!(r));
        task.role = Some(r);
    }
    if let Some(m) = p.max_attempts {
        if m == 0 || m < task.attempt {
            return Err(Error::invalid(format!(
                "max_attempts must be at least 1 and at least the attempts used ({})",
                task.attempt
            )));
        }
        note("max_attempts", json!(m));
        task.max_attempts = m;
    }
    if changed.is_empty() {
        return Err(Error::invalid("nothing to change: give at least one field"));
    }
    task.updated_at = now.to_string();
    tx.task_update(&task)?;
    let summary = format!("{} edited: {}", task.task_id, changed.join(", "));
    task_event(tx, EventType::TaskEdited, &task, None, (&run.created_by, &summary, &Value::Object(payload)), now)?;
    task_view(tx, &p.run_id, &p.task_id)
}

/// `orch.taskRemove`.
pub fn remove_task(tx: &mut dyn Tx, now: Ts, p: TaskRef) -> Result<TaskRemoveResult> {
    let run = open_run(tx, &p.run_id)?;
    let task = load_task(tx, &p.run_id, &p.task_id)?;
    if task.attempt > 0 || !tx.attempts_of(&p.run_id, &p.task_id)?.is_empty() {
        return Err(Error::app(
            ErrorCode::InvalidTransition,
            format!(
                "task '{}' was dispatched (attempt {}): cancel it instead; removing it would lose its history",
                task.task_id, task.attempt
            ),
        ));
    }
    let dependents = tx.task_dependents(&p.run_id, &p.task_id)?;
    tx.task_delete(&p.run_id, &p.task_id)?;
    let actor = run.created_by.as_str();
    let summary = format!("{} removed from run {}", task.task_id, run.run_id);
    let payload = json!({"title": task.title, "dependents": dependents});
    let event_id = task_event(tx, EventType::TaskRemoved, &task, None, (actor, &summary, &payload), now)?;
    // Its dependents lost a dependency: some may be ready now.
    for d in &dependents {
        let mut dep = load_task(tx, &p.run_id, d)?;
        if matches!(dep.status, TaskStatus::Pending | TaskStatus::Ready) {
            refresh_readiness(tx, &mut dep, actor, now)?;
        }
    }
    refresh_run(tx, &p.run_id, actor, now)?;
    Ok(TaskRemoveResult { run_id: p.run_id, task_id: p.task_id, dependents, event_id })
}
