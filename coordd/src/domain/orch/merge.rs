//! Stacked tasks: every run that has code tasks gets an integration branch
//! (`orch/<run>/integration`); a code task that finishes with a branch is merged there
//! (`orch.merge`, or automatically for a run with `auto_merge`), and the tasks that
//! depend on it become ready only once it is merged, so they branch from a tree that holds
//! its work. A merge that conflicts opens a resolution task (a code task, ready at once,
//! for the same worker) and records `task.merge_conflict`, which `orch wait` returns; once
//! that task is merged, the conflicted task counts as merged too.
//!
//! The git work happens in `services::merge`, off the writer; these rules decide what to
//! merge, and record what happened.

use coord_proto::ErrorCode;
use coord_proto::types::*;
use serde_json::json;

use super::model::*;
use crate::error::{Error, Result};
use crate::store::Tx;
use crate::time::Ts;

/// A code task just finished done: if its attempt has a branch and its run an integration
/// branch, its merge is pending. Returns whether it is.
pub fn on_done(tx: &mut dyn Tx, task: &mut Task, attempt: &Attempt) -> Result<bool> {
    if attempt.branch.is_none() || load_run(tx, &task.run_id)?.integration_branch.is_none() {
        return Ok(false);
    }
    task.merge_state = Some(MergeState::Pending);
    task.merge_commit = None;
    tx.merges_mut().task_set_merge(task)?;
    Ok(true)
}

/// Record the run's integration branch (its first code dispatch made it).
pub fn set_integration(
    tx: &mut dyn Tx,
    run_id: &str,
    repo: &str,
    (base_branch, base_rev, branch): (Option<String>, String, String),
) -> Result<()> {
    let mut run = load_run(tx, run_id)?;
    if run.integration_branch.is_some() {
        return Ok(());
    }
    run.repo = Some(repo.to_string());
    run.base_branch = base_branch;
    run.base_rev = Some(base_rev);
    run.integration_branch = Some(branch);
    tx.merges_mut().run_set_integration(&run)
}

/// One task to merge, as read before the git work.
#[derive(Debug, Clone)]
pub struct Job {
    pub task_id: String,
    pub title: String,
    pub repo: String,
    /// The task's branch (its current attempt's).
    pub branch: String,
    pub integration_branch: String,
    pub worktree: Option<String>,
    pub worker: String,
    /// For a resolution task: the branch of the task whose conflict it resolves.
    pub resolves_branch: Option<String>,
}

fn job(tx: &dyn Tx, run: &Run, task: &Task) -> Result<Job> {
    let (Some(repo), Some(integration)) = (&run.repo, &run.integration_branch) else {
        return Err(Error::invalid(format!(
            "run '{}' has no integration branch yet: it is made by the run's first code dispatch",
            run.run_id
        )));
    };
    let attempt = current_attempt(tx, task)?.filter(|a| a.branch.is_some()).ok_or_else(|| {
        Error::app(ErrorCode::InvalidTransition, format!("task '{}' has no branch to merge", task.task_id))
    })?;
    let resolves_branch = match &task.resolves {
        Some(orig) => match tx.tasks().task(&run.run_id, orig)? {
            Some(o) => current_attempt(tx, &o)?.and_then(|a| a.branch),
            None => None,
        },
        None => None,
    };
    Ok(Job {
        task_id: task.task_id.clone(),
        title: task.title.clone(),
        repo: repo.clone(),
        branch: attempt.branch.clone().unwrap_or_default(),
        integration_branch: integration.clone(),
        worktree: attempt.worktree_path.clone(),
        worker: attempt.worker,
        resolves_branch,
    })
}

