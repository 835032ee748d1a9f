//! The async steps that combine git and the database, and orch's background duties.
//!
//! A dispatch, retry or reassign first plans from a read, then makes any worktrees with
//! git2 in `spawn_blocking` (never on the writer), then records attempts and threads in one
//! write. If the write fails, the worktrees it would have used are removed again.
//!
//! Background: [`auto_retry`] performs the retries that reconcile scheduled (a flag on the
//! task, set in the failing transaction, so a restart does not lose them); [`lease_expiry`]
//! sleeps until the next lease runs out and records `lease.expired`, re-arming whenever a
//! claim or renew commits. Neither polls.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use coord_proto::types::*;
use coord_proto::{ErrorCode, MAX_LIMIT};
use serde_json::json;
use tokio::sync::{broadcast, watch};

use super::dispatch::{self, Mode, Plan};
use super::git;
use super::*;
use crate::db::Db;
use crate::error::{Error, Result};
use crate::events::Draft;
use crate::util;

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> Result<T> + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(f).await.map_err(|e| Error::Internal(format!("git task failed: {e}")))?
}

/// Remove worktrees made for a write that did not happen.
async fn discard(run_id: &str, plans: &[Plan]) {
    for p in plans {
        if let (Some(repo), Some(wt)) = (&p.repo, &p.worktree) {
            let (repo, run, task, n, path) =
                (PathBuf::from(repo), run_id.to_string(), p.task_id.clone(), p.attempt, wt.path.clone());
            let _ = blocking(move || git::remove(&repo, &run, &task, n, &path, true)).await;
        }
    }
}

/// Make the worktrees of the plans that need one; on failure remove those already made.
async fn make_worktrees(run_id: &str, plans: &mut [Plan], bases: &[Option<String>]) -> Result<()> {
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

async fn commit(db: &Db, run_id: &str, plans: Vec<Plan>, mode: Mode) -> Result<DispatchResult> {
    let run = run_id.to_string();
    let keep = plans.clone();
    match db.write(move |ctx| dispatch::record(ctx, &run, plans, mode)).await {
        Ok(dispatches) => {
            install_hooks(db, &dispatches).await;
            Ok(DispatchResult { dispatches })
        }
        Err(e) => {
            discard(run_id, &keep).await;
            Err(e)
        }
    }
}

/// Give every new code worktree the session hooks, bound to its worker, task and thread.
/// The attempt is recorded already, so a failure here is logged, not returned.
async fn install_hooks(db: &Db, dispatches: &[Dispatch]) {
    for d in dispatches {
        let Some(dir) = &d.worktree_path else { continue };
        let p = InstallHooksParams {
            dir: dir.clone(),
            agent: Some(d.assigned_to.clone()),
            task_id: Some(d.task_id.clone()),
            thread_id: Some(d.thread_id.clone()),
            inbox_bin: None,
        };
        let path = db.path().to_path_buf();
        if let Err(e) = blocking(move || crate::sessions::install(&p, &path)).await {
            tracing::warn!(worktree = %dir, error = %e, "could not install session hooks");
        }
    }
}

/// `orch.dispatch`.
pub async fn dispatch(db: &Db, p: DispatchParams) -> Result<DispatchResult> {
    if p.task_id.is_some() == p.all_ready {
        return Err(Error::invalid("name one task (task_id) or ask for all_ready, not both or neither"));
    }
    if let Some(to) = &p.to {
        crate::inbox::check_agent("to", to)?;
    }
    let q = p.clone();
    let tasks: Vec<(Task, String)> = db
        .read(move |c| {
            let run = load_run(c, &q.run_id)?;
            if run.status == RunStatus::Cancelled {
                return Err(Error::app(ErrorCode::InvalidTransition, format!("run '{}' is cancelled", run.run_id)));
            }
            let tasks = match &q.task_id {
                Some(t) => vec![load_task(c, &q.run_id, t)?],
                None => super::plan::ready(
                    c,
                    &TaskListParams { run_id: q.run_id.clone(), statuses: vec![], limit: Some(MAX_LIMIT) },
                )?,
            };
            let mut out = Vec::new();
            for t in tasks {
                dispatch::check_mode(&t, Mode::Dispatch)?;
                let worker = q.to.clone().or_else(|| t.assign_to.clone()).ok_or_else(|| {
                    Error::invalid(format!(
                        "task '{}' has no assignee: pass `to` (--to AGENT) or add it with --assign-to",
                        t.task_id
                    ))
                })?;
                out.push((t, worker));
            }
            Ok(out)
        })
        .await?;
    let wants_worktree = |t: &Task| t.kind == TaskKind::Code && !p.no_worktree;
    let repo = if tasks.iter().any(|(t, _)| wants_worktree(t)) {
        let repo = p.repo.clone().ok_or_else(|| {
            Error::invalid("code tasks get a git worktree: pass the repository (--repo PATH), or --no-worktree")
        })?;
        let (r, base, strict) = (PathBuf::from(&repo), p.base.clone(), p.strict);
        blocking(move || git::check_base(&r, base.as_deref(), strict)).await?;
        Some(repo)
    } else {
        None
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
        })
        .collect();
    let bases = vec![p.base.clone(); plans.len()];
    make_worktrees(&p.run_id, &mut plans, &bases).await?;
    commit(db, &p.run_id, plans, Mode::Dispatch).await
}

