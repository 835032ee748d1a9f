//! The inbox's queries (`fetch`, `list`, `show`; they never write) and `markRead`.

use coord_proto::DEFAULT_LIMIT;
use coord_proto::types::*;

use super::thread::{load, view};
use crate::domain::check;
use crate::error::Result;
use crate::store::Tx;
use crate::store::repos::FetchQuery;
use crate::time::Ts;

/// `inbox.fetch`: candidate threads assigned to an agent, highest priority first, then
/// oldest.
pub fn fetch(tx: &dyn Tx, now: Ts, p: FetchParams) -> Result<Vec<Thread>> {
    check::agent("agent", &p.agent)?;
    let limit = check::limit(p.limit, DEFAULT_LIMIT)?;
    let statuses = if p.statuses.is_empty() { vec![ThreadStatus::Pending] } else { p.statuses };
    let q = FetchQuery { agent: p.agent, statuses, unread: p.unread, limit };
    Ok(tx.threads().threads_fetch(&q)?.into_iter().map(|t| view(t, now)).collect())
}

/// `inbox.list`: threads matching every given filter, newest activity first.
pub fn list(tx: &dyn Tx, now: Ts, p: ListParams) -> Result<Vec<Thread>> {
    let limit = check::limit(p.limit, DEFAULT_LIMIT)?;
    Ok(tx.threads().threads_list(&p, limit)?.into_iter().map(|t| view(t, now)).collect())
}

/// `inbox.show`: a thread with its full history, each message with its artifacts.
pub fn show(tx: &dyn Tx, now: Ts, thread_id: &str) -> Result<ShowResult> {
    check::id("thread_id", thread_id)?;
    let (thread, _) = load(tx, thread_id, now)?;
    Ok(ShowResult { thread, messages: tx.messages().thread_messages(thread_id)? })
}

/// `inbox.markRead`: the agent has read the thread's messages up to now.
pub fn mark_read(tx: &mut dyn Tx, now: Ts, p: MarkReadParams) -> Result<MarkReadResult> {
    check::agent("agent", &p.agent)?;
    check::id("thread_id", &p.thread_id)?;
    load(tx, &p.thread_id, now)?;
    let last = tx.messages().last_message_event(&p.thread_id)?;
    tx.threads_mut().read_mark(&p.agent, &p.thread_id, last)?;
    Ok(MarkReadResult { thread_id: p.thread_id, agent: p.agent, read_through_event: last })
}
