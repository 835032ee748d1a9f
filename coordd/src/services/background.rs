//! The daemon's background duties, driven by the event bus, never by polling:
//!
//! - [`auto_retry`] performs the automatic retries that reconcile scheduled (a flag on the
//!   task, set in the failing transaction, so a restart does not lose them): at start-up,
//!   then after every `task.failed` whose payload says `"auto_retry": true`.
//! - [`lease_expiry`] sleeps until the next lease runs out and records `lease.expired`,
//!   re-arming whenever a claim or renew commits (only they bring the next expiry closer).
//! - [`auto_merge`] merges done code tasks of runs created with `auto_merge` into their
//!   integration branch when no verify command stands in the way (those wait in the merge
//!   queue for a verifier) nor a review: at start-up, then after every `task.done` whose
//!   merge is pending, and every candidate queued or approved, or run edited.
//! - [`idle`] stops the daemon after a quiet spell, never while a subscription or a live
//!   lease keeps it busy.
//!
//! They re-read their state when the bus reports that they lagged, and end when the
//! shutdown signal turns true.
//!
//! Where several daemons share one store (PostgreSQL), each duty runs once, not once per
//! daemon: lease expiry only on the daemon holding the store's duties
//! (`Store::duties`); an automatic retry on the daemon whose host made the failed
//! attempt's worktree (the new worktree is made from the same repository, on that host),
//! or, for a task without a worktree, on the daemon holding the duties. Both look again
//! when the duties move. An automatic merge runs on the daemon whose host made the task's
//! branch (the run's integration branch lives in the same repository).

use std::sync::Arc;
use std::time::Duration;

use coord_proto::types::*;
use serde_json::json;
use tokio::sync::watch;

use crate::bus::Missed;
use crate::core::Core;
use crate::domain::inbox::lease;
use crate::domain::orch::attempts::{self, Mode};
use crate::domain::orch::{queue, reconcile};
use crate::host;

