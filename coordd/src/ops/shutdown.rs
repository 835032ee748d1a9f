//! Shutdown requests across domains. Sending one: it gets its expiry and, when the sender
//! names no task, the run and task of the thread the target holds (so `orch status` and
//! `orch wait` see it). Approving one: the worker's thread for that task is blocked with
//! "worker stopped" and its lease released (the task follows: `task.blocked`), and the
//! lead gets an `idle_notification` with reason `shutdown` from the worker.

use coord_proto::types::*;
use serde_json::json;

use super::messages;
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
    let worker = &request.to_agent;
    let mut completed_status = None;
    if !request.task_id.is_empty() {
        let run = Some(request.run_id.as_str()).filter(|r| !r.is_empty());
        if let Some(t) = shutdown::held(tx, worker, run, Some(&request.task_id), now)? {
            let p = UpdateParams {
                agent: worker.clone(),
                thread_id: t.thread_id.clone(),
                status: Some(ThreadStatus::Blocked),
                lease_token: None,
                message: MessageInput { summary: shutdown::STOPPED.into(), ..Default::default() },
            };
            let mut thread = messages::update(tx, now, p)?.thread;
            lease::release(tx, &mut thread, now)?;
            completed_status = Some("blocked".to_string());
        }
    }
    let task = Some(request.task_id.clone()).filter(|t| !t.is_empty());
    let payload = IdleNotificationPayload {
        idle_reason: IdleReason::Shutdown,
        summary: Some(format!("stopped on request {}", request.request_id)),
        completed_task_id: task.clone(),
        completed_status,
        failure_reason: None,
    };
    Ok(ControlSendParams {
        from: worker.clone(),
        to: Some(request.from_agent.clone()),
        msg_type: MessageType::IdleNotification.as_str().to_string(),
        payload: json!(payload),
        run_id: Some(request.run_id.clone()).filter(|r| !r.is_empty()),
        task_id: task,
        ..Default::default()
    })
}