/// `orch.merge`: what to merge: the named task (done, merge pending or conflicted), or
/// every task whose merge is pending, in creation order.
pub fn jobs(tx: &dyn Tx, p: &MergeParams) -> Result<Vec<Job>> {
    let run = load_run(tx, &p.run_id)?;
    match &p.task_id {
        Some(t) => {
            let task = load_task(tx, &p.run_id, t)?;
            match (task.status, task.merge_state) {
                (TaskStatus::Done, Some(MergeState::Pending | MergeState::Conflict)) => Ok(vec![job(tx, &run, &task)?]),
                (TaskStatus::Done, Some(MergeState::Merged)) => Err(Error::app(
                    ErrorCode::InvalidTransition,
                    format!("task '{t}' is merged already ({})", task.merge_commit.unwrap_or_default()),
                )),
                (TaskStatus::Done, None) => {
                    Err(Error::app(ErrorCode::InvalidTransition, format!("task '{t}' has no branch to merge")))
                }
                (s, _) => Err(Error::app(
                    ErrorCode::InvalidTransition,
                    format!("task '{t}' is {s}: only done tasks are merged"),
                )),
            }
        }
        None => tx
            .tasks()
            .run_tasks(&p.run_id)?
            .iter()
            .filter(|t| t.status == TaskStatus::Done && t.merge_state == Some(MergeState::Pending))
            .map(|t| job(tx, &run, t))
            .collect(),
    }
}

/// Mark a task merged at `commit`, with its event, and let its dependents start.
fn mark_merged(tx: &mut dyn Tx, now: Ts, task: &mut Task, commit: &str, payload: serde_json::Value) -> Result<i64> {
    task.merge_state = Some(MergeState::Merged);
    task.merge_commit = Some(commit.to_string());
    tx.merges_mut().task_set_merge(task)?;
    let actor = load_run(tx, &task.run_id)?.created_by;
    let summary = format!("{} merged into the integration branch", task.task_id);
    let id = task_event(tx, EventType::TaskMerged, task, None, (&actor, &summary, &payload), now)?;
    release_dependents(tx, task, &actor, now)?;
    Ok(id)
}

/// The merge of `job` succeeded. A resolution task's merge also settles the task it
/// resolved (`contains`: whether that task's branch is in the integration branch now).
pub fn record_merged(
    tx: &mut dyn Tx,
    now: Ts,
    run_id: &str,
    out: &MergeOutcome,
    contains: Option<bool>,
) -> Result<i64> {
    super::queue::settle(tx, now, run_id, &out.task_id, out)?;
    let mut task = load_task(tx, run_id, &out.task_id)?;
    let payload = serde_json::to_value(out).unwrap_or_default();
    let mut id = mark_merged(tx, now, &mut task, &out.commit, payload)?;
    if let Some(orig) = task.resolves.clone() {
        let mut o = load_task(tx, run_id, &orig)?;
        if o.merge_state == Some(MergeState::Conflict) {
            let payload = json!({"resolved_by": task.task_id, "branch_in_integration": contains.unwrap_or(false)});
            id = mark_merged(tx, now, &mut o, &out.commit, payload)?;
        }
    }
    let actor = load_run(tx, run_id)?.created_by;
    refresh_run(tx, run_id, &actor, now)?;
    Ok(id)
}

/// The merge of `job` conflicted: the task's merge is in conflict, and a resolution task
/// is ready for its worker (an open one is reused). Returns the resolution task's id and
/// the conflict's event.
pub fn record_conflict(tx: &mut dyn Tx, now: Ts, run_id: &str, job: &Job, out: &MergeOutcome) -> Result<(String, i64)> {
    let run = load_run(tx, run_id)?;
    super::queue::settle(tx, now, run_id, &job.task_id, out)?;
    let mut task = load_task(tx, run_id, &job.task_id)?;
    task.merge_state = Some(MergeState::Conflict);
    tx.merges_mut().task_set_merge(&task)?;
    let tasks = tx.tasks().run_tasks(run_id)?;
    let open = tasks.iter().find(|t| t.resolves.as_deref() == Some(&job.task_id) && !t.status.is_terminal());
    let resolution = match open {
        Some(t) => t.task_id.clone(),
        None => open_resolution(tx, now, &run, &task, job, out, &tasks)?,
    };
    let mut payload = serde_json::to_value(out).unwrap_or_default();
    payload["resolution_task"] = json!(resolution);
    let summary = format!(
        "{} conflicts with the integration branch in {} file(s); {resolution} resolves it",
        task.task_id,
        out.conflicts.len()
    );
    let id = task_event(tx, EventType::TaskMergeConflict, &task, None, (&run.created_by, &summary, &payload), now)?;
    Ok((resolution, id))
}

