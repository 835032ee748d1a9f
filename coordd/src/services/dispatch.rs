//! Dispatch, retry and reassign: plan from a read snapshot, make any worktrees with git2
//! (off the writer), then record every attempt and thread in one write. If the write fails,
//! the worktrees it would have used are removed again. Each new code worktree then gets the
//! session hooks, bound to its worker, task and thread.
//!
//! Code worktrees branch from the run's integration branch (`orch/<run>/integration`),
//! which the run's first code dispatch makes at its base (HEAD unless `base` names one) and
//! records with the attempts; done tasks are merged there (`services::merge`), so a task
//! that depends on them starts from their work.

use std::path::PathBuf;

use coord_proto::types::*;

use super::blocking;
use crate::core::Core;
use crate::domain::check;
use crate::domain::orch::attempts::{self, Mode, Plan};
use crate::domain::orch::{merge, returns};
use crate::error::{Error, Result};
use crate::ops;
use crate::workspace::{git, sessions};

/// Remove worktrees made for a write that did not happen.
pub(super) async fn discard(run_id: &str, plans: &[Plan]) {
    for p in plans {
        if let (Some(repo), Some(wt)) = (&p.repo, &p.worktree) {
            let (repo, run, task, n, path) =
                (PathBuf::from(repo), run_id.to_string(), p.task_id.clone(), p.attempt, wt.path.clone());
            let _ = blocking(move || git::remove(&repo, &run, &task, n, &path, true)).await;
        }
    }
}

/// Make the worktrees of the plans that need one; on failure remove those already made.
pub(super) async fn make_worktrees(run_id: &str, plans: &mut [Plan], bases: &[Option<String>]) -> Result<()> {
    for i in 0..plans.len() {
        let Some(repo) = plans[i].repo.clone() else { continue };
        let (run, task, n, base) = (run_id.to_string(), plans[i].task_id.clone(), plans[i].attempt, bases[i].clone());
        match blocking(move || git::create(&PathBuf::from(repo), &run, &task, n, base.as_deref())).await {
            Ok(created) => plans[i].worktree = Some(created),
            Err(e) => {
                discard(run_id, &plans[..i]).await;
                return Err(e);
            }
        }
    }
    Ok(())
}

/// A run's integration branch made by this dispatch, to record with its attempts.
type NewIntegration = Option<(String, (Option<String>, String, String))>;

async fn commit(
    core: &Core,
    run_id: &str,
    plans: Vec<Plan>,
    mode: Mode,
    integration: NewIntegration,
) -> Result<DispatchResult> {
    let run = run_id.to_string();
    let keep = plans.clone();
    let write = move |tx: &mut dyn crate::store::Tx, now| {
        if let Some((repo, made)) = &integration {
            merge::set_integration(tx, &run, repo, made.clone())?;
        }
        ops::orch::record_attempts(tx, now, &run, &plans, mode)
    };
    match core.write(write).await {
        Ok(result) => {
            install_hooks(core, run_id, &result.dispatches).await;
            Ok(result)
        }
        Err(e) => {
            discard(run_id, &keep).await;
            Err(e)
        }
    }
}

/// Give every new code worktree the session hooks, bound to its worker, run, task and
/// thread. The attempt is recorded already, so a failure here is logged, not returned.
pub(super) async fn install_hooks(core: &Core, run_id: &str, dispatches: &[Dispatch]) {
    for d in dispatches {
        let Some(dir) = &d.worktree_path else { continue };
        let p = InstallHooksParams {
            dir: dir.clone(),
            agent: Some(d.assigned_to.clone()),
            task_id: Some(d.task_id.clone()),
            thread_id: Some(d.thread_id.clone()),
            inbox_bin: None,
            run_id: Some(run_id.to_string()),
            approve_mcp: true,
            clients: Vec::new(),
        };
        let db = core.db_path.clone();
        // The clients the project uses (files and PATH lookups: off the executor too).
        let install = move || {
            let mut p = p;
            p.clients = crate::workspace::codex::clients_in_use(std::path::Path::new(&p.dir));
            sessions::install(&p, &db)
        };
        if let Err(e) = blocking(install).await {
            tracing::warn!(worktree = %dir, error = %e, "could not install session hooks");
        }
    }
}

