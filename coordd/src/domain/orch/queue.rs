//! The merge queue on a run's integration branch: every done code task with a branch
//! becomes a merge candidate (one per attempt, its state in `merge_queue`), and every
//! merge goes through it.
//!
//! A candidate starts in `review` when the run requires approval, else it is admitted:
//! `queued` under automatic merge, `waiting` for `orch.merge` otherwise. A queued candidate
//! whose task has a verify command (its own, else the run's) is verified on the merge
//! result by a verifier above the daemon (`orch.queueNext` hands it out as `verifying`,
//! `orch.queueReport` says how it went); one without is merged by the daemon itself, as
//! before the queue. Candidates are taken in `seq` order; one verified again after the tip
//! moved keeps its place. The git work is in `services::merge_queue`; these rules decide
//! and record. What goes back to the worker on a failure is in `returns`.

use coord_proto::ErrorCode;
use coord_proto::types::*;
use serde_json::json;

use super::model::*;
use crate::domain::check;
use crate::error::{Error, Result};
use crate::store::Tx;
use crate::time::Ts;

/// How many times the queue sends a task back to its worker by default.
pub const DEFAULT_MERGE_RETRIES: u32 = 2;

/// The open states, in which a candidate is still ahead of the integration branch.
pub const OPEN: &[QueueState] = &[QueueState::Review, QueueState::Waiting, QueueState::Queued, QueueState::Verifying];
/// The states the verifier serves, the one being verified first.
const SERVED: &[QueueState] = &[QueueState::Verifying, QueueState::Queued];

/// A run's verify command as given: trimmed, `""` (or blank) for none.
pub fn command(v: Option<String>) -> Result<Option<String>> {
    match v.map(|c| c.trim().to_string()) {
        Some(c) if c.is_empty() => Ok(None),
        Some(c) => {
            check::text("verify", &c)?;
            Ok(Some(c))
        }
        None => Ok(None),
    }
}

/// A task's own verify command as given: `None` follows the run's, `""` is none.
pub fn task_command(v: Option<String>) -> Result<Option<String>> {
    match v {
        Some(c) if c.trim().is_empty() => Ok(Some(String::new())),
        other => command(other),
    }
}

/// The verify command a task's merge runs: its own (`""`: none), else the run's.
pub fn effective(run: &Run, task: &Task) -> Option<String> {
    match &task.verify {
        Some(c) if c.is_empty() => None,
        Some(c) => Some(c.clone()),
        None => run.verify.clone(),
    }
}

/// The candidate of a task's attempt.
pub fn load(tx: &dyn Tx, run_id: &str, task_id: &str, attempt: u32) -> Result<MergeCandidate> {
    tx.queue().candidate(run_id, task_id, attempt)?.ok_or_else(|| {
        Error::app(
            ErrorCode::InvalidTransition,
            format!("task '{task_id}' has no merge candidate for attempt {attempt}: it is not done with a branch"),
        )
    })
}

/// The run's open candidates in queue order, each served one with its position.
pub fn open(tx: &dyn Tx, run_id: &str) -> Result<Vec<MergeCandidate>> {
    Ok(with_positions(tx.queue().candidates_in(Some(run_id), OPEN)?))
}

/// Number the queued and verifying candidates (in queue order) 1, 2, …
fn with_positions(mut list: Vec<MergeCandidate>) -> Vec<MergeCandidate> {
    let mut n = 0;
    for c in list.iter_mut().filter(|c| SERVED.contains(&c.state)) {
        n += 1;
        c.position = Some(n);
    }
    list
}

/// The task's latest candidate, with its position when it is served.
pub fn latest(tx: &dyn Tx, task: &Task) -> Result<Option<MergeCandidate>> {
    let Some(c) = tx.queue().candidate_latest(&task.run_id, &task.task_id)? else { return Ok(None) };
    if !SERVED.contains(&c.state) {
        return Ok(Some(c));
    }
    Ok(open(tx, &task.run_id)?.into_iter().find(|o| o.task_id == c.task_id && o.attempt == c.attempt))
}

