//! Shutdown requests' own rules: a request expires (by default after
//! [`SHUTDOWN_EXPIRES_SECONDS`]), it is aimed at the session of the task whose thread the
//! target holds, and approving it stops that work: the thread is blocked with
//! [`STOPPED`] and its lease released (composed in `ops::shutdown`).

use coord_proto::ErrorCode;
use coord_proto::types::*;
use serde_json::{Value, json};

use super::thread::view;
use crate::error::{Error, Result};
use crate::store::Tx;
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