/// Wait for `duties` to change; never returns when they cannot (a store one daemon owns).
async fn duties_changed(duties: &mut watch::Receiver<bool>) {
    if duties.changed().await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// The pending automatic retries this daemon performs (see the module doc).
async fn my_retries(core: &Core, leading: bool) -> Vec<(String, String)> {
    core.read(move |tx, _| {
        let mut mine = Vec::new();
        for (run_id, task_id, last) in attempts::retries_due(tx)? {
            let local = match last.as_ref().filter(|a| a.worktree_path.is_some()) {
                Some(a) => host::is_local(a.host.as_deref()),
                None => leading,
            };
            if local {
                mine.push((run_id, task_id));
            }
        }
        Ok(mine)
    })
    .await
    .unwrap_or_default()
}

/// Retry every task whose failure scheduled an automatic retry.
pub async fn auto_retry(core: Arc<Core>, mut shutdown: watch::Receiver<bool>) {
    let mut bus = core.bus.subscribe();
    let mut duties = core.store.duties();
    loop {
        let leading = *duties.borrow_and_update();
        for (run_id, task_id) in my_retries(&core, leading).await {
            let p = RetryParams { run_id: run_id.clone(), task_id: task_id.clone(), to: None };
            if let Err(e) = super::dispatch::retry(&core, p, Mode::Retry).await {
                tracing::warn!(run_id, task_id, error = %e, "automatic retry failed");
                // Give up on it: the task stays failed, and the run says so (run.failed).
                let (r, t) = (run_id.clone(), task_id.clone());
                let _ = core.write(move |tx, now| reconcile::abandon_auto_retry(tx, now, &r, &t)).await;
            }
        }
        // Wait for the next failure that asks for a retry (or for the duties to move).
        loop {
            tokio::select! {
                _ = shutdown.changed() => return,
                _ = duties_changed(&mut duties) => break,
                ev = bus.recv() => match ev {
                    Ok(p) if p.event.event_type == EventType::TaskFailed && p.event.payload_json["auto_retry"] == json!(true) => break,
                    Ok(_) => {}
                    Err(Missed::Lagged(_)) => break,
                    Err(Missed::Closed) => return,
                },
            }
        }
    }
}

/// Longest pause before retrying a lease-expiry report that could not be written (the
/// disk is full, say); the pause doubles from [`RETRY_FIRST`] up to this.
const RETRY_MAX: Duration = Duration::from_secs(30);
const RETRY_FIRST: Duration = Duration::from_millis(100);

/// Sleep until the earliest unreported lease expiry, then report; re-arm whenever a claim
/// or renew commits. Other events leave the deadline alone. A report that cannot be written
/// is retried after a pause that doubles (or at the next commit), never in a tight loop.
pub async fn lease_expiry(core: Arc<Core>, mut shutdown: watch::Receiver<bool>) {
    let mut duties = core.store.duties();
    loop {
        // Only the daemon holding the duties reports expiries.
        while !*duties.borrow_and_update() {
            tokio::select! {
                _ = shutdown.changed() => return,
                _ = duties_changed(&mut duties) => {}
            }
        }
        if !report_expiries(&core, &mut shutdown, &mut duties).await {
            return;
        }
    }
}

/// Report expiries while this daemon holds the duties; false at shutdown.
async fn report_expiries(
    core: &Core,
    shutdown: &mut watch::Receiver<bool>,
    duties: &mut watch::Receiver<bool>,
) -> bool {
    let mut bus = core.bus.subscribe();
    let mut retry: Option<Duration> = None;
    loop {
        let next = core.read(|tx, _| lease::next_expiry(tx)).await.unwrap_or(None);
        let deadline = next.map(|t| {
            let left = Duration::from_millis(t.millis().saturating_sub(core.clock.now().millis()).max(0) as u64);
            tokio::time::Instant::now() + left.max(retry.unwrap_or_default()) + Duration::from_millis(1)
        });
        loop {
            let sleep = async {
                match deadline {
                    Some(d) => tokio::time::sleep_until(d).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = shutdown.changed() => return false,
                _ = sleep => {
                    match core.write(lease::report_expired).await {
                        Ok(_) => retry = None,
                        Err(e) => {
                            let pause = retry.map_or(RETRY_FIRST, |r| (r * 2).min(RETRY_MAX));
                            tracing::warn!(error = %e, retry_in = ?pause, "cannot record expired leases");
                            retry = Some(pause);
                            if *shutdown.borrow() {
                                return false;
                            }
                        }
                    }
                    break;
                }
                _ = duties_changed(duties) => if !*duties.borrow() { return true } else { break },
                ev = bus.recv() => match ev {
                    // A commit went through: writing works (again).
                    Ok(_) if retry.is_some() => {
                        retry = None;
                        break;
                    }
                    Ok(p) if matches!(p.event.event_type, EventType::ThreadClaimed | EventType::LeaseRenewed) => break,
                    Ok(_) => {}
                    Err(Missed::Lagged(_)) => break,
                    Err(Missed::Closed) => return false,
                },
            }
        }
    }
}

/// Merge the done tasks of `auto_merge` runs whose merge is pending.
pub async fn auto_merge(core: Arc<Core>, mut shutdown: watch::Receiver<bool>) {
    let mut bus = core.bus.subscribe();
    loop {
        for (run_id, task_id) in my_merges(&core).await {
            let p = MergeParams { run_id: run_id.clone(), task_id: Some(task_id.clone()) };
            if let Err(e) = super::merge::merge(&core, p).await {
                tracing::warn!(run_id, task_id, error = %e, "automatic merge failed; `orch merge` retries it");
            }
        }
        loop {
            tokio::select! {
                _ = shutdown.changed() => return,
                ev = bus.recv() => match ev {
                    Ok(p) if merge_due(&p.event) => break,
                    Ok(_) => {}
                    Err(Missed::Lagged(_)) => break,
                    Err(Missed::Closed) => return,
                },
            }
        }
    }
}

/// Could `e` have made an automatic merge due? A done task waiting to merge, a candidate
/// queued or approved, a run's settings changed.
fn merge_due(e: &Event) -> bool {
    match e.event_type {
        EventType::TaskDone => e.payload_json["merge"] == json!("pending"),
        EventType::TaskMergeQueued | EventType::TaskApproved | EventType::RunEdited => true,
        _ => false,
    }
}

/// The pending automatic merges this daemon performs: those whose branch was made on this
/// host (the branch and the run's integration branch live in its repository).
async fn my_merges(core: &Core) -> Vec<(String, String)> {
    core.read(|tx, _| {
        let mut mine = Vec::new();
        for (run_id, task_id, last) in queue::daemon_merges_due(tx)? {
            if last.is_none_or(|a| host::is_local(a.host.as_deref())) {
                mine.push((run_id, task_id));
            }
        }
        Ok(mine)
    })
    .await
    .unwrap_or_default()
}

/// Could a lease still be running? Yes while any lease is neither released nor reported
/// as expired: the earliest one has not run out yet, or it has and `lease_expiry` is about
/// to report it (another may be live behind it). A failed read counts as busy too.
async fn live_lease(core: &Core) -> bool {
    !matches!(core.read(|tx, _| lease::next_expiry(tx)).await, Ok(None))
}

/// Stop the daemon once no call came for `limit`, unless a subscription (a wait, a
/// watcher) or a live lease keeps it busy; then look again after another `limit`.
pub async fn idle(core: Arc<Core>, limit: Duration, stop: watch::Sender<bool>) {
    let mut shutdown = stop.subscribe();
    loop {
        let idle = crate::net::activity::idle_for();
        if idle < limit {
            tokio::select! {
                _ = shutdown.changed() => return,
                _ = tokio::time::sleep(limit - idle) => continue,
            }
        }
        let subs = crate::net::activity::subscriptions();
        let leased = live_lease(&core).await;
        if subs == 0 && !leased {
            tracing::info!(
                idle_secs = idle.as_secs(),
                "idle timeout: no calls, subscriptions or live leases; stopping"
            );
            let _ = stop.send(true);
            return;
        }
        tracing::info!(subscriptions = subs, live_lease = leased, "idle timeout reached, but kept running");
        crate::net::activity::touch();
    }
}
