//! Runs, tasks and dependencies: creation, listing, the ready queue, dependency edits
//! (cycles refused) and cancellation. Every change records its orch event.

use std::collections::HashSet;

use coord_proto::types::*;
use coord_proto::{DEFAULT_LIMIT, ErrorCode};
use serde_json::json;

use super::model::*;
use crate::bound;
use crate::domain::check;
use crate::error::{Error, Result};
use crate::store::Tx;
use crate::time::Ts;

/// Default attempts per task.
pub const DEFAULT_MAX_ATTEMPTS: u32 = 3;

/// Every run, oldest first.
pub fn runs(tx: &dyn Tx) -> Result<Vec<Run>> {
    tx.runs().runs_list()
}

/// A run's tasks in creation order.
pub fn tasks_of(tx: &dyn Tx, run_id: &str) -> Result<Vec<Task>> {
    tx.tasks().run_tasks(run_id)
}

pub fn view(tx: &dyn Tx, run_id: &str, event_id: i64) -> Result<RunView> {
    let run = load_run(tx, run_id)?;
    let read = tx.tasks().tasks_page(run_id, None, &[], u32::MAX, bound::items_budget())?;
    let page = bound::page_read(read, |t: &Task| t.task_id.clone());
    let queue = super::queue::open(tx, run_id)?;
    Ok(RunView { run, tasks: page.items, event_id, truncated: page.truncated, next_after: page.next_after, queue })
}

/// A task with its dependents and its first attempts (what fits in the reply).
pub fn task_view(tx: &dyn Tx, run_id: &str, task_id: &str) -> Result<TaskView> {
    show_task(tx, &TaskShowParams { run_id: run_id.into(), task_id: task_id.into(), after_attempt: None })
}

/// `orch.taskShow`: the task and its dependents whole, its attempts after `after_attempt`
/// within what is left of the reply's bound.
pub fn show_task(tx: &dyn Tx, p: &TaskShowParams) -> Result<TaskView> {
    let task = load_task(tx, &p.run_id, &p.task_id)?;
    let dependents = tx.tasks().task_dependents(&p.run_id, &p.task_id)?;
    let mut attempts = tx.attempts().attempts_of(&p.run_id, &p.task_id)?;
    if let Some(after) = p.after_attempt {
        attempts.retain(|a| a.attempt > after);
    }
    let room = bound::budget_beside(&(&task, &dependents));
    let page = bound::page_within(attempts, room, |a: &Attempt| a.attempt);
    Ok(TaskView { task, dependents, attempts: page.items, truncated: page.truncated, next_after: page.next_after })
}

/// The creator of a run created without `created_by` (on a connection not authenticated as
/// one agent).
pub const DEFAULT_CREATOR: &str = "leader";

/// `orch.runCreate`.
pub fn create_run(tx: &mut dyn Tx, now: Ts, p: RunCreateParams) -> Result<RunView> {
    check::text("goal", &p.goal)?;
    let created_by = p.created_by.unwrap_or_else(|| DEFAULT_CREATOR.into());
    check::agent("created_by", &created_by)?;
    let run_id = match p.run_id {
        Some(id) => {
            check_ref_id("run id", &id)?;
            if tx.runs().run(&id)?.is_some() {
                return Err(Error::invalid(format!("run '{id}' already exists")));
            }
            id
        }
        None => {
            let mut n = tx.runs().runs_count()? + 1;
            loop {
                let id = format!("R{n}");
                if tx.runs().run(&id)?.is_none() {
                    break id;
                }
                n += 1;
            }
        }
    };
    let run = Run {
        run_id,
        goal: p.goal,
        status: RunStatus::Active,
        created_by,
        auto_retry: p.auto_retry.unwrap_or(0),
        created_at: now.to_string(),
        updated_at: now.to_string(),
        auto_merge: p.auto_merge,
        repo: None,
        base_branch: None,
        base_rev: None,
        integration_branch: None,
        verify: super::queue::command(p.verify)?,
        require_approval: p.require_approval,
        merge_retries: p.merge_retries.unwrap_or(super::queue::DEFAULT_MERGE_RETRIES),
    };
    tx.runs_mut().run_insert(&run)?;
    let payload = json!({"goal": run.goal, "auto_retry": run.auto_retry, "auto_merge": run.auto_merge,
                         "verify": run.verify, "require_approval": run.require_approval});
    let id = run_event(tx, EventType::RunCreated, &run, (&run.created_by, &run.goal, &payload), now)?;
    Ok(RunView { run, tasks: vec![], event_id: id, truncated: false, next_after: None, queue: vec![] })
}