fn save(tx: &mut dyn Tx, c: &mut MergeCandidate, state: QueueState, now: Ts) -> Result<()> {
    c.state = state;
    c.updated_at = now.to_string();
    tx.queue_mut().candidate_put(c)
}

/// A code task just finished done and its merge is pending (reconcile, in the worker's
/// transaction, after `task.done`): its candidate, in review or admitted.
pub fn on_done(tx: &mut dyn Tx, now: Ts, task: &Task, attempt: &Attempt) -> Result<()> {
    let run = load_run(tx, &task.run_id)?;
    let mut c = MergeCandidate {
        run_id: task.run_id.clone(),
        task_id: task.task_id.clone(),
        attempt: attempt.attempt,
        branch: attempt.branch.clone().unwrap_or_default(),
        state: QueueState::Review,
        seq: 0,
        position: None,
        verify: effective(&run, task),
        tip: None,
        commit: None,
        verifications: 0,
        exit_code: None,
        output: None,
        log_path: None,
        approved_by: None,
        reason: None,
        created_at: now.to_string(),
        updated_at: now.to_string(),
    };
    if run.require_approval {
        return tx.queue_mut().candidate_put(&c);
    }
    admit(tx, now, &run, &mut c)
}

/// Past review: into the queue under automatic merge, else waiting for `orch.merge`.
pub(super) fn admit(tx: &mut dyn Tx, now: Ts, run: &Run, c: &mut MergeCandidate) -> Result<()> {
    if run.auto_merge {
        enqueue(tx, now, run, c, None)?;
        Ok(())
    } else {
        save(tx, c, QueueState::Waiting, now)
    }
}

/// Put a candidate in the queue, at its end (or, `again` with the reason, in the place it
/// had), and record `task.merge_queued`.
pub(super) fn enqueue(tx: &mut dyn Tx, now: Ts, run: &Run, c: &mut MergeCandidate, again: Option<&str>) -> Result<i64> {
    if again.is_none() || c.seq == 0 {
        c.seq = tx.queue().queue_last_seq(&run.run_id)? + 1;
    }
    save(tx, c, QueueState::Queued, now)?;
    let position = open(tx, &run.run_id)?.iter().find(|o| o.task_id == c.task_id).and_then(|o| o.position);
    let task = load_task(tx, &run.run_id, &c.task_id)?;
    let summary = match (again, position) {
        (Some(why), _) => format!("{} queued again: {why}", c.task_id),
        (None, Some(p)) => format!("{} queued to merge (position {p})", c.task_id),
        (None, None) => format!("{} queued to merge", c.task_id),
    };
    let mut payload = json!({"attempt": c.attempt, "position": position, "verify": c.verify,
                             "requeued": again.is_some()});
    if let Some(why) = again {
        payload["reason"] = json!(why);
    }
    task_event(tx, EventType::TaskMergeQueued, &task, None, (&run.created_by, &summary, &payload), now)
}

/// What `orch.merge` does with a done task whose merge is pending. (One is made per call
/// and consumed at once, so the size of its largest variant costs nothing.)
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Route {
    /// The daemon merges it now (no verify command).
    Merge,
    /// It waits for the verifier (in the queue now, or already), with the event that
    /// queued it (0 when it was queued before).
    Queued(MergeCandidate, i64),
    /// It waits for approval (left alone when the task was not named).
    Review,
}

/// `orch.merge` (and automatic merge) for one task: a task without a candidate or verify
/// command is merged by the daemon; one with a verify command joins the queue; one in
/// review is refused when named (`explicit`), skipped otherwise.
pub fn route(tx: &mut dyn Tx, now: Ts, run_id: &str, task_id: &str, explicit: bool) -> Result<Route> {
    let run = load_run(tx, run_id)?;
    let task = load_task(tx, run_id, task_id)?;
    let Some(mut c) = tx.queue().candidate(run_id, task_id, task.attempt)? else { return Ok(Route::Merge) };
    match c.state {
        QueueState::Review if explicit => Err(Error::app(
            ErrorCode::InvalidTransition,
            format!(
                "task '{task_id}' waits for a reviewer's approval: orch review approve --run {run_id} --task {task_id}"
            ),
        )),
        QueueState::Review => Ok(Route::Review),
        s if !s.is_open() => Ok(Route::Merge),
        _ if effective(&run, &task).is_none() => Ok(Route::Merge),
        QueueState::Waiting => {
            c.verify = effective(&run, &task);
            let id = enqueue(tx, now, &run, &mut c, None)?;
            Ok(Route::Queued(load_positioned(tx, &c)?, id))
        }
        _ => Ok(Route::Queued(load_positioned(tx, &c)?, 0)),
    }
}

