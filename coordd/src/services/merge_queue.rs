//! The merge queue's two calls, around git work off the writer (`workspace::queue`):
//!
//! - [`next`] (`orch.queueNext`): the head of the run's queue, built on the integration
//!   tip in memory and checked out in the run's scratch worktree for the verifier. On the
//!   way, a candidate that conflicts goes back to its worker, and one without a verify
//!   command is merged here, as `orch.merge` does.
//! - [`report`] (`orch.queueReport`): a passed verify moves the integration branch to
//!   exactly the verified commit, if its tip is still the one verified on (else the
//!   candidate is queued again, in its place); a failed one sends the task back.
//!
//! The daemon runs no user command: the verify runs in the verifier (`orch merge-queue`).
//! Both calls hold the daemon's one merge lock, so nothing else moves an integration
//! branch meanwhile (and the move is a compare-and-swap besides).

use std::path::{Path, PathBuf};

use coord_proto::types::*;

use super::blocking;
use super::merge::{ONE_AT_A_TIME, merge_one};
use super::returns::send_back;
use crate::core::Core;
use crate::domain::orch::merge::{self as rules, Job};
use crate::domain::orch::returns::Cause;
use crate::domain::orch::{model, queue};
use crate::error::{Error, Result};
use crate::workspace::merge as git_merge;
use crate::workspace::queue::{self as git, Built, Moved};

/// The job of one task, as `orch.merge` reads it.
async fn job_of(core: &Core, run_id: &str, task_id: &str) -> Result<Job> {
    let p = MergeParams { run_id: run_id.to_string(), task_id: Some(task_id.to_string()) };
    let mut jobs = core.read(move |tx, _| rules::jobs(tx, &p)).await?;
    jobs.pop().ok_or_else(|| Error::Internal(format!("no merge job for task '{task_id}'")))
}

/// `orch.queueNext`.
pub async fn next(core: &Core, p: QueueNextParams) -> Result<QueueNextResult> {
    let _one = ONE_AT_A_TIME.lock().await;
    let run_id = p.run_id;
    let (mut settled, mut event_id) = (Vec::new(), 0);
    let job = loop {
        let r = run_id.clone();
        let Some((c, verify)) = core.write(move |tx, now| queue::head(tx, now, &r)).await? else { break None };
        let job = job_of(core, &run_id, &c.task_id).await?;
        let Some(verify) = verify else {
            // No verify command: the daemon merges it itself.
            let (_, id) = merge_one(core, &run_id, job).await?;
            event_id = event_id.max(id);
            settled.push(latest(core, &run_id, &c.task_id).await?);
            continue;
        };
        let (repo, branch, integration) = (PathBuf::from(&job.repo), c.branch.clone(), job.integration_branch.clone());
        let message = format!("orch: merge task {} ({}) into {integration}", job.task_id, job.title);
        let built = blocking(move || git::build(&repo, &branch, &integration, &message)).await?;
        let (tip, commit) = match built {
            Built::Conflict { tip, files } => {
                let sent = send_back(core, &run_id, &c.task_id, c.attempt, Cause::Conflict { tip, files }).await?;
                event_id = event_id.max(sent.event_id);
                settled.push(latest(core, &run_id, &c.task_id).await?);
                continue;
            }
            Built::Commit { tip, commit, .. } => (tip, commit),
        };
        let (repo, run, at) = (PathBuf::from(&job.repo), run_id.clone(), commit.clone());
        let (task, attempt, verification) = (c.task_id.clone(), c.attempt, c.verifications + 1);
        let (worktree, log) = blocking(move || {
            let worktree = git::checkout(&repo, &run, &at)?;
            Ok((worktree, git::log_path(&git::workdir(&repo)?, &run, &task, attempt, verification)))
        })
        .await?;
        let (cc, v, t, k, l) = (c.clone(), verify.clone(), tip.clone(), commit.clone(), log.display().to_string());
        let (now_verifying, id) = core.write(move |tx, now| queue::verifying(tx, now, &cc, (&v, &t, &k, &l))).await?;
        event_id = event_id.max(id);
        break Some(VerifyJob {
            task_id: c.task_id.clone(),
            attempt: c.attempt,
            branch: c.branch.clone(),
            verify,
            worktree: worktree.display().to_string(),
            tip,
            commit,
            log_path: log.display().to_string(),
            verification: now_verifying.verifications,
        });
    };
    let r = run_id.clone();
    let open = core.read(move |tx, _| queue::open(tx, &r)).await?;
    let queued = open.iter().filter(|c| c.state == QueueState::Queued).count() as u32;
    Ok(QueueNextResult { job, settled, queued, event_id })
}