/// `orch.taskAdd`.
pub fn add_task(tx: &mut dyn Tx, now: Ts, p: TaskAddParams) -> Result<TaskView> {
    check_ref_id("task id", &p.task_id)?;
    check::text("title", &p.title)?;
    if let Some(a) = &p.assign_to {
        check::agent("assign_to", a)?;
    }
    let run = open_run(tx, &p.run_id)?;
    if tx.tasks().task(&p.run_id, &p.task_id)?.is_some() {
        return Err(Error::invalid(format!("task '{}' already exists in run '{}'", p.task_id, p.run_id)));
    }
    let mut deps: Vec<String> = p.depends_on.iter().map(|d| d.trim().to_string()).filter(|d| !d.is_empty()).collect();
    deps.sort();
    deps.dedup();
    for d in &deps {
        if *d == p.task_id {
            return Err(Error::invalid(format!("task '{d}' cannot depend on itself")));
        }
        if tx.tasks().task(&p.run_id, d)?.is_none() {
            return Err(Error::not_found(format!("dependency '{d}' not found in run '{}'", p.run_id)));
        }
    }
    let max_attempts = p.max_attempts.unwrap_or(DEFAULT_MAX_ATTEMPTS);
    if max_attempts == 0 {
        return Err(Error::invalid("max_attempts must be at least 1"));
    }
    let status = if all_done(tx, &p.run_id, &deps)? { TaskStatus::Ready } else { TaskStatus::Pending };
    let task = Task {
        run_id: p.run_id,
        task_id: p.task_id,
        title: p.title,
        body: p.body.unwrap_or_default(),
        acceptance: p.acceptance.unwrap_or_default(),
        priority: p.priority.unwrap_or(Priority::Normal),
        assign_to: p.assign_to,
        role: p.role,
        kind: p.kind.unwrap_or(TaskKind::Code),
        max_attempts,
        status,
        attempt: 0,
        depends_on: deps,
        created_at: now.to_string(),
        updated_at: now.to_string(),
        merge_state: None,
        merge_commit: None,
        resolves: None,
        verify: super::queue::task_command(p.verify)?,
    };
    tx.tasks_mut().task_insert(&task)?;
    let actor = run.created_by.as_str();
    let payload = json!({"depends_on": task.depends_on, "kind": task.kind, "priority": task.priority});
    task_event(tx, EventType::TaskAdded, &task, None, (actor, &task.title, &payload), now)?;
    if task.status == TaskStatus::Ready {
        task_event(tx, EventType::TaskReady, &task, None, (actor, &task.title, &json!({})), now)?;
    }
    // A done run that gets new work is active again (a failed one stays failed).
    refresh_run(tx, &task.run_id, actor, now)?;
    task_view(tx, &task.run_id, &task.task_id)
}

/// `orch.taskList`: a run's tasks in creation order, optionally filtered.
pub fn list_tasks(tx: &dyn Tx, p: &TaskListParams) -> Result<TasksResult> {
    load_run(tx, &p.run_id)?;
    let limit = match p.limit {
        Some(limit) => check::limit(Some(limit), DEFAULT_LIMIT)?,
        None => u32::MAX,
    };
    if let Some(after) = &p.after
        && tx.tasks().task(&p.run_id, after)?.is_none()
    {
        return Err(bound::gone(after));
    }
    let read = tx.tasks().tasks_page(&p.run_id, p.after.as_deref(), &p.statuses, limit, bound::items_budget())?;
    let page = bound::page_read(read, |t: &Task| t.task_id.clone());
    Ok(TasksResult { tasks: page.items, truncated: page.truncated, next_after: page.next_after })
}