/// `orch.retry` and `orch.reassign`: a new attempt with a new thread and, for code tasks
/// that had one, a fresh worktree from the same base. The old attempt and its worktree stay.
pub async fn retry(db: &Db, p: RetryParams, mode: Mode) -> Result<DispatchResult> {
    if let Some(to) = &p.to {
        crate::inbox::check_agent("to", to)?;
    }
    let q = p.clone();
    let (task, prev) = db
        .read(move |c| {
            let task = load_task(c, &q.run_id, &q.task_id)?;
            dispatch::check_mode(&task, mode)?;
            for dep in &task.depends_on {
                let d = load_task(c, &q.run_id, dep)?;
                if d.status != TaskStatus::Done {
                    return Err(Error::app(
                        ErrorCode::InvalidTransition,
                        format!("task '{}' depends on '{dep}', which is {}", task.task_id, d.status),
                    ));
                }
            }
            let prev = current_attempt(c, &task)?;
            Ok((task, prev))
        })
        .await?;
    let worker = match (mode, &p.to, &prev) {
        (Mode::Reassign, None, _) => return Err(Error::invalid("reassign needs the new worker (to / --to AGENT)")),
        (Mode::Reassign, Some(to), Some(prev)) if *to == prev.worker => {
            return Err(Error::invalid(format!("task '{}' is already assigned to {to}", task.task_id)));
        }
        (_, Some(to), _) => to.clone(),
        (_, None, Some(prev)) => prev.worker.clone(),
        (_, None, None) => task.assign_to.clone().ok_or_else(|| Error::invalid("pass the worker (--to AGENT)"))?,
    };
    let repo = prev.as_ref().filter(|a| a.worktree_path.is_some()).and_then(|a| a.repo.clone());
    let base = prev.as_ref().and_then(|a| a.base_rev.clone());
    let base_branch = prev.as_ref().and_then(|a| a.base_branch.clone());
    let mut plans = vec![Plan {
        task_id: task.task_id.clone(),
        attempt: task.attempt + 1,
        worker,
        repo,
        worktree: None,
        previous: prev,
    }];
    make_worktrees(&p.run_id, &mut plans, &[base]).await?;
    // Same base revision as before, and the same base branch for "merged" checks.
    if let Some(wt) = plans[0].worktree.as_mut()
        && wt.base_branch.is_none()
    {
        wt.base_branch = base_branch;
    }
    commit(db, &p.run_id, plans, mode).await
}

