//! A done task sent back to its worker, in one write: the candidate's outcome and its
//! event (`domain::orch::returns`), then the new attempt with the feedback in its thread
//! (`record_attempts`, mode `returned`), and for a review the comments marked as carried
//! by that thread's first message; or, when it does not go back, the task's failure.

use coord_proto::types::*;

use super::orch::record_attempts;
use crate::domain::orch::attempts::{Mode, Plan};
use crate::domain::orch::returns::{self, Cause};
use crate::domain::orch::review;
use crate::error::Result;
use crate::store::Tx;
use crate::time::Ts;

/// What a return did.
#[derive(Debug, Clone)]
pub struct Sent {
    /// The new attempt, when the task went back (else it failed).
    pub returned: Option<Dispatch>,
    /// The message that carries the feedback (the new thread's first).
    pub message_id: Option<String>,
    pub event_id: i64,
}

/// Record the return of `plan` for `cause` as attempt `next` (`None`: the task fails).
pub fn send_back(tx: &mut dyn Tx, now: Ts, plan: &returns::Plan, cause: &Cause, next: Option<&Plan>) -> Result<Sent> {
    returns::record(tx, now, plan, cause)?;
    let Some(p) = next else {
        let event_id = returns::fail(tx, now, plan, cause)?;
        return Ok(Sent { returned: None, message_id: None, event_id });
    };
    let mut d = record_attempts(tx, now, &plan.run.run_id, std::slice::from_ref(p), Mode::Return)?;
    let returned = d.dispatches.pop();
    let message_id = match &returned {
        Some(d) => tx.threads().thread(&d.thread_id)?.and_then(|t| t.thread.latest_message_id),
        None => None,
    };
    if let (Cause::Changes { .. }, Some(m)) = (cause, &message_id) {
        review::sent(tx, now, &plan.task, plan.prev.attempt, m, None)?;
    }
    Ok(Sent { returned, message_id, event_id: d.event_id })
}

/// `orch.reviewRequestChanges` on a live attempt: the comments in one message in its
/// thread (an `answer`, so a worker waiting for a reply wakes), marked sent, and
/// `task.changes_requested`. Returns the message and the event.
pub fn changes_live(
    tx: &mut dyn Tx,
    now: Ts,
    (task, attempt): (&Task, &Attempt),
    by: &str,
    summary: Option<&str>,
    comments: &[ReviewComment],
) -> Result<(String, i64)> {
    let reply = ReplyParams {
        from: by.to_string(),
        to: Some(attempt.worker.clone()),
        thread_id: attempt.thread_id.clone(),
        kind: Some(MessageKind::Answer),
        message: review::live_message(by, summary, comments),
    };
    let sent = super::messages::reply_unchecked(tx, now, reply)?;
    let id = review::sent(tx, now, task, attempt.attempt, &sent.message.message_id, Some(by))?;
    Ok((sent.message.message_id, id))
}
