//! Reviewing a task's diff: comments on lines of an attempt's diff, "Approve" (in a run
//! that requires approval, the candidate may merge) and "Request changes" (the attempt's
//! unsent comments go to the worker as one message with `file:line` anchors: in its live
//! thread, or, for a done task not merged yet, as the task's return, `returns`).

use coord_proto::ErrorCode;
use coord_proto::types::*;
use serde_json::json;

use super::model::*;
use super::queue;
use super::returns::{self, Cause};
use crate::domain::check;
use crate::error::{Error, Result};
use crate::ids;
use crate::store::Tx;
use crate::time::Ts;

/// Longest path a comment may name.
const MAX_PATH: usize = 4096;

/// `orch.reviewComment`, written as `author`.
pub fn comment(tx: &mut dyn Tx, now: Ts, p: ReviewCommentParams, author: &str) -> Result<ReviewComment> {
    load_run(tx, &p.run_id)?;
    let task = load_task(tx, &p.run_id, &p.task_id)?;
    let attempt = p.attempt.unwrap_or(task.attempt);
    let a = tx.attempts().attempt(&p.run_id, &p.task_id, attempt)?.filter(|a| a.branch.is_some());
    if a.is_none() {
        return Err(Error::app(
            ErrorCode::InvalidTransition,
            format!("task '{}' has no branch at attempt {attempt}: there is no diff to comment on", task.task_id),
        ));
    }
    let path = p.path.trim();
    if path.is_empty() || path.len() > MAX_PATH || path.contains('\n') {
        return Err(Error::invalid(format!("path must be a file of the diff, 1-{MAX_PATH} bytes on one line")));
    }
    if p.line == 0 {
        return Err(Error::invalid("line counts from 1"));
    }
    let side = p.side.unwrap_or_else(|| "new".into());
    if side != "new" && side != "old" {
        return Err(Error::invalid(format!("side is 'new' or 'old', not '{side}'")));
    }
    check::text("body", &p.body)?;
    let c = ReviewComment {
        comment_id: ids::new_id("rc"),
        run_id: p.run_id,
        task_id: p.task_id,
        attempt,
        path: path.to_string(),
        line: p.line,
        side,
        body: p.body,
        author: author.to_string(),
        created_at: now.to_string(),
        sent_in: None,
    };
    tx.queue_mut().comment_insert(&c)?;
    let summary = format!("{author} on {}:{}: {}", c.path, c.line, first(&c.body));
    let payload = serde_json::to_value(&c).unwrap_or_default();
    task_event(tx, EventType::TaskCommented, &task, None, (author, &summary, &payload), now)?;
    Ok(c)
}

fn first(text: &str) -> String {
    let line = text.lines().next().unwrap_or("");
    if line.chars().count() > 120 { format!("{}…", line.chars().take(119).collect::<String>()) } else { line.into() }
}

/// A done task waiting to merge, and its candidate.
fn waiting(tx: &dyn Tx, run_id: &str, task_id: &str) -> Result<(Task, MergeCandidate)> {
    let task = load_task(tx, run_id, task_id)?;
    if task.status != TaskStatus::Done || task.merge_state != Some(MergeState::Pending) {
        return Err(Error::app(
            ErrorCode::InvalidTransition,
            format!(
                "task '{task_id}' is {}{}: only a done task waiting to merge is approved",
                task.status,
                task.merge_state.map(|m| format!(", merge {m}")).unwrap_or_default()
            ),
        ));
    }
    let c = queue::load(tx, run_id, task_id, task.attempt)?;
    Ok((task, c))
}

/// `orch.reviewApprove` by `by`: a candidate in review is admitted (queued under
/// automatic merge, else waiting for `orch.merge`); one already admitted keeps its place.
pub fn approve(tx: &mut dyn Tx, now: Ts, p: &ReviewParams, by: &str) -> Result<ReviewResult> {
    let run = open_run(tx, &p.run_id)?;
    let (task, mut c) = waiting(tx, &p.run_id, &p.task_id)?;
    c.approved_by = Some(by.to_string());
    c.updated_at = now.to_string();
    tx.queue_mut().candidate_put(&c)?;
    let summary = match &p.summary {
        Some(s) => format!("{} approved by {by}: {}", task.task_id, first(s)),
        None => format!("{} approved by {by}", task.task_id),
    };
    let payload = json!({"attempt": c.attempt, "by": by, "summary": p.summary});
    let mut event_id = task_event(tx, EventType::TaskApproved, &task, None, (by, &summary, &payload), now)?;
    if c.state == QueueState::Review {
        queue::admit(tx, now, &run, &mut c)?;
        event_id = tx.events().last_event_id()?;
    }
    let candidate = queue::latest(tx, &task)?;
    Ok(ReviewResult { task, candidate, comments: vec![], returned: None, message_id: None, event_id })
}

