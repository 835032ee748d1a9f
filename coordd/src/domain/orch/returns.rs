//! Failures go back to their owner. When a candidate's verify fails, its merge conflicts
//! (the merge queue), or a reviewer requests changes, nothing lands and the task goes back
//! to the worker of that attempt: a new attempt (mode `returned`) whose worktree continues
//! from the attempt's branch and whose thread's first message carries the failure (the
//! command's last output lines, the conflicting files, the comments with `file:line`
//! anchors). That message is mail to the worker like any other, so a live session can
//! deliver it as a new turn.
//!
//! The queue sends a task back at most `merge_retries` times (the run's setting) and
//! while it has attempts left (`max_attempts`); past that the task fails with the reason
//! (`task.failed`, then `run.failed`), and `orch retry` sends it back with the same
//! feedback ([`carry_over`]). A review's request is the reviewer's decision and only needs
//! an attempt left.

use coord_proto::ErrorCode;
use coord_proto::types::*;
use serde_json::{Value, json};

use super::model::*;
use super::queue::{self, short};
use crate::error::{Error, Result};
use crate::store::Tx;
use crate::store::repos::RetryState;
use crate::time::Ts;

/// Why a task goes back.
#[derive(Debug, Clone, PartialEq)]
pub enum Cause {
    /// The verify command failed on `commit` (`tip` + the branch).
    Verify { verify: String, exit_code: Option<i32>, timed_out: bool, output: String },
    /// Merging the branch into the integration tip conflicts in these files.
    Conflict { tip: String, files: Vec<String> },
    /// A reviewer requested changes.
    Changes { by: String, summary: String, comments: Vec<ReviewComment> },
}

impl Cause {
    fn name(&self) -> &'static str {
        match self {
            Cause::Verify { .. } => "verify_failed",
            Cause::Conflict { .. } => "conflict",
            Cause::Changes { .. } => "changes_requested",
        }
    }

    /// One line for the lead and the event's summary.
    fn reason(&self) -> String {
        match self {
            Cause::Verify { verify, exit_code, timed_out: true, .. } => {
                format!("`{verify}` timed out{}", exit_code.map(|c| format!(" (exit {c})")).unwrap_or_default())
            }
            Cause::Verify { verify, exit_code, .. } => match exit_code {
                Some(c) => format!("`{verify}` failed (exit {c})"),
                None => format!("`{verify}` was killed by a signal"),
            },
            Cause::Conflict { files, .. } => format!("merge conflict in {}", files.join(", ")),
            Cause::Changes { by, summary, .. } => format!("{by} requested changes: {summary}"),
        }
    }
}

/// What a return decided, on a read, before the git work.
#[derive(Debug, Clone)]
pub struct Plan {
    pub run: Run,
    pub task: Task,
    /// The attempt that goes back (the candidate's).
    pub prev: Attempt,
    /// `None`: it goes back (as attempt `task.attempt + 1`); `Some(why)`: it fails instead.
    pub refused: Option<String>,
}

/// May `task_id`'s `attempt` go back to its worker for `cause`?
pub fn plan(tx: &dyn Tx, run_id: &str, task_id: &str, attempt: u32, cause: &Cause) -> Result<Plan> {
    let run = open_run(tx, run_id)?;
    let task = load_task(tx, run_id, task_id)?;
    let waiting = task.status == TaskStatus::Done && task.merge_state == Some(MergeState::Pending);
    if task.attempt != attempt || !waiting {
        return Err(Error::app(
            ErrorCode::InvalidTransition,
            format!(
                "task '{task_id}' is {} at attempt {}: only a done task waiting to merge goes back to its worker",
                task.status, task.attempt
            ),
        ));
    }
    let prev = current_attempt(tx, &task)?
        .ok_or_else(|| Error::Internal(format!("task '{task_id}' is done without an attempt")))?;
    let mut refused = None;
    if task.attempt >= task.max_attempts {
        refused = Some(format!("it has used all {} of its attempts (max_attempts)", task.max_attempts));
    } else if !matches!(cause, Cause::Changes { .. }) {
        let sent = tx.queue().candidates_count(run_id, task_id, &[QueueState::Failed, QueueState::Conflict])?;
        if sent >= run.merge_retries {
            refused = Some(format!("the merge queue sent it back {sent} time(s) already (merge_retries)"));
        }
    }
    if refused.is_some() && matches!(cause, Cause::Changes { .. }) {
        return Err(Error::app(
            ErrorCode::InvalidTransition,
            format!(
                "task '{task_id}' has used all {} of its attempts: raise max_attempts (orch task edit) first",
                task.max_attempts
            ),
        ));
    }
    Ok(Plan { run, task, prev, refused })
}