/// `orch.dispatch`.
pub async fn dispatch(core: &Core, p: DispatchParams) -> Result<DispatchResult> {
    if p.task_id.is_some() == p.all_ready {
        return Err(Error::invalid("name one task (task_id) or ask for all_ready, not both or neither"));
    }
    if let Some(to) = &p.to {
        check::agent("to", to)?;
    }
    let q = p.clone();
    let tasks = core.read(move |tx, _| attempts::dispatchable(tx, &q)).await?;
    let wants_worktree = |t: &Task| t.kind == TaskKind::Code && !p.no_worktree;
    let (repo, integration, made) = if tasks.iter().any(|(t, _)| wants_worktree(t)) {
        let repo = p.repo.clone().ok_or_else(|| {
            Error::invalid("code tasks get a git worktree: give the repository (repo), or no_worktree")
        })?;
        let r = p.run_id.clone();
        let run = core.read(move |tx, _| crate::domain::orch::model::load_run(tx, &r)).await?;
        let (integration, made) = match (&run.integration_branch, &run.repo) {
            (Some(branch), Some(run_repo)) => {
                if *run_repo != repo {
                    return Err(Error::invalid(format!(
                        "run '{}' works in the repository {run_repo}: dispatch its code tasks there",
                        p.run_id
                    )));
                }
                if p.base.is_some() {
                    return Err(Error::invalid(format!(
                        "run '{}' has its integration branch {branch} already: base only applies to a run's first \
                         code dispatch, later tasks branch from the integration branch",
                        p.run_id
                    )));
                }
                let (r, strict) = (PathBuf::from(&repo), p.strict);
                blocking(move || git::check_base(&r, None, strict)).await?;
                (branch.clone(), None)
            }
            _ => {
                let (r, base, strict, run_id) = (PathBuf::from(&repo), p.base.clone(), p.strict, p.run_id.clone());
                let made = blocking(move || {
                    git::check_base(&r, base.as_deref(), strict)?;
                    crate::workspace::merge::ensure_integration(&r, &run_id, base.as_deref())
                })
                .await?;
                (made.2.clone(), Some((repo.clone(), made)))
            }
        };
        (Some(repo), Some(integration), made)
    } else {
        (None, None, None)
    };
    let mut plans: Vec<Plan> = tasks
        .iter()
        .map(|(t, worker)| Plan {
            task_id: t.task_id.clone(),
            attempt: t.attempt + 1,
            worker: worker.clone(),
            repo: if wants_worktree(t) { repo.clone() } else { None },
            worktree: None,
            previous: None,
            host: Some(crate::host::name().to_string()),
            feedback: None,
        })
        .collect();
    let bases = vec![integration; plans.len()];
    make_worktrees(&p.run_id, &mut plans, &bases).await?;
    commit(core, &p.run_id, plans, Mode::Dispatch, made).await
}

/// `orch.retry` and `orch.reassign`: a new attempt with a new thread and, for code tasks
/// that had one, a fresh worktree from the same base (a task the merge queue failed: from
/// its branch, with the failure in the thread). The old attempt and its worktree stay.
pub async fn retry(core: &Core, p: RetryParams, mode: Mode) -> Result<DispatchResult> {
    if let Some(to) = &p.to {
        check::agent("to", to)?;
    }
    let q = p.clone();
    let (task, prev, carried) = core
        .read(move |tx, _| {
            let (task, prev) = attempts::retryable(tx, &q, mode)?;
            // A task the merge queue failed continues from its branch, with the failure.
            let carried = match (&prev, mode) {
                (Some(a), Mode::Retry) => returns::carry_over(tx, &task, a)?,
                _ => None,
            };
            Ok((task, prev, carried))
        })
        .await?;
    let worker = match (mode, &p.to, &prev) {
        (Mode::Reassign, None, _) => return Err(Error::invalid("reassign needs the new worker (to)")),
        (Mode::Reassign, Some(to), Some(prev)) if *to == prev.worker => {
            return Err(Error::invalid(format!("task '{}' is already assigned to {to}", task.task_id)));
        }
        (_, Some(to), _) => to.clone(),
        (_, None, Some(prev)) => prev.worker.clone(),
        (_, None, None) => task.assign_to.clone().ok_or_else(|| Error::invalid("name the worker (to)"))?,
    };
    let repo = prev.as_ref().filter(|a| a.worktree_path.is_some()).and_then(|a| a.repo.clone());
    let base = match &carried {
        Some(_) => prev.as_ref().and_then(|a| a.branch.clone()),
        None => prev.as_ref().and_then(|a| a.base_rev.clone()),
    };
    let base_branch = prev.as_ref().and_then(|a| a.base_branch.clone());
    let mut plans = vec![Plan {
        task_id: task.task_id.clone(),
        attempt: task.attempt + 1,
        worker,
        repo,
        worktree: None,
        previous: prev,
        host: Some(crate::host::name().to_string()),
        feedback: carried.clone(),
    }];
    make_worktrees(&p.run_id, &mut plans, &[base]).await?;
    // Same base revision as before, and the same base branch for "merged" checks.
    if let Some(wt) = plans[0].worktree.as_mut()
        && (wt.base_branch.is_none() || carried.is_some())
    {
        wt.base_branch = base_branch;
    }
    commit(core, &p.run_id, plans, mode, None).await
}
