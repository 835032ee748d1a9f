//! Listing and pruning attempt worktrees. Pruning is conservative: it never touches the
//! worktree of a live attempt, never deletes commits that are not in the base (or merged
//! into the base branch) and never discards uncommitted changes, unless `force` is given;
//! it says what it kept and why.
//!
//! Both replies are bounded (protocol §1.7): the list pages with `after`; pruning does all
//! its work, then reports what fits (kept first) with counts.
//!
//! Worktrees live on the host that made them: both act only on attempts recorded by this
//! host (`crate::host`), and count the others.

use std::path::PathBuf;

use coord_proto::types::*;

use super::blocking;
use crate::bound;
use crate::core::Core;
use crate::domain::orch::attempts;
use crate::domain::orch::model::{find_run, load_run};
use crate::error::Result;
use crate::host;
use crate::workspace::git;

/// This host's attempts with a worktree, and how many other hosts have.
async fn worktree_attempts(core: &Core, run_id: Option<String>) -> Result<(Vec<Attempt>, u32)> {
    let all = core
        .read(move |tx, _| {
            if let Some(r) = &run_id {
                load_run(tx, r)?;
            }
            attempts::with_worktree(tx, run_id.as_deref())
        })
        .await?;
    let (local, other): (Vec<Attempt>, Vec<Attempt>) = all.into_iter().partition(|a| host::is_local(a.host.as_deref()));
    Ok((local, other.len() as u32))
}

fn info(a: &Attempt, note: Option<String>) -> WorktreeInfo {
    let path = a.worktree_path.clone().unwrap_or_default();
    WorktreeInfo {
        run_id: a.run_id.clone(),
        task_id: a.task_id.clone(),
        attempt: a.attempt,
        exists: PathBuf::from(&path).is_dir(),
        path,
        branch: a.branch.clone(),
        attempt_status: a.status,
        note,
    }
}

/// A worktree's place in the list, its cursor: `RUN/TASK/ATTEMPT`.
fn key(w: &WorktreeInfo) -> String {
    cursor(&w.run_id, &w.task_id, w.attempt)
}

fn cursor(run_id: &str, task_id: &str, attempt: u32) -> String {
    format!("{run_id}/{task_id}/{attempt}")
}

/// `orch.worktreeList`: this host's worktrees after `after`, by run, task and attempt.
pub async fn list(core: &Core, p: WorktreeParams) -> Result<WorktreesResult> {
    let (attempts, other_hosts) = worktree_attempts(core, p.run_id).await?;
    // `info` asks the file system whether each worktree is there: off the executor.
    let page = blocking(move || {
        let keyed = attempts.iter().map(|a| (cursor(&a.run_id, &a.task_id, a.attempt), a)).collect();
        let rest = bound::after_key(keyed, p.after.as_deref(), |(k, _)| k.as_str())?;
        Ok(bound::page(rest.into_iter().map(|(_, a)| info(a, None)).collect(), key))
    })
    .await?;
    Ok(WorktreesResult {
        worktrees: page.items,
        other_hosts,
        truncated: page.truncated,
        next_after: page.next_after,
        ..Default::default()
    })
}

/// Bound a prune's report: `kept` first (what needs a person), then `removed` in what is
/// left; the counts say how many there were.
fn bound_report(out: &mut WorktreesResult) {
    (out.kept_count, out.removed_count) = (out.kept.len() as u32, out.removed.len() as u32);
    let kept = bound::page(std::mem::take(&mut out.kept), key);
    let removed = std::mem::take(&mut out.removed);
    out.truncated = kept.truncated || !removed.is_empty();
    if !kept.truncated {
        let room = bound::budget_beside(&kept.items);
        let (listed, cut) = bound::fit(removed, room, bound::json_size);
        out.removed = listed;
        out.truncated = cut;
    }
    out.kept = kept.items;
}

/// `orch.worktreePrune`: the attempts' worktrees, then the integration branches of the
/// runs they belonged to that are finished and merged (`prune_integration`).
pub async fn prune(core: &Core, p: WorktreeParams) -> Result<WorktreesResult> {
    let (attempts, other_hosts) = worktree_attempts(core, p.run_id).await?;
    let mut runs: Vec<String> = attempts.iter().map(|a| a.run_id.clone()).collect();
    runs.sort();
    runs.dedup();
    let mut out = prune_worktrees(core, attempts, p.force).await?;
    out.other_hosts = other_hosts;
    let runs_kept: Vec<String> = out.kept.iter().map(|k| k.run_id.clone()).collect();
    bound_report(&mut out);
    for run_id in runs {
        if !runs_kept.contains(&run_id)
            && let Some(branch) = prune_integration(core, &run_id).await?
        {
            out.removed_branches.push(branch);
        }
    }
    Ok(out)
}

