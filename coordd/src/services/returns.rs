//! Sending a done task back to its worker (`domain::orch::returns`): decide on a read,
//! make the new attempt's worktree from the attempt's branch (off the writer), then record
//! in one write the candidate's outcome with its event and the new attempt (or, past the
//! run's merge retries, the task's failure). If that write fails, the worktree is removed
//! again; if the worktree cannot be made, the task fails with that reason instead, so a
//! candidate never stays stuck.

use std::sync::Arc;

use super::dispatch::{discard, install_hooks, make_worktrees};
use crate::core::Core;
use crate::domain::orch::attempts;
use crate::domain::orch::returns::{self, Cause};
use crate::error::Result;
use crate::ops;
pub use crate::ops::returns::Sent;

/// Send `task_id`'s `attempt` back to its worker for `cause` (or fail it).
pub async fn send_back(core: &Core, run_id: &str, task_id: &str, attempt: u32, cause: Cause) -> Result<Sent> {
    let (r, t, c) = (run_id.to_string(), task_id.to_string(), cause.clone());
    let mut plan = core.read(move |tx, _| returns::plan(tx, &r, &t, attempt, &c)).await?;
    let mut next = None;
    if plan.refused.is_none() {
        let prev = plan.prev.clone();
        let mut p = vec![attempts::Plan {
            task_id: task_id.to_string(),
            attempt: plan.task.attempt + 1,
            worker: prev.worker.clone(),
            repo: prev.worktree_path.as_ref().and(prev.repo.clone()),
            worktree: None,
            previous: Some(prev.clone()),
            host: Some(crate::host::name().to_string()),
            feedback: Some(returns::feedback(&plan, &cause)),
        }];
        // The new worktree continues from the attempt's branch.
        match make_worktrees(run_id, &mut p, std::slice::from_ref(&prev.branch)).await {
            Ok(()) => {
                if let Some(wt) = p[0].worktree.as_mut() {
                    wt.base_branch = prev.base_branch.clone();
                }
                next = p.pop();
            }
            Err(e) => plan.refused = Some(format!("it could not be sent back: {e}")),
        }
    }
    let (plan, keep) = (Arc::new(plan), next.clone());
    let write =
        move |tx: &mut dyn crate::store::Tx, now| ops::returns::send_back(tx, now, &plan, &cause, next.as_ref());
    match core.write(write).await {
        Ok(sent) => {
            if let Some(d) = &sent.returned {
                install_hooks(core, run_id, std::slice::from_ref(d)).await;
            }
            Ok(sent)
        }
        Err(e) => {
            if let Some(p) = keep {
                discard(run_id, &[p]).await;
            }
            Err(e)
        }
    }
}
