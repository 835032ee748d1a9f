//! The message-writing operations: inbox + mail + orch reconcile, in that order, in one
//! transaction. The message's event takes the first id; events recorded by reconcile
//! (task, run, council) follow it. With credentials required, whose thread it is decides
//! who may claim it, cancel it or answer its question (`coord_proto::authority`'s object
//! rules, checked here through [`Acting`] before anything is written).

use coord_proto::types::*;

use crate::domain::agents;
use crate::domain::credentials::Acting;
use crate::domain::inbox::lease;
use crate::domain::inbox::messages as inbox;
use crate::domain::inbox::thread::{self, Append};
use crate::domain::mail::copies::{self as mail, Delivering};
use crate::domain::orch::{council, reconcile as orch};
use crate::error::Result;
use crate::store::Tx;
use crate::time::Ts;

/// Write an appended message, give its recipients their copies (recording a named but
/// unknown recipient as an agent), publish its event with those copies, and return it.
/// No reconcile.
fn write(tx: &mut dyn Tx, now: Ts, append: Append, how: Delivering) -> Result<MessageResult> {
    let (result, mut event) = thread::append(tx, now, append)?;
    if let Some(agent) = mail::named_agent(&result.message, &how) {
        agents::record_named(tx, agent, now)?;
    }
    event.mail = Some(mail::deliver(tx, &result.thread, &result.message, &how)?);
    tx.publish(event);
    Ok(result)
}

/// [`write`], then reconcile orch with the thread's new state.
fn commit(tx: &mut dyn Tx, now: Ts, append: Append, how: Delivering) -> Result<MessageResult> {
    let result = write(tx, now, append, how)?;
    reconcile(tx, now, &result.thread, &result.message.from_agent)?;
    Ok(result)
}

/// The send without the strict-agents check and without reconcile.
fn send_unchecked(tx: &mut dyn Tx, now: Ts, p: SendParams) -> Result<MessageResult> {
    inbox::check_send(&p)?;
    let address = mail::address(tx, &p)?;
    let (category, requires_ack) = mail::category(&p)?;
    let expires_at = mail::expiry(&p, now)?;
    let priority = p.priority;
    let append = inbox::send(tx, now, p, address.to, address.task, category, requires_ack)?;
    let how =
        Delivering { priority: priority.unwrap_or(append.thread.priority), expires_at, recipients: address.recipients };
    write(tx, now, append, how)
}

/// `inbox.send`.
pub fn send(tx: &mut dyn Tx, now: Ts, p: SendParams) -> Result<MessageResult> {
    let to = Some(p.to.as_str()).filter(|t| !t.is_empty());
    agents::check_parties(tx, &p.from, to)?;
    let result = send_unchecked(tx, now, p)?;
    reconcile(tx, now, &result.thread, &result.message.from_agent)?;
    Ok(result)
}

/// Open a new thread on orch's behalf (a dispatch's or a council's). A new thread is
/// pending and no attempt or council member points at it yet, so reconcile has nothing to
/// do and is not run; the caller records its attempt or member right after.
pub fn open_thread(tx: &mut dyn Tx, now: Ts, p: SendParams) -> Result<MessageResult> {
    send_unchecked(tx, now, p)
}

fn plain(append: Append) -> (Delivering, Append) {
    (Delivering::plain(append.thread.priority), append)
}

/// A typed control message (`control.send`): written, delivered and reconciled like any.
pub fn typed(tx: &mut dyn Tx, now: Ts, append: Append, how: Delivering) -> Result<MessageResult> {
    commit(tx, now, append, how)
}

/// `inbox.update`.
pub fn update(tx: &mut dyn Tx, now: Ts, p: UpdateParams) -> Result<MessageResult> {
    let (how, append) = plain(inbox::update(tx, now, p)?);
    commit(tx, now, append, how)
}

/// `inbox.reply`: in strict mode, only between registered agents. An answer that resumes
/// a blocked thread is its creator's (the one asked), the lead's, an admin's or the
/// overseer's to give, never the asker's own; likewise an answer in a request's thread
/// (a permission request's) is its recipient's, never the requester's.
pub fn reply(tx: &mut dyn Tx, now: Ts, p: ReplyParams, acting: &Acting) -> Result<MessageResult> {
    agents::check_parties(tx, &p.from, p.to.as_deref())?;
    if p.kind.unwrap_or(MessageKind::Answer) == MessageKind::Answer && !acting.is_overseer(&p.from) {
        let (t, _) = thread::open(tx, &p.thread_id, now)?;
        if t.status == ThreadStatus::Blocked {
            let what = format!("answer the question that blocks thread '{}'", t.thread_id);
            acting.check_party(tx, &p.from, &[t.created_by.as_str()], &what)?;
        } else if let Some(r) = tx.requests().request_of_thread(&t.thread_id)? {
            let what = format!("answer request {} in thread '{}'", r.request_id, t.thread_id);
            acting.check_party(tx, &p.from, &[r.to_agent.as_str()], &what)?;
        }
    }
    reply_unchecked(tx, now, p)
}