fn load_positioned(tx: &dyn Tx, c: &MergeCandidate) -> Result<MergeCandidate> {
    Ok(open(tx, &c.run_id)?.into_iter().find(|o| o.task_id == c.task_id).unwrap_or_else(|| c.clone()))
}

/// Done tasks whose merge the daemon makes by itself (automatic merge, no verify
/// command, not waiting for approval), as `(run, task)` with the task's last attempt
/// (whose host made the branch).
pub fn daemon_merges_due(tx: &dyn Tx) -> Result<Vec<(String, String, Option<Attempt>)>> {
    let mut due = Vec::new();
    // Done tasks whose merge is pending in runs that merge automatically.
    let pending = tx.merges().tasks_auto_merge_pending()?;
    for (run_id, task_id, last) in super::attempts::last_attempts(tx, pending)? {
        let (run, task) = (load_run(tx, &run_id)?, load_task(tx, &run_id, &task_id)?);
        let ours = match tx.queue().candidate(&run_id, &task_id, task.attempt)? {
            None => true,
            Some(c) => c.state == QueueState::Queued && effective(&run, &task).is_none(),
        };
        if ours {
            due.push((run_id, task_id, last));
        }
    }
    Ok(due)
}

/// A merge made by the daemon (no verify command) or conflicting there: the candidate of
/// the task's current attempt, if it has one, follows.
pub fn settle(tx: &mut dyn Tx, now: Ts, run_id: &str, task_id: &str, out: &MergeOutcome) -> Result<()> {
    let task = load_task(tx, run_id, task_id)?;
    let Some(mut c) = tx.queue().candidate(run_id, task_id, task.attempt)? else { return Ok(()) };
    if !c.state.is_open() {
        return Ok(());
    }
    c.commit = Some(out.commit.clone());
    let state = match out.state {
        MergeState::Conflict => {
            c.output = Some(out.conflicts.join("\n"));
            c.reason = Some(format!("conflicts in {} file(s)", out.conflicts.len()));
            QueueState::Conflict
        }
        _ => QueueState::Merged,
    };
    save(tx, &mut c, state, now)
}

/// The candidate the verifier serves next: the one being verified (a verifier that
/// restarted gets it again), else the first queued. Candidates whose task went on without
/// them (cancelled, retried) are dropped on the way.
pub fn head(tx: &mut dyn Tx, now: Ts, run_id: &str) -> Result<Option<(MergeCandidate, Option<String>)>> {
    let run = open_run(tx, run_id)?;
    if run.integration_branch.is_none() {
        return Ok(None);
    }
    let mut served = tx.queue().candidates_in(Some(run_id), SERVED)?;
    served.sort_by_key(|c| (c.state != QueueState::Verifying, c.seq));
    for mut c in served {
        let task = load_task(tx, run_id, &c.task_id)?;
        let current = task.attempt == c.attempt
            && task.status == TaskStatus::Done
            && task.merge_state == Some(MergeState::Pending);
        if !current {
            c.reason = Some(format!("task {} is {} (attempt {}) now", task.task_id, task.status, task.attempt));
            save(tx, &mut c, QueueState::Cancelled, now)?;
            continue;
        }
        return Ok(Some((c, effective(&run, &task))));
    }
    Ok(None)
}