/// `orch.runList`: runs, oldest first.
pub fn list_runs(tx: &dyn Tx, p: &RunListParams) -> Result<RunsResult> {
    let runs = bound::after_key(tx.runs().runs_list()?, p.after.as_deref(), |r| &r.run_id)?;
    let page = bound::page(runs, |r: &Run| r.run_id.clone());
    Ok(RunsResult { runs: page.items, truncated: page.truncated, next_after: page.next_after })
}

/// `orch.ready`: ready tasks, highest priority first, then oldest. `after` continues a
/// page: ready tasks are few and read whole, so the cursor is applied to that list.
pub fn ready(tx: &dyn Tx, p: &TaskListParams) -> Result<TasksResult> {
    load_run(tx, &p.run_id)?;
    let limit = check::limit(p.limit, DEFAULT_LIMIT)?;
    let tasks = match &p.after {
        None => tx.tasks().tasks_ready(&p.run_id, limit)?,
        Some(after) => {
            let all = bound::after_key(tx.tasks().tasks_ready(&p.run_id, coord_proto::MAX_LIMIT)?, Some(after), |t| {
                &t.task_id
            })?;
            all.into_iter().take(limit as usize).collect()
        }
    };
    Ok(tasks_page(tasks))
}

/// A list of tasks bounded by bytes (`orch.taskList`, `orch.ready`, `orch.reconcile`).
pub fn tasks_page(tasks: Vec<Task>) -> TasksResult {
    let page = bound::page(tasks, |t: &Task| t.task_id.clone());
    TasksResult { tasks: page.items, truncated: page.truncated, next_after: page.next_after }
}

