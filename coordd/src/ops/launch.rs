//! Launched sessions across domains: a session's end (launch) fails its attempt's thread
//! when it is still open (inbox, through [`super::messages`]), so orch's retry rules apply,
//! or, for a session stopped because its worker never answered a shutdown request, ends
//! that request as an approval would ([`super::shutdown::unanswered`]). A launcher acts for
//! the run: with credentials required, recording a session's start or end is the run's
//! creator's, the lead's or an admin's; so is recording a running session's last log lines.

use coord_proto::types::*;
use serde_json::json;

use super::{control, messages, shutdown};
use crate::domain::credentials::Acting;
use crate::domain::inbox::thread;
use crate::domain::launch;
use crate::domain::orch::model as orch;
use crate::error::{Error, Result};
use crate::store::Tx;
use crate::time::Ts;

/// `launch.sessionStart`, for the launcher of the attempt's run.
pub fn start(tx: &mut dyn Tx, now: Ts, p: SessionStartParams, host: &str, acting: &Acting) -> Result<LaunchSession> {
    launcher_of(tx, &p.run_id, acting)?;
    Ok(launch::start(tx, now, p, host)?.0)
}

/// May this call launch (and end) sessions for run `run_id`: its creator, the lead or an
/// admin? An unknown run passes, for the rule to report.
fn launcher_of(tx: &dyn Tx, run_id: &str, acting: &Acting) -> Result<()> {
    match orch::find_run(tx, run_id)? {
        Some(run) => acting.check_owner(tx, &run.created_by, &format!("run {run_id}")),
        None => Ok(()),
    }
}

/// `launch.sessionTail`: the run's launcher (its creator, the lead or an admin; never the
/// session's worker) records a running session's last log lines.
pub fn tail(tx: &mut dyn Tx, now: Ts, p: SessionTailParams, acting: &Acting) -> Result<SessionTailResult> {
    launcher_of(tx, &launch::session(tx, &p.session_id)?.run_id, acting)?;
    let (recorded, event_id) = launch::set_tail(tx, now, &p)?;
    Ok(SessionTailResult { recorded, event_id })
}

/// `launch.sessionExit`: record the end, then, when asked and the thread is still open,
/// fail it with the reason and the log's tail; or end the shutdown request the worker did
/// not answer. Either is the run's launcher's (its creator, the lead or an admin).
pub fn exit(tx: &mut dyn Tx, now: Ts, p: SessionExitParams, acting: &Acting) -> Result<SessionExitResult> {
    launcher_of(tx, &launch::session(tx, &p.session_id)?.run_id, acting)?;
    let fail = p.fail_attempt;
    let unanswered = p.shutdown_request_id.clone();
    if fail && unanswered.is_some() {
        return Err(Error::invalid(
            "fail_attempt and shutdown_request_id exclude each other: a session stopped for a shutdown blocks its task",
        ));
    }
    let (session, mut event_id) = launch::exit(tx, now, p)?;
    if let Some(request_id) = unanswered {
        if let Some(notice) = shutdown::unanswered(tx, now, &request_id, &session)? {
            event_id = event_id.max(control::send(tx, now, notice, None)?.event_id);
        }
        return Ok(SessionExitResult { session, failed_attempt: false, event_id });
    }
    let (t, _) = thread::load(tx, &session.thread_id, now)?;
    let mut failed_attempt = false;
    if fail && !t.status.is_terminal() {
        let input = abandoned_message(&session);
        let r = messages::abandon(tx, now, &session.thread_id, &session.launcher, input)?;
        event_id = event_id.max(r.event_id);
        failed_attempt = true;
    }
    Ok(SessionExitResult { session, failed_attempt, event_id })
}

/// The `result` message of an attempt whose session ended without finishing it.
fn abandoned_message(s: &LaunchSession) -> MessageInput {
    let how = match (s.exit_code, s.signal) {
        (Some(c), _) => format!("exited with code {c}"),
        (None, Some(sig)) => format!("was killed by signal {sig}"),
        (None, None) => format!("ended ({})", s.state),
    };
    let mut summary = format!("{} session {how} without done or fail", s.client);
    if let Some(r) = &s.reason {
        summary = format!("{summary}: {r}");
    }
    let summary: String = summary.chars().take(launch::MAX_LOG_TAIL.min(1000)).collect();
    MessageInput {
        summary,
        body: s.log_tail.clone(),
        payload_json: Some(json!({
            "session_id": s.session_id,
            "exit_code": s.exit_code,
            "signal": s.signal,
            "log_path": s.log_path,
        })),
        artifacts: Vec::new(),
    }
}