/// Where a request for changes goes. (One is made per call and consumed at once, so the
/// size of its largest variant costs nothing.)
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum Changes {
    /// A live attempt: a message in its thread.
    Live { task: Task, attempt: Attempt, comments: Vec<ReviewComment> },
    /// A done task not merged yet: it goes back to its worker.
    Return { plan: Box<returns::Plan>, cause: Cause },
}

/// `orch.reviewRequestChanges`, decided on a read: the attempt's unsent comments and where
/// they go.
pub fn changes(tx: &dyn Tx, p: &ReviewParams, by: &str) -> Result<Changes> {
    open_run(tx, &p.run_id)?;
    let task = load_task(tx, &p.run_id, &p.task_id)?;
    let comments: Vec<ReviewComment> = tx
        .queue()
        .comments_of(&p.run_id, &p.task_id, task.attempt)?
        .into_iter()
        .filter(|c| c.sent_in.is_none())
        .collect();
    let summary = p.summary.clone().filter(|s| !s.trim().is_empty());
    if comments.is_empty() && summary.is_none() {
        return Err(Error::invalid(
            "nothing to send: comment on lines of the diff (orch.reviewComment) or give a summary",
        ));
    }
    if let Some(s) = &summary {
        check::text("summary", s)?;
    }
    let summary = summary.unwrap_or_else(|| format!("{} comment(s)", comments.len()));
    if task.status.is_live() {
        let attempt = current_attempt(tx, &task)?
            .ok_or_else(|| Error::Internal(format!("task '{}' is live without an attempt", task.task_id)))?;
        return Ok(Changes::Live { task, attempt, comments });
    }
    let cause = Cause::Changes { by: by.to_string(), summary, comments };
    let plan = returns::plan(tx, &p.run_id, &p.task_id, task.attempt, &cause)?;
    Ok(Changes::Return { plan: Box::new(plan), cause })
}

/// The message a live attempt's worker gets: the comments with their anchors.
pub fn live_message(by: &str, summary: Option<&str>, comments: &[ReviewComment]) -> MessageInput {
    let list: String = comments.iter().map(|c| format!("- {}\n", returns::anchor_line(c))).collect();
    let head = summary.map_or_else(|| format!("{} comment(s)", comments.len()), str::to_string);
    MessageInput {
        summary: format!("Changes requested by {by}: {}", first(&head)),
        body: Some(format!("{by} reviewed your work and requested changes: {head}\n\n{list}")),
        payload_json: Some(json!({"review": {"by": by, "comments": comments}})),
        artifacts: vec![],
    }
}

/// The comments went out in `message_id`: mark them sent, and record
/// `task.changes_requested` for a live attempt (a return records its own).
pub fn sent(tx: &mut dyn Tx, now: Ts, task: &Task, attempt: u32, message_id: &str, by: Option<&str>) -> Result<i64> {
    tx.queue_mut().comments_mark_sent(&task.run_id, &task.task_id, attempt, message_id)?;
    let Some(by) = by else { return tx.events().last_event_id() };
    let summary = format!("{}: {by} requested changes", task.task_id);
    let payload = json!({"attempt": attempt, "by": by, "message_id": message_id, "returned": null});
    task_event(tx, EventType::TaskChangesRequested, task, None, (by, &summary, &payload), now)
}

/// What `orch.diff` compares: the run (its repository and integration branch), the
/// attempt (default: the task's current one, which must have a branch), and the
/// attempt's comments.
pub fn diff_target(tx: &dyn Tx, p: &DiffParams) -> Result<(Run, Attempt, Vec<ReviewComment>)> {
    let run = load_run(tx, &p.run_id)?;
    let task = load_task(tx, &p.run_id, &p.task_id)?;
    let n = p.attempt.unwrap_or(task.attempt);
    let attempt = tx.attempts().attempt(&p.run_id, &p.task_id, n)?.filter(|a| a.branch.is_some()).ok_or_else(|| {
        Error::app(
            ErrorCode::InvalidTransition,
            format!(
                "task '{}' has no branch at attempt {n}: there is no diff (only code tasks with a worktree have one)",
                p.task_id
            ),
        )
    })?;
    if run.repo.is_none() || run.integration_branch.is_none() {
        return Err(Error::invalid(format!("run '{}' has no integration branch yet", run.run_id)));
    }
    let comments = tx.queue().comments_of(&p.run_id, &p.task_id, n)?;
    Ok((run, attempt, comments))
}
