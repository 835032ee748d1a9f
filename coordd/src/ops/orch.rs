//! orch's operations that open, answer or cancel inbox threads.

use coord_proto::types::*;

use super::messages;
use crate::domain::credentials::Acting;
use crate::domain::orch::attempts::{self, Mode, Plan};
use crate::domain::orch::{council, model, plan};
use crate::error::Result;
use crate::store::Tx;
use crate::time::Ts;

/// Record the planned attempts of a dispatch, retry or reassign: per plan, its thread, its
/// attempt and the task's move to `dispatched`; a reassign then cancels the old thread
/// (which is no longer current, so reconcile only closes its attempt).
pub fn record_attempts(tx: &mut dyn Tx, now: Ts, run_id: &str, plans: &[Plan], mode: Mode) -> Result<DispatchResult> {
    let run = model::open_run(tx, run_id)?;
    let mut out = Vec::with_capacity(plans.len());
    for p in plans {
        let send = attempts::thread_for(tx, &run, p, mode)?;
        let sent = messages::open_thread(tx, now, send)?;
        let d = attempts::record(tx, now, &run, p, &sent.thread.thread_id, mode)?;
        if let (Mode::Reassign, Some(prev)) = (mode, &p.previous) {
            let reason = format!("reassigned to {} (attempt {})", p.worker, p.attempt);
            let cancel = CancelParams {
                agent: run.created_by.clone(),
                thread_id: prev.thread_id.clone(),
                reason,
                artifacts: vec![],
            };
            messages::cancel(tx, now, cancel, &Acting::daemon())?;
        }
        out.push(d);
    }
    model::refresh_run(tx, run_id, &run.created_by, now)?;
    Ok(DispatchResult { dispatches: out, event_id: tx.events().last_event_id()? })
}

/// `orch.answer`: an `answer` in the current attempt's thread, which wakes the worker's
/// wait and resumes a blocked task. It is the run creator's (the one asked), the lead's, an
/// admin's or the overseer's to give, never the worker's own.
pub fn answer(tx: &mut dyn Tx, now: Ts, p: AnswerParams, acting: &Acting) -> Result<MessageResult> {
    let what = format!("answer task '{}' of run '{}'", p.task_id, p.run_id);
    let (reply, creator) = attempts::answer_target(tx, p)?;
    acting.check(tx, &reply.from)?;
    if !acting.is_overseer(&reply.from) {
        acting.check_party(tx, &reply.from, &[creator.as_str()], &what)?;
    }
    messages::reply_unchecked(tx, now, reply)
}

/// `orch.cancel`: one task, or the run with its unfinished tasks and councils. A task with
/// a live attempt is cancelled by cancelling its thread (reconcile does the rest).
pub fn cancel(tx: &mut dyn Tx, now: Ts, p: CancelTaskParams, acting: &Acting) -> Result<RunView> {
    let c = plan::cancel_begin(tx, now, p)?;
    // The run's creator's, or the lead's or an admin's; it is written as the creator's.
    if !acting.holds_role(tx)? {
        acting.check(tx, &c.run.created_by)?;
    }
    let cancel_thread = |tx: &mut dyn Tx, thread_id: String| {
        let p =
            CancelParams { agent: c.run.created_by.clone(), thread_id, reason: c.reason.clone(), artifacts: vec![] };
        messages::cancel(tx, now, p, &Acting::daemon()).map(drop)
    };
    if c.whole_run {
        for thread_id in council::cancel_open(tx, now, &c.run.run_id)? {
            if tx.threads().thread(&thread_id)?.is_some_and(|t| !t.thread.status.is_terminal()) {
                cancel_thread(tx, thread_id)?;
            }
        }
    }
    for (task, live_thread) in c.tasks.clone() {
        match live_thread {
            Some(thread_id) => cancel_thread(tx, thread_id)?,
            None => plan::cancel_task(tx, now, &c, task)?,
        }
    }
    plan::cancel_end(tx, now, &c)
}

/// `orch.councilStart`: the council, then one brainstorm thread per reviewer.
pub fn council_start(tx: &mut dyn Tx, now: Ts, p: CouncilStartParams) -> Result<Council> {
    let starting = council::start(tx, now, p)?;
    let mut ids = Vec::with_capacity(starting.threads.len());
    for send in starting.threads.clone() {
        ids.push(messages::open_thread(tx, now, send)?.thread.thread_id);
    }
    council::started(tx, now, starting, ids)
}
