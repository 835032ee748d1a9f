//! Shutdown requests across domains. Sending one: it gets its expiry and, when the sender
//! names no task, the run and task of the thread the target holds (so `orch status` and
//! `orch wait` see it). Approving one: the worker's thread for that task is blocked with
//! "worker stopped" and its lease released (the task follows: `task.blocked`), and the
//! lead gets an `idle_notification` with reason `shutdown` from the worker. A request the
//! worker never answered, whose session its launcher stopped after the grace
//! (`launch.sessionExit`'s `shutdown_request_id`), ends the same way, its thread closed as
//! not answered and the notification saying so.

use coord_proto::types::*;
use serde_json::json;

use super::messages;
use crate::domain::credentials::Acting;
use crate::domain::inbox::{lease, shutdown};
use crate::error::Result;
use crate::store::Tx;
use crate::store::repos::RequestRow;
use crate::time::Ts;

/// Before a shutdown request is written: its expiry, and the target's run and task.
pub fn prepare(tx: &dyn Tx, now: Ts, p: &mut ControlSendParams) -> Result<()> {
    shutdown::stamp(&mut p.payload, now)?;
    let (Some(to), None) = (&p.to, &p.task_id) else { return Ok(()) };
    if let Some(t) = shutdown::held(tx, to, p.run_id.as_deref(), None, now)? {
        p.run_id = Some(t.run_id);
        p.task_id = Some(t.task_id);
    }
    Ok(())
}

/// After `request` was approved: stop the worker's work on its task; returns the idle
/// notification that tells the lead (which `ops::control` sends).
pub fn approved(tx: &mut dyn Tx, now: Ts, request: &RequestRow) -> Result<ControlSendParams> {
    let task = Some(request.task_id.as_str()).filter(|t| !t.is_empty());
    let stopped = match task {
        Some(task) => stop_work(tx, now, request, task)?,
        None => false,
    };
    Ok(idle(request, task, stopped, format!("stopped on request {}", request.request_id)))
}

/// A launcher stopped `session` because its worker did not answer `request_id` in time:
/// the worker's work on the session's task is stopped as an approval stops it, the
/// request's thread is closed (`cancelled`, by its requester: not answered), and the idle
/// notification that tells the lead is returned (`None`: the request was answered or
/// closed meanwhile, and that already told them).
pub fn unanswered(
    tx: &mut dyn Tx,
    now: Ts,
    request_id: &str,
    session: &LaunchSession,
) -> Result<Option<ControlSendParams>> {
    let request = shutdown::request_of_session(tx, request_id, session)?;
    if tx.threads().thread(&request.thread_id)?.is_none_or(|t| t.thread.status.is_terminal()) {
        return Ok(None);
    }
    let stopped = stop_work(tx, now, &request, &session.task_id)?;
    let why = format!(
        "not answered: {} stopped {}'s session for {} after its shutdown grace",
        session.launcher, session.agent, session.task_id
    );
    let cancel = CancelParams {
        agent: request.from_agent.clone(),
        thread_id: request.thread_id.clone(),
        reason: why.clone(),
        artifacts: vec![],
    };
    messages::cancel(tx, now, cancel, &Acting::daemon())?;
    let summary = format!("stopped without answering request {}: {why}", request.request_id);
    Ok(Some(idle(&request, Some(&session.task_id), stopped, summary)))
}

/// Block the thread `request`'s worker holds for `task` with [`shutdown::STOPPED`] and
/// release its lease (the task follows); false when it holds none.
fn stop_work(tx: &mut dyn Tx, now: Ts, request: &RequestRow, task: &str) -> Result<bool> {
    let worker = &request.to_agent;
    let run = Some(request.run_id.as_str()).filter(|r| !r.is_empty());
    let Some(t) = shutdown::held(tx, worker, run, Some(task), now)? else { return Ok(false) };
    let p = UpdateParams {
        agent: worker.clone(),
        thread_id: t.thread_id.clone(),
        status: Some(ThreadStatus::Blocked),
        lease_token: None,
        message: MessageInput { summary: shutdown::STOPPED.into(), ..Default::default() },
    };
    let mut thread = messages::update(tx, now, p)?.thread;
    lease::release(tx, &mut thread, now)?;
    Ok(true)
}

/// The `idle_notification` (reason `shutdown`) from `request`'s worker to its requester,
/// about its work on `task`.
fn idle(request: &RequestRow, task: Option<&str>, stopped: bool, summary: String) -> ControlSendParams {
    let task = task.map(str::to_string);
    let payload = IdleNotificationPayload {
        idle_reason: IdleReason::Shutdown,
        summary: Some(summary),
        completed_task_id: task.clone(),
        completed_status: stopped.then(|| "blocked".to_string()),
        failure_reason: None,
    };
    ControlSendParams {
        from: request.to_agent.clone(),
        to: Some(request.from_agent.clone()),
        msg_type: MessageType::IdleNotification.as_str().to_string(),
        payload: json!(payload),
        run_id: Some(request.run_id.clone()).filter(|r| !r.is_empty()),
        task_id: task,
        ..Default::default()
    }
}