/// A reply on orch's behalf (`orch.answer`), which strict mode does not restrict.
pub fn reply_unchecked(tx: &mut dyn Tx, now: Ts, p: ReplyParams) -> Result<MessageResult> {
    let (how, append) = plain(inbox::reply(tx, now, p)?);
    commit(tx, now, append, how)
}

/// `inbox.done` and `inbox.fail`.
pub fn finish(tx: &mut dyn Tx, now: Ts, p: FinishParams, status: ThreadStatus) -> Result<MessageResult> {
    let (how, append) = plain(inbox::finish(tx, now, p, status)?);
    commit(tx, now, append, how)
}

/// A launched session ended without finishing its thread: `by` (its launcher) fails it.
pub fn abandon(tx: &mut dyn Tx, now: Ts, thread_id: &str, by: &str, input: MessageInput) -> Result<MessageResult> {
    let (how, append) = plain(inbox::fail_abandoned(tx, now, thread_id, by, input)?);
    commit(tx, now, append, how)
}

/// `inbox.cancel`, by the thread's creator, the lead or an admin (orch's own cancels act as
/// the run's creator: `Acting::daemon`). Cancelling a request's thread withdraws the
/// request.
pub fn cancel(tx: &mut dyn Tx, now: Ts, p: CancelParams, acting: &Acting) -> Result<MessageResult> {
    let (t, _) = thread::open(tx, &p.thread_id, now)?;
    acting.check_party(tx, &p.agent, &[t.created_by.as_str()], &format!("cancel thread '{}'", t.thread_id))?;
    let (how, append) = plain(inbox::cancel(tx, now, p)?);
    let result = commit(tx, now, append, how)?;
    settle_request(tx, now, &result.thread.thread_id)?;
    Ok(result)
}

/// A request that was answered or withdrawn needs no more attention: its copies still
/// queued for the recipient's session are withdrawn (`mail.withdrawn`), so no hook
/// surfaces a request that is settled.
pub fn settle_request(tx: &mut dyn Tx, now: Ts, thread_id: &str) -> Result<()> {
    let Some(request) = tx.requests().request_of_thread(thread_id)? else { return Ok(()) };
    if tx.mail().mail_queued_copies(&request.message_id, now)?.is_empty() {
        return Ok(());
    }
    let answered = tx.threads().thread(thread_id)?.is_some_and(|t| t.thread.status == ThreadStatus::Done);
    let why = if answered { "the request was answered" } else { "the request was closed unanswered" };
    let p = MailRef { agent: request.from_agent, message_id: request.message_id };
    crate::domain::mail::delivery::withdraw_because(tx, now, p, why)?;
    Ok(())
}

/// `inbox.claim`: the lease, then reconcile (the task moves to in_progress). A thread
/// assigned to an agent is that agent's to claim (or the lead's or an admin's).
pub fn claim(tx: &mut dyn Tx, now: Ts, p: ClaimParams, acting: &Acting) -> Result<LeaseResult> {
    let (t, _) = thread::open(tx, &p.thread_id, now)?;
    if let Some(assignee) = thread::assignee(&t) {
        acting.check_party(tx, &p.agent, &[assignee], &format!("claim thread '{}'", t.thread_id))?;
    }
    let r = lease::claim(tx, now, p)?;
    reconcile(tx, now, &r.thread, &r.lease.agent_id)?;
    Ok(r)
}

/// orch follows a thread's change: the attempt's task and run, or the council whose thread
/// it is (which may open the vote threads).
pub fn reconcile(tx: &mut dyn Tx, now: Ts, thread: &Thread, actor: &str) -> Result<()> {
    if thread.run_id.is_empty() {
        return Ok(());
    }
    if let Some(attempt) = tx.attempts().attempt_by_thread(&thread.thread_id)? {
        orch::on_attempt_thread(tx, now, attempt, thread.status, actor)?;
        return Ok(());
    }
    if let Some(vote) = council::on_thread(tx, now, thread, actor)? {
        let mut ids = Vec::with_capacity(vote.threads.len());
        for p in vote.threads.clone() {
            ids.push(open_thread(tx, now, p)?.thread.thread_id);
        }
        council::voting(tx, now, vote, ids, actor)?;
    }
    Ok(())
}