/// Delete a run's integration branch once nothing can need it: the run is no longer
/// active (no task will branch from it again), no worktree of the run was kept, and the
/// run's base branch contains it (`orch run finish` merged it, or it holds nothing). The
/// branch deleted, if any.
async fn prune_integration(core: &Core, run_id: &str) -> Result<Option<String>> {
    let run_id = run_id.to_string();
    let run = core.read(move |tx, _| load_run(tx, &run_id)).await?;
    let (Some(repo), Some(branch), Some(base)) = (run.repo, run.integration_branch, run.base_branch) else {
        return Ok(None);
    };
    if run.status == RunStatus::Active || !PathBuf::from(&repo).is_dir() {
        return Ok(None);
    }
    let b = branch.clone();
    let deleted = blocking(move || Ok(git::remove_merged_branch(&PathBuf::from(repo), &b, &base))).await?;
    // A branch git cannot read or delete stays, as pruning keeps what it cannot inspect.
    Ok(deleted.unwrap_or(false).then_some(branch))
}

async fn prune_worktrees(core: &Core, attempts: Vec<Attempt>, force: bool) -> Result<WorktreesResult> {
    let mut out = WorktreesResult::default();
    for a in attempts {
        if a.status == AttemptStatus::Live {
            out.kept.push(info(&a, Some("attempt is live".into())));
            continue;
        }
        let (Some(repo), Some(path), Some(branch), Some(base)) =
            (a.repo.clone(), a.worktree_path.clone(), a.branch.clone(), a.base_rev.clone())
        else {
            continue;
        };
        let (repo, path) = (PathBuf::from(repo), PathBuf::from(path));
        if !path.exists() {
            // Already removed (by an earlier prune, or by hand): nothing to keep or delete.
            continue;
        }
        // Merged into the attempt's base branch (the run's integration branch), or into the
        // branch the run started from: either way its commits are kept.
        let run_id = a.run_id.clone();
        let run_base = core.read(move |tx, _| Ok(find_run(tx, &run_id)?.and_then(|r| r.base_branch))).await?;
        let merged_into: Vec<String> = a.base_branch.iter().chain(run_base.iter()).cloned().collect();
        let (r, pa, b) = (repo.clone(), path.clone(), branch.clone());
        let state = blocking(move || Ok(git::inspect(&r, &pa, &b, &base, &merged_into))).await?;
        let state = match state {
            Ok(s) => s,
            Err(e) => {
                out.kept.push(info(&a, Some(format!("cannot inspect it, so it is kept: {}", e.to_app().message))));
                continue;
            }
        };
        let base_name = a.base_branch.clone().unwrap_or_else(|| "the base branch".into());
        let verdict: std::result::Result<String, String> = if !state.dirty.is_empty() && !force {
            Err(format!(
                "uncommitted changes in {} file(s): {} (force discards them)",
                state.dirty.len(),
                state.dirty.join(", ")
            ))
        } else if state.ahead == 0 {
            Ok("no commits beyond its base".into())
        } else if state.merged {
            Ok(format!("its {} commit(s) are merged into {base_name}", state.ahead))
        } else if force {
            Ok(format!("forced: deleted {} unmerged commit(s)", state.ahead))
        } else {
            Err(format!("{} commit(s) not merged into {base_name} (force deletes them)", state.ahead))
        };
        let verdict = verdict.map(|what| {
            if state.dirty.is_empty() {
                what
            } else {
                format!("{what}; forced: discarded uncommitted changes in {}", state.dirty.join(", "))
            }
        });
        match verdict {
            Err(why) => out.kept.push(info(&a, Some(why))),
            Ok(what) => {
                let (run, task, n) = (a.run_id.clone(), a.task_id.clone(), a.attempt);
                let removed = blocking(move || Ok(git::remove(&repo, &run, &task, n, &path, true))).await?;
                match removed {
                    Ok(()) => out.removed.push(info(&a, Some(what))),
                    Err(e) => out.kept.push(info(&a, Some(format!("removal failed: {}", e.to_app().message)))),
                }
            }
        }
    }
    Ok(out)
}