/// The message the worker gets: what happened, the evidence, and what to do.
pub fn feedback(plan: &Plan, cause: &Cause) -> String {
    let integration = plan.run.integration_branch.clone().unwrap_or_default();
    let branch = plan.prev.branch.clone().unwrap_or_default();
    let next = "Your new worktree continues from your branch";
    match cause {
        Cause::Verify { verify, exit_code, timed_out, output } => {
            let how = match (timed_out, exit_code) {
                (true, _) => "it timed out".to_string(),
                (false, Some(c)) => format!("it failed with exit status {c}"),
                (false, None) => "it was killed by a signal".to_string(),
            };
            let mut lines: String = output.lines().map(|l| format!("    {l}\n")).collect();
            if lines.trim().is_empty() {
                lines = "    (no output)\n".into();
            }
            format!(
                "The merge queue ran the verify command on the merge of your branch {branch} into {integration}, \
                 and {how}. Nothing was merged.\n\n    $ {verify}\n{lines}\n{next}: fix it, commit, and finish \
                 with `inbox done`."
            )
        }
        Cause::Conflict { tip, files } => {
            let list: String = files.iter().map(|f| format!("- {f}\n")).collect();
            format!(
                "Merging your branch {branch} into {integration} (at {}) conflicts in:\n{list}\nNothing was merged. \
                 {next}: run `git merge {integration}`, resolve the conflicts, commit, and finish with `inbox done`.",
                short(tip)
            )
        }
        Cause::Changes { by, summary, comments } => {
            let list: String = comments.iter().map(|c| format!("- {}\n", anchor_line(c))).collect();
            let list = if list.is_empty() { String::new() } else { format!("\n\n{list}") };
            format!(
                "{by} reviewed your work on {branch} and requested changes: {summary}{list}\n{next}: address them, \
                 commit, and finish with `inbox done`."
            )
        }
    }
}

/// `path:line: body` (`path:line (old)` for a removed line), one comment's anchor.
pub fn anchor_line(c: &ReviewComment) -> String {
    let side = if c.side == "old" { " (old)" } else { "" };
    let body = c.body.lines().collect::<Vec<_>>().join("\n  ");
    format!("{}:{}{side}: {body}", c.path, c.line)
}

/// Record what happened to the candidate, and its event; the task's merge is no longer
/// pending (it goes back, or fails). Runs in the write, before the return's attempt.
pub fn record(tx: &mut dyn Tx, now: Ts, plan: &Plan, cause: &Cause) -> Result<i64> {
    let mut c = queue::load(tx, &plan.run.run_id, &plan.task.task_id, plan.prev.attempt)?;
    let state = match cause {
        Cause::Verify { exit_code, output, .. } => {
            (c.exit_code, c.output) = (*exit_code, Some(queue::tail(output)));
            QueueState::Failed
        }
        Cause::Conflict { tip, files } => {
            (c.tip, c.output) = (Some(tip.clone()), Some(files.join("\n")));
            QueueState::Conflict
        }
        Cause::Changes { .. } => QueueState::ChangesRequested,
    };
    c.state = state;
    c.reason = Some(cause.reason());
    c.updated_at = now.to_string();
    tx.queue_mut().candidate_put(&c)?;
    let mut task = load_task(tx, &plan.run.run_id, &plan.task.task_id)?;
    task.merge_state = None;
    tx.merges_mut().task_set_merge(&task)?;
    let returned = match &plan.refused {
        None => json!({"attempt": plan.task.attempt + 1, "worker": plan.prev.worker}),
        Some(_) => Value::Null,
    };
    let base = json!({"attempt": c.attempt, "returned": returned, "reason": cause.reason()});
    let (event, payload) = match cause {
        Cause::Verify { verify, exit_code, timed_out, .. } => (
            EventType::TaskVerifyFailed,
            merged(
                base,
                json!({"tip": c.tip, "commit": c.commit, "verify": verify, "exit_code": exit_code,
                                "timed_out": timed_out, "output": c.output, "log_path": c.log_path}),
            ),
        ),
        Cause::Conflict { tip, files } => (
            EventType::TaskMergeConflict,
            merged(
                base,
                json!({"task_id": c.task_id, "state": "conflict", "branch": c.branch,
                                "integration_branch": plan.run.integration_branch, "commit": tip,
                                "conflicts": files}),
            ),
        ),
        Cause::Changes { by, comments, .. } => {
            (EventType::TaskChangesRequested, merged(base, json!({"by": by, "comments": comments.len()})))
        }
    };
    let summary = match &plan.refused {
        None => format!("{}: {}; back to {}", task.task_id, cause.reason(), plan.prev.worker),
        Some(why) => format!("{}: {}; not sent back: {why}", task.task_id, cause.reason()),
    };
    task_event(tx, event, &task, Some(&plan.prev), (&plan.run.created_by, &summary, &payload), now)
}