async fn latest(core: &Core, run_id: &str, task_id: &str) -> Result<MergeCandidate> {
    let (r, t) = (run_id.to_string(), task_id.to_string());
    core.read(move |tx, _| {
        let task = model::load_task(tx, &r, &t)?;
        queue::latest(tx, &task)?.ok_or_else(|| Error::Internal(format!("task '{t}' has no candidate")))
    })
    .await
}

/// `orch.queueReport`.
pub async fn report(core: &Core, p: QueueReportParams) -> Result<QueueReportResult> {
    let _one = ONE_AT_A_TIME.lock().await;
    let q = p.clone();
    let c = core.read(move |tx, _| queue::reported(tx, &q)).await?;
    if !p.passed {
        let verify = c.verify.clone().unwrap_or_default();
        let cause = Cause::Verify { verify, exit_code: p.exit_code, timed_out: p.timed_out, output: p.output };
        let sent = send_back(core, &p.run_id, &p.task_id, p.attempt, cause).await?;
        let candidate = latest(core, &p.run_id, &p.task_id).await?;
        return Ok(QueueReportResult { candidate, returned: sent.returned, event_id: sent.event_id });
    }
    let job = job_of(core, &p.run_id, &p.task_id).await?;
    let (repo, j, tip, commit) =
        (PathBuf::from(&job.repo), job.clone(), c.tip.clone().unwrap_or_default(), p.commit.clone());
    let moved = blocking(move || {
        let moved = git::advance(&repo, &j.integration_branch, &tip, &commit)?;
        let commits = git::ahead(&repo, &commit, &tip)?;
        let uncommitted = j.worktree.as_deref().map(|w| git_merge::uncommitted(Path::new(w))).unwrap_or_default();
        let fast_forward = git_merge::contains(&repo, &j.branch, &j.integration_branch).unwrap_or(false);
        let contains = match (&moved, &j.resolves_branch) {
            (Moved::To(_), Some(b)) => Some(git_merge::contains(&repo, &j.integration_branch, b).unwrap_or(false)),
            _ => None,
        };
        Ok((moved, commits, uncommitted, fast_forward, contains))
    })
    .await?;
    let (moved, commits, uncommitted, fast_forward, contains) = moved;
    let run = p.run_id.clone();
    match moved {
        Moved::Elsewhere(now_at) => {
            let (candidate, event_id) = core.write(move |tx, now| queue::requeue(tx, now, &c, &now_at)).await?;
            Ok(QueueReportResult { candidate, returned: None, event_id })
        }
        Moved::To(commit) => {
            let out = MergeOutcome {
                task_id: job.task_id.clone(),
                state: MergeState::Merged,
                branch: job.branch.clone(),
                integration_branch: job.integration_branch.clone(),
                commit,
                commits,
                fast_forward,
                conflicts: vec![],
                resolution_task: None,
                uncommitted,
            };
            let (exit, output) = (p.exit_code, p.output.clone());
            let event_id = core
                .write(move |tx, now| {
                    queue::merged(tx, now, &c, exit, &output)?;
                    rules::record_merged(tx, now, &run, &out, contains)
                })
                .await?;
            let candidate = latest(core, &p.run_id, &p.task_id).await?;
            Ok(QueueReportResult { candidate, returned: None, event_id })
        }
    }
}