/// Would `task → on` close a cycle? The path from `from` to `target`, when there is one.
fn reaches(tx: &dyn Tx, run_id: &str, from: &str, target: &str) -> Result<Option<Vec<String>>> {
    let mut stack: Vec<Vec<String>> = vec![vec![from.to_string()]];
    let mut seen: HashSet<String> = HashSet::new();
    while let Some(path) = stack.pop() {
        let last = path.last().cloned().unwrap_or_default();
        if last == target {
            return Ok(Some(path));
        }
        if !seen.insert(last.clone()) {
            continue;
        }
        for next in tx.tasks().task_deps(run_id, &last)? {
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

/// Re-derive pending/ready for a task that has not been dispatched; records `task.ready`
/// when it becomes ready.
pub(super) fn refresh_readiness(tx: &mut dyn Tx, task: &mut Task, actor: &str, now: Ts) -> Result<()> {
    let want = if all_done(tx, &task.run_id, &task.depends_on)? { TaskStatus::Ready } else { TaskStatus::Pending };
    if task.status != want {
        set_task_status(tx, task, want, now)?;
        if want == TaskStatus::Ready {
            let title = task.title.clone();
            task_event(tx, EventType::TaskReady, task, None, (actor, &title, &json!({})), now)?;
        }
    }
    Ok(())
}

/// Which way a dependency changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DepChange {
    Add,
    Remove,
}

/// `orch.depAdd` and `orch.depRemove`.
pub fn change_dep(tx: &mut dyn Tx, now: Ts, p: DepParams, change: DepChange) -> Result<TaskView> {
    let add = change == DepChange::Add;
    let run = open_run(tx, &p.run_id)?;
    let mut task = load_task(tx, &p.run_id, &p.task_id)?;
    load_task(tx, &p.run_id, &p.on)?;
    editable(&task)?;
    if add {
        if p.on == p.task_id {
            return Err(Error::invalid(format!("task '{}' cannot depend on itself", p.task_id)));
        }
        if let Some(path) = reaches(tx, &p.run_id, &p.on, &p.task_id)? {
            return Err(Error::invalid(format!(
                "'{}' depending on '{}' would make a cycle: {} -> {}",
                p.task_id,
                p.on,
                p.task_id,
                path.join(" -> ")
            )));
        }
        tx.tasks_mut().task_dep_add(&p.run_id, &p.task_id, &p.on)?;
    } else if !tx.tasks_mut().task_dep_remove(&p.run_id, &p.task_id, &p.on)? {
        return Err(Error::not_found(format!("task '{}' does not depend on '{}'", p.task_id, p.on)));
    }
    task.depends_on = tx.tasks().task_deps(&p.run_id, &p.task_id)?;
    let summary = format!("{} {} {}", p.task_id, if add { "now depends on" } else { "no longer depends on" }, p.on);
    refresh_readiness(tx, &mut task, &run.created_by, now)?;
    let payload = json!({"depends_on": task.depends_on, "added": add, "on": p.on});
    task_event(tx, EventType::TaskDepsChanged, &task, None, (&run.created_by, &summary, &payload), now)?;
    task_view(tx, &p.run_id, &p.task_id)
}

/// What `orch.cancel` has to do, decided before anything is cancelled.
pub struct Cancelling {
    pub run: Run,
    pub whole_run: bool,
    pub reason: String,
    /// The tasks to cancel, each with its live attempt's thread if it has one (cancelling
    /// that thread cancels the task through reconcile).
    pub tasks: Vec<(Task, Option<String>)>,
}

/// Start `orch.cancel`: one task, or every unfinished task and the run. Cancelling the
/// whole run marks it cancelled first, so cancelling its last live task cannot make it
/// look done.
pub fn cancel_begin(tx: &mut dyn Tx, now: Ts, p: CancelTaskParams) -> Result<Cancelling> {
    check::text("reason", &p.reason)?;
    let mut run = open_run(tx, &p.run_id)?;
    let tasks = match &p.task_id {
        Some(t) => {
            let task = load_task(tx, &p.run_id, t)?;
            if task.status.is_terminal() {
                return Err(Error::app(ErrorCode::InvalidTransition, format!("task '{t}' is already {}", task.status)));
            }
            vec![task]
        }
        None => {
            set_run_status(tx, &mut run, RunStatus::Cancelled, now)?;
            tx.tasks().run_tasks(&p.run_id)?.into_iter().filter(|t| !t.status.is_terminal()).collect()
        }
    };
    let mut out = Vec::with_capacity(tasks.len());
    for task in tasks {
        let live = current_attempt(tx, &task)?.filter(|a| a.status == AttemptStatus::Live).map(|a| a.thread_id);
        out.push((task, live));
    }
    Ok(Cancelling { run, whole_run: p.task_id.is_none(), reason: p.reason, tasks: out })
}

/// Cancel a task that has no live attempt.
pub fn cancel_task(tx: &mut dyn Tx, now: Ts, c: &Cancelling, mut task: Task) -> Result<()> {
    set_task_status(tx, &mut task, TaskStatus::Cancelled, now)?;
    let payload = json!({"reason": c.reason});
    task_event(tx, EventType::TaskCancelled, &task, None, (&c.run.created_by, &c.reason, &payload), now)?;
    Ok(())
}

/// Finish `orch.cancel`: the run's event, or its refreshed status.
pub fn cancel_end(tx: &mut dyn Tx, now: Ts, c: &Cancelling) -> Result<RunView> {
    let actor = c.run.created_by.as_str();
    if c.whole_run {
        super::queue::cancel_run(tx, now, &c.run.run_id)?;
        run_event(tx, EventType::RunCancelled, &c.run, (actor, &c.reason, &json!({})), now)?;
    } else {
        refresh_run(tx, &c.run.run_id, actor, now)?;
    }
    view(tx, &c.run.run_id, 0)
}
