//! `orch.merge` and `orch.runFinish`: decide on a read snapshot, merge with git off the
//! writer (`workspace::merge`), then record what happened in a write. Merges run one at a
//! time per daemon, so two of them never race on a branch (the reference is also moved
//! with a compare-and-swap). A task with a verify command is not merged here: it joins the
//! merge queue (`domain::orch::queue`), which `services::merge_queue` serves.

use std::path::{Path, PathBuf};

use coord_proto::ErrorCode;
use coord_proto::types::*;

use super::blocking;
use crate::core::Core;
use crate::domain::orch::merge::{self, Job};
use crate::domain::orch::plan;
use crate::domain::orch::queue::{self, Route};
use crate::error::{Error, Result};
use crate::workspace::merge::{self as git, Merged};

/// Held by every merge into an integration branch (the merge queue's too).
pub(super) static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// `orch.merge`.
pub async fn merge(core: &Core, p: MergeParams) -> Result<MergeResult> {
    let _one = ONE_AT_A_TIME.lock().await;
    merge_now(core, p).await
}

async fn merge_now(core: &Core, p: MergeParams) -> Result<MergeResult> {
    let q = p.clone();
    let jobs = core.read(move |tx, _| merge::jobs(tx, &q)).await?;
    let mut merged = Vec::with_capacity(jobs.len());
    let (mut queued, mut event_id) = (Vec::new(), 0);
    let explicit = p.task_id.is_some();
    for job in jobs {
        // Every merge goes through the queue: a task with a verify command waits there
        // for the verifier; one in review waits for approval.
        let (r, t) = (p.run_id.clone(), job.task_id.clone());
        match core.write(move |tx, now| queue::route(tx, now, &r, &t, explicit)).await? {
            Route::Merge => {
                let (outcome, id) = merge_one(core, &p.run_id, job).await?;
                merged.push(outcome);
                event_id = event_id.max(id);
            }
            Route::Queued(c, id) => {
                queued.push(c);
                event_id = event_id.max(id);
            }
            Route::Review => {}
        }
    }
    Ok(MergeResult { merged, event_id, queued })
}

/// Merge one task's branch into the integration branch now (the caller holds
/// [`ONE_AT_A_TIME`]).
pub(super) async fn merge_one(core: &Core, run_id: &str, job: Job) -> Result<(MergeOutcome, i64)> {
    let j = job.clone();
    let (merged, uncommitted, contains) = blocking(move || {
        let repo = PathBuf::from(&j.repo);
        let message = format!("orch: merge task {} ({}) into {}", j.task_id, j.title, j.integration_branch);
        let merged = git::merge_branch(&repo, &j.branch, &j.integration_branch, &message)?;
        let uncommitted = j.worktree.as_deref().map(|w| git::uncommitted(Path::new(w))).unwrap_or_default();
        let contains = match (&merged, &j.resolves_branch) {
            (Merged::Done { .. }, Some(b)) => Some(git::contains(&repo, &j.integration_branch, b).unwrap_or(false)),
            _ => None,
        };
        Ok((merged, uncommitted, contains))
    })
    .await?;
    let mut out = MergeOutcome {
        task_id: job.task_id.clone(),
        state: MergeState::Merged,
        branch: job.branch.clone(),
        integration_branch: job.integration_branch.clone(),
        commit: String::new(),
        commits: 0,
        fast_forward: false,
        conflicts: vec![],
        resolution_task: None,
        uncommitted,
    };
    let run = run_id.to_string();
    match merged {
        Merged::Done { commit, commits, fast_forward } => {
            (out.commit, out.commits, out.fast_forward) = (commit, commits, fast_forward);
            let o = out.clone();
            let id = core.write(move |tx, now| merge::record_merged(tx, now, &run, &o, contains)).await?;
            Ok((out, id))
        }
        Merged::Conflict { at, files } => {
            (out.state, out.commit, out.conflicts) = (MergeState::Conflict, at, files);
            let o = out.clone();
            let (resolution, id) = core.write(move |tx, now| merge::record_conflict(tx, now, &run, &job, &o)).await?;
            out.resolution_task = Some(resolution);
            Ok((out, id))
        }
    }
}

/// `orch.runFinish`: merge what is pending into the integration branch, then the
/// integration branch into the base branch. Refused while a task runs or a merge is in
/// conflict; nothing moves when the final merge would conflict.
pub async fn finish(core: &Core, p: RunFinishParams) -> Result<RunFinishResult> {
    let _one = ONE_AT_A_TIME.lock().await;
    let q = p.clone();
    let (run, into) = core.read(move |tx, _| merge::finish_plan(tx, &q)).await?;
    let first = merge_now(core, MergeParams { run_id: run.run_id.clone(), task_id: None }).await?;
    let run_id = run.run_id.clone();
    let conflicted: Vec<String> = core
        .read(move |tx, _| plan::tasks_of(tx, &run_id))
        .await?
        .into_iter()
        .filter(|t| t.merge_state == Some(MergeState::Conflict))
        .map(|t| t.task_id)
        .collect();
    if !conflicted.is_empty() {
        return Err(Error::app(
            ErrorCode::MergeConflict,
            format!(
                "task(s) {} conflict with the integration branch: finish their resolution tasks (orch status shows \
                 them), then finish the run",
                conflicted.join(", ")
            ),
        ));
    }
    let (Some(repo), Some(integration)) = (run.repo.clone(), run.integration_branch.clone()) else {
        return Err(Error::Internal("finish_plan checked the integration branch".into()));
    };
    let (i, target) = (integration.clone(), into.clone());
    let message = format!("orch: merge run {} ({}) into {into}", run.run_id, run.goal);
    let merged = blocking(move || git::merge_branch(&PathBuf::from(repo), &i, &target, &message)).await?;
    let (commit, commits, fast_forward) = match merged {
        Merged::Done { commit, commits, fast_forward } => (commit, commits, fast_forward),
        Merged::Conflict { files, .. } => {
            return Err(Error::app(
                ErrorCode::MergeConflict,
                format!(
                    "merging {integration} into {into} conflicts in: {}; nothing was changed. Merge it by hand, or \
                     resolve it on {integration} first",
                    files.join(", ")
                ),
            ));
        }
    };
    let (run_id, target, c) = (run.run_id.clone(), into.clone(), commit.clone());
    let event_id = core
        .write(move |tx, now| {
            let id = merge::record_finished(tx, now, &run_id, &target, &c, fast_forward)?;
            Ok((id, crate::domain::orch::model::load_run(tx, &run_id)?))
        })
        .await?;
    Ok(RunFinishResult {
        run: event_id.1,
        merged: first.merged,
        into,
        commit,
        fast_forward,
        up_to_date: commits == 0,
        event_id: event_id.0,
    })
}