/// The verifier takes `c`: it is verified on `commit` (`tip` + its branch).
pub fn verifying(
    tx: &mut dyn Tx,
    now: Ts,
    c: &MergeCandidate,
    (verify, tip, commit, log_path): (&str, &str, &str, &str),
) -> Result<(MergeCandidate, i64)> {
    let mut c = load(tx, &c.run_id, &c.task_id, c.attempt)?;
    c.verify = Some(verify.to_string());
    c.tip = Some(tip.to_string());
    c.commit = Some(commit.to_string());
    c.log_path = Some(log_path.to_string());
    c.verifications += 1;
    (c.exit_code, c.output, c.reason) = (None, None, None);
    save(tx, &mut c, QueueState::Verifying, now)?;
    let run = load_run(tx, &c.run_id)?;
    let task = load_task(tx, &c.run_id, &c.task_id)?;
    let summary = format!("verifying {} on {}: {verify}", c.task_id, short(tip));
    let payload = json!({"attempt": c.attempt, "tip": tip, "commit": commit, "verify": verify,
                         "verification": c.verifications, "log_path": log_path});
    let id = task_event(tx, EventType::TaskVerifying, &task, None, (&run.created_by, &summary, &payload), now)?;
    Ok((c, id))
}

/// The candidate a report is about: verifying, at that commit; otherwise the report is
/// stale (the run was edited, the task cancelled, another verifier took over).
pub fn reported(tx: &dyn Tx, p: &QueueReportParams) -> Result<MergeCandidate> {
    let c = load(tx, &p.run_id, &p.task_id, p.attempt)?;
    if c.state != QueueState::Verifying || c.commit.as_deref() != Some(p.commit.as_str()) {
        return Err(Error::app(
            ErrorCode::InvalidTransition,
            format!(
                "task '{}' attempt {} is not being verified at {} (it is {}{}): the report is stale; ask for the next \
                 job (orch.queueNext)",
                p.task_id,
                p.attempt,
                short(&p.commit),
                c.state,
                c.commit.as_deref().map(|x| format!(" at {}", short(x))).unwrap_or_default()
            ),
        ));
    }
    Ok(c)
}

/// The integration branch moved while `c` was verified: back in the queue, in its place,
/// to be verified on the new tip.
pub fn requeue(tx: &mut dyn Tx, now: Ts, c: &MergeCandidate, moved_to: &str) -> Result<(MergeCandidate, i64)> {
    let run = load_run(tx, &c.run_id)?;
    let mut c = load(tx, &c.run_id, &c.task_id, c.attempt)?;
    let why = format!(
        "the integration branch moved from {} to {} while it was verified",
        short(c.tip.as_deref().unwrap_or("")),
        short(moved_to)
    );
    c.reason = Some(why.clone());
    let id = enqueue(tx, now, &run, &mut c, Some(&why))?;
    Ok((load_positioned(tx, &c)?, id))
}

/// The verified commit landed: the candidate is merged.
pub fn merged(tx: &mut dyn Tx, now: Ts, c: &MergeCandidate, exit_code: Option<i32>, output: &str) -> Result<()> {
    let mut c = load(tx, &c.run_id, &c.task_id, c.attempt)?;
    c.exit_code = exit_code;
    c.output = Some(tail(output));
    save(tx, &mut c, QueueState::Merged, now)
}

/// The run was cancelled: its open candidates are dropped.
pub fn cancel_run(tx: &mut dyn Tx, now: Ts, run_id: &str) -> Result<()> {
    for mut c in tx.queue().candidates_in(Some(run_id), OPEN)? {
        c.reason = Some("the run was cancelled".into());
        save(tx, &mut c, QueueState::Cancelled, now)?;
    }
    Ok(())
}

/// The first 10 characters of a commit id.
pub fn short(commit: &str) -> &str {
    commit.get(..10).unwrap_or(commit)
}

/// Most characters of a verify's output kept (its end).
pub const OUTPUT_MAX_CHARS: usize = 8000;

/// The end of `output`, at most [`OUTPUT_MAX_CHARS`], cut at a line start when it can.
pub fn tail(output: &str) -> String {
    let n = output.chars().count();
    if n <= OUTPUT_MAX_CHARS {
        return output.to_string();
    }
    let cut: String = output.chars().skip(n - OUTPUT_MAX_CHARS).collect();
    match cut.find('\n') {
        Some(i) if i + 1 < cut.len() => format!("…\n{}", &cut[i + 1..]),
        _ => cut,
    }
}

#[cfg(test)]
#[path = "queue_tests.rs"]
mod tests;
