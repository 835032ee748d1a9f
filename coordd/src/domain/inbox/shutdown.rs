//! Shutdown requests' own rules: a request expires (by default after
//! [`SHUTDOWN_EXPIRES_SECONDS`]), it is aimed at the session of the task whose thread the
//! target holds, and approving it stops that work: the thread is blocked with
//! [`STOPPED`] and its lease released (composed in `ops::shutdown`). A launcher that
//! stopped a session whose worker never answered may close the request that named it
//! ([`request_of_session`]).

use coord_proto::ErrorCode;
use coord_proto::types::*;
use serde_json::{Value, json};

use super::thread::view;
use crate::domain::check;
use crate::error::{Error, Result};
use crate::store::Tx;
use crate::store::repos::RequestRow;
use crate::time::Ts;

/// The reason a stopped worker's thread (and task) is blocked with.
pub const STOPPED: &str = "worker stopped";

/// Give a shutdown request's payload its `expires_at`: now + `expires_in_seconds`
/// (default [`SHUTDOWN_EXPIRES_SECONDS`], 1 to [`SHUTDOWN_EXPIRES_MAX_SECONDS`]).
pub fn stamp(payload: &mut Value, now: Ts) -> Result<()> {
    let secs = match payload.get("expires_in_seconds") {
        None | Some(Value::Null) => SHUTDOWN_EXPIRES_SECONDS,
        Some(v) => v.as_u64().filter(|s| (1..=SHUTDOWN_EXPIRES_MAX_SECONDS).contains(s)).ok_or_else(|| {
            Error::invalid(format!("expires_in_seconds must be 1..={SHUTDOWN_EXPIRES_MAX_SECONDS}, not {v}"))
        })?,
    };
    if let Some(obj) = payload.as_object_mut() {
        obj.insert("expires_at".into(), json!(now.plus_secs(secs).to_string()));
    }
    Ok(())
}

/// Has this shutdown request's payload expired at `now`? (A request without `expires_at`,
/// from before expiry existed, never does.)
pub fn expired(payload: &Value, now: Ts) -> bool {
    payload.get("expires_at").and_then(Value::as_str).and_then(|t| Ts::parse(t).ok()).is_some_and(|at| at <= now)
}

/// Refuse to answer an expired request.
pub fn check_open(request_id: &str, payload: &Value, now: Ts) -> Result<()> {
    if expired(payload, now) {
        let at = payload.get("expires_at").and_then(Value::as_str).unwrap_or_default();
        return Err(Error::app(ErrorCode::InvalidTransition, format!("request '{request_id}' expired at {at}")));
    }
    Ok(())
}

/// The shutdown request `request_id`, which must be one to `session`'s agent about its
/// run and task (or about none): what a launcher may close for the session it stopped.
pub fn request_of_session(tx: &dyn Tx, request_id: &str, session: &LaunchSession) -> Result<RequestRow> {
    check::id("shutdown_request_id", request_id)?;
    let r = tx
        .requests()
        .request(request_id)?
        .ok_or_else(|| Error::not_found(format!("request '{request_id}' not found")))?;
    let about = |want: &str, got: &str| got.is_empty() || got == want;
    if r.msg_type != MessageType::ShutdownRequest.as_str()
        || r.to_agent != session.agent
        || !about(&session.run_id, &r.run_id)
        || !about(&session.task_id, &r.task_id)
    {
        return Err(Error::invalid(format!(
            "request '{request_id}' is no shutdown request to {} about {} of run {}",
            session.agent, session.task_id, session.run_id
        )));
    }
    Ok(r)
}

/// The run's task thread `agent` holds now (a live lease), most recently active first:
/// the work a shutdown request to `agent` stops.
pub fn held(tx: &dyn Tx, agent: &str, run_id: Option<&str>, task_id: Option<&str>, now: Ts) -> Result<Option<Thread>> {
    let p = ListParams {
        assigned_to: Some(agent.to_string()),
        statuses: vec![ThreadStatus::Claimed, ThreadStatus::InProgress, ThreadStatus::Blocked],
        run_id: run_id.map(str::to_string),
        task_id: task_id.map(str::to_string),
        ..Default::default()
    };
    let found = tx
        .threads()
        .threads_list(&p, 50)?
        .into_iter()
        .map(|st| view(st, now))
        .find(|t| !t.task_id.is_empty() && t.lease.as_ref().is_some_and(|l| l.active && l.agent_id == agent));
    Ok(found)
}