fn open_resolution(
    tx: &mut dyn Tx,
    now: Ts,
    run: &Run,
    task: &Task,
    job: &Job,
    out: &MergeOutcome,
    tasks: &[Task],
) -> Result<String> {
    let base = format!("{}-merge", task.task_id);
    let id = (1..)
        .map(|n| if n == 1 { base.clone() } else { format!("{base}{n}") })
        .find(|id| !tasks.iter().any(|t| &t.task_id == id))
        .unwrap_or(base);
    check_ref_id("task id", &id)?;
    let files = out.conflicts.iter().map(|f| format!("- {f}")).collect::<Vec<_>>().join("\n");
    let body = format!(
        "Merging task {t} (branch {b}) into {i} conflicts in:\n{files}\n\n\
         Your worktree starts from {i}. Run `git merge {b}`, resolve the conflicts, commit, \
         and finish this task: once it is merged, {t} counts as merged too.",
        t = task.task_id,
        b = job.branch,
        i = job.integration_branch
    );
    let resolution = Task {
        run_id: run.run_id.clone(),
        task_id: id.clone(),
        title: format!("Resolve the merge conflict of {}: {}", task.task_id, task.title),
        body,
        acceptance: format!("{} merges cleanly into {}", job.branch, job.integration_branch),
        priority: Priority::High,
        assign_to: Some(job.worker.clone()),
        role: task.role.clone(),
        kind: TaskKind::Code,
        max_attempts: task.max_attempts.max(1),
        status: TaskStatus::Ready,
        attempt: 0,
        depends_on: vec![],
        created_at: now.to_string(),
        updated_at: now.to_string(),
        merge_state: None,
        merge_commit: None,
        resolves: Some(task.task_id.clone()),
        verify: task.verify.clone(),
    };
    tx.tasks_mut().task_insert(&resolution)?;
    let payload = json!({"resolves": task.task_id, "kind": resolution.kind, "priority": resolution.priority});
    task_event(tx, EventType::TaskAdded, &resolution, None, (&run.created_by, &resolution.title, &payload), now)?;
    task_event(tx, EventType::TaskReady, &resolution, None, (&run.created_by, &resolution.title, &json!({})), now)?;
    refresh_run(tx, &run.run_id, &run.created_by, now)?;
    Ok(id)
}

/// `orch.runFinish`, before the git work: the run and what stands in the way. Live tasks
/// refuse it; the merge target defaults to the run's base branch.
pub fn finish_plan(tx: &dyn Tx, p: &RunFinishParams) -> Result<(Run, String)> {
    let run = load_run(tx, &p.run_id)?;
    if run.status == RunStatus::Cancelled {
        return Err(Error::app(ErrorCode::InvalidTransition, format!("run '{}' is cancelled", run.run_id)));
    }
    if run.integration_branch.is_none() {
        return Err(Error::invalid(format!(
            "run '{}' has no integration branch: none of its code tasks was dispatched with a worktree",
            run.run_id
        )));
    }
    let live: Vec<String> =
        tx.tasks().run_tasks(&run.run_id)?.into_iter().filter(|t| t.status.is_live()).map(|t| t.task_id).collect();
    if !live.is_empty() {
        return Err(Error::app(
            ErrorCode::InvalidTransition,
            format!("task(s) {} still running: wait for them, or cancel them, first", live.join(", ")),
        ));
    }
    let into =
        p.into.clone().or_else(|| run.base_branch.clone()).ok_or_else(|| {
            Error::invalid("the run started from a detached HEAD: name the branch to merge into (into)")
        })?;
    Ok((run, into))
}

/// The run's integration branch was merged into `into`.
pub fn record_finished(tx: &mut dyn Tx, now: Ts, run_id: &str, into: &str, commit: &str, ff: bool) -> Result<i64> {
    let run = load_run(tx, run_id)?;
    let summary = format!("run {run_id} merged into {into}");
    let payload = json!({"into": into, "commit": commit, "fast_forward": ff,
                         "integration_branch": run.integration_branch});
    run_event(tx, EventType::RunMerged, &run, (&run.created_by, &summary, &payload), now)
}

#[cfg(test)]
#[path = "merge_tests.rs"]
mod tests;