/// Retry every task whose failure scheduled an automatic retry: at start-up (catching up
/// after a restart) and then whenever a `task.failed` with `auto_retry` commits.
pub async fn auto_retry(
    db: Arc<Db>,
    mut bus: broadcast::Receiver<Arc<crate::store::Published>>,
    mut shutdown: watch::Receiver<bool>,
) {
    loop {
        let pending: Vec<(String, String)> = db
            .read(|c| {
                let mut stmt = c.prepare_cached("SELECT run_id, task_id FROM tasks WHERE retry_pending = 1")?;
                let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
                Ok(rows.collect::<Result<_, _>>()?)
            })
            .await
            .unwrap_or_default();
        for (run_id, task_id) in pending {
            let p = RetryParams { run_id: run_id.clone(), task_id: task_id.clone(), to: None };
            if let Err(e) = retry(&db, p, Mode::Retry).await {
                tracing::warn!(run_id, task_id, error = %e, "automatic retry failed");
                // Give up on it: the task stays failed, and the run says so (run.failed).
                let (r, t) = (run_id.clone(), task_id.clone());
                let _ = db
                    .write(move |ctx| {
                        ctx.conn.execute(
                            "UPDATE tasks SET retry_pending = 0 WHERE run_id = ?1 AND task_id = ?2",
                            [&r, &t],
                        )?;
                        let actor = load_run(ctx.conn, &r)?.created_by;
                        super::reconcile::refresh_run(ctx, &r, &actor, &util::ts(util::now()))
                    })
                    .await;
            }
        }
        // Wait for the next failure that asks for a retry.
        loop {
            tokio::select! {
                _ = shutdown.changed() => return,
                ev = bus.recv() => match ev {
                    Ok(p) if p.event.event_type == EventType::TaskFailed && p.event.payload_json["auto_retry"] == json!(true) => break,
                    Ok(_) => {}
                    Err(broadcast::error::RecvError::Lagged(_)) => break,
                    Err(broadcast::error::RecvError::Closed) => return,
                },
            }
        }
    }
}

/// Record `lease.expired` for every live lease past its expiry, once per grant.
fn report_expired(ctx: &mut crate::db::WriteCtx<'_>) -> Result<()> {
    let now = util::ts(util::now());
    let expired: Vec<(String, String, String, i64)> = {
        let mut stmt = ctx.conn.prepare_cached(
            "SELECT thread_id, agent_id, expires_at, generation FROM leases \
             WHERE released_at IS NULL AND expiry_reported = 0 AND expires_at <= ?1",
        )?;
        let rows = stmt.query_map([&now], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?;
        rows.collect::<Result<_, _>>()?
    };
    for (thread_id, agent, expires_at, generation) in expired {
        ctx.conn.prepare_cached("UPDATE leases SET expiry_reported = 1 WHERE thread_id = ?1")?.execute([&thread_id])?;
        let thread = crate::inbox::read::thread(ctx.conn, &thread_id, &now)?;
        if thread.status.is_terminal() {
            continue;
        }
        let summary = format!("lease of {agent} on {thread_id} expired at {expires_at} without renewal");
        let payload = json!({"agent": agent, "expires_at": expires_at, "generation": generation});
        crate::events::record(
            ctx,
            &Draft::for_thread(EventType::LeaseExpired, &thread, &agent, &summary, &payload, &now),
        )?;
    }
    Ok(())
}

/// Sleep until the earliest unreported lease expiry, then report; re-arm whenever a claim
/// or renew commits (only they can bring the next expiry closer). Other events leave the
/// deadline alone.
pub async fn lease_expiry(
    db: Arc<Db>,
    mut bus: broadcast::Receiver<Arc<crate::store::Published>>,
    mut shutdown: watch::Receiver<bool>,
) {
    loop {
        let next: Option<String> = db
            .read(|c| {
                Ok(c.query_row(
                    "SELECT MIN(expires_at) FROM leases WHERE released_at IS NULL AND expiry_reported = 0",
                    [],
                    |r| r.get(0),
                )?)
            })
            .await
            .unwrap_or(None);
        let deadline = next.and_then(|t| humantime::parse_rfc3339(&t).ok()).map(|t| {
            let left = t.duration_since(util::now()).unwrap_or(Duration::ZERO);
            tokio::time::Instant::now() + left + Duration::from_millis(1)
        });
        loop {
            let sleep = async {
                match deadline {
                    Some(d) => tokio::time::sleep_until(d).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = shutdown.changed() => return,
                _ = sleep => {
                    if let Err(e) = db.write(report_expired).await {
                        tracing::warn!(error = %e, "cannot record expired leases");
                        if *shutdown.borrow() {
                            return;
                        }
                    }
                    break;
                }
                ev = bus.recv() => match ev {
                    Ok(p) if matches!(p.event.event_type, EventType::ThreadClaimed | EventType::LeaseRenewed) => break,
                    Ok(_) => {}
                    Err(broadcast::error::RecvError::Lagged(_)) => break,
                    Err(broadcast::error::RecvError::Closed) => return,
                },
            }
        }
    }
}