fn merged(mut a: Value, b: Value) -> Value {
    if let (Some(a), Value::Object(b)) = (a.as_object_mut(), b) {
        a.extend(b);
    }
    a
}

/// The task does not go back: it fails, with the reason (`task.failed`, which wakes
/// `orch wait`, then `run.failed`).
pub fn fail(tx: &mut dyn Tx, now: Ts, plan: &Plan, cause: &Cause) -> Result<i64> {
    let mut task = load_task(tx, &plan.run.run_id, &plan.task.task_id)?;
    set_task_status(tx, &mut task, TaskStatus::Failed, now)?;
    let r = tx.tasks().task_retry(&task.run_id, &task.task_id)?;
    tx.tasks_mut().task_set_retry(&task.run_id, &task.task_id, RetryState { pending: false, ..r })?;
    let why = plan.refused.clone().unwrap_or_default();
    let summary = format!("{} failed: {}; {why}", task.task_id, cause.reason());
    let payload = json!({"attempt": plan.prev.attempt, "thread_id": plan.prev.thread_id, "worker": plan.prev.worker,
                         "auto_retry": false, "merge": {"cause": cause.name(), "reason": cause.reason(),
                         "not_sent_back": why}});
    let id = task_event(
        tx,
        EventType::TaskFailed,
        &task,
        Some(&plan.prev),
        (&plan.run.created_by, &summary, &payload),
        now,
    )?;
    refresh_run(tx, &task.run_id, &plan.run.created_by, now)?;
    Ok(id)
}

/// Did the merge queue fail this task (its current attempt's thread is done, but the
/// task is failed)? `orch.reconcile` then leaves it failed.
pub fn failed_by_queue(tx: &dyn Tx, task: &Task) -> Result<bool> {
    if task.status != TaskStatus::Failed {
        return Ok(false);
    }
    let c = tx.queue().candidate(&task.run_id, &task.task_id, task.attempt)?;
    Ok(c.is_some_and(|c| matches!(c.state, QueueState::Failed | QueueState::Conflict)))
}

/// For `orch retry` of a task the queue failed: the feedback its new attempt carries (it
/// then continues from the failed attempt's branch).
pub fn carry_over(tx: &dyn Tx, task: &Task, prev: &Attempt) -> Result<Option<String>> {
    let Some(c) = tx.queue().candidate(&task.run_id, &task.task_id, prev.attempt)? else { return Ok(None) };
    if !matches!(c.state, QueueState::Failed | QueueState::Conflict) || task.status != TaskStatus::Failed {
        return Ok(None);
    }
    let output: String = c.output.unwrap_or_default().lines().map(|l| format!("    {l}\n")).collect();
    Ok(Some(format!(
        "Attempt {} of this task was done, but the merge queue did not merge it: {}.\n\n{output}\nYour new worktree \
         continues from that attempt's branch ({}): fix it (for a conflict, `git merge {}` and resolve), commit, and \
         finish with `inbox done`.",
        prev.attempt,
        c.reason.unwrap_or_default(),
        c.branch,
        prev.base_branch.clone().unwrap_or_default()
    )))
}
