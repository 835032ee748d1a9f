//! The inbox's queries (`fetch`, `list`, `show`; they never write) and `markRead`.

use coord_proto::DEFAULT_LIMIT;
use coord_proto::types::*;

use super::thread::{load, view};
use crate::bound;
use crate::domain::check;
use crate::error::Result;
use crate::store::Tx;
use crate::store::repos::FetchQuery;
use crate::time::Ts;

/// `inbox.fetch`: candidate threads assigned to an agent, highest priority first, then
/// oldest.
pub fn fetch(tx: &dyn Tx, now: Ts, p: FetchParams) -> Result<ThreadsResult> {
    check::agent("agent", &p.agent)?;
    let limit = check::limit(p.limit, DEFAULT_LIMIT)?;
    let statuses = if p.statuses.is_empty() { vec![ThreadStatus::Pending] } else { p.statuses };
    let after = cursor(tx, now, p.after)?;
    let q = FetchQuery { agent: p.agent, statuses, unread: p.unread, after, limit };
    Ok(threads_page(tx.threads().threads_fetch(&q)?.into_iter().map(|t| view(t, now)).collect()))
}

/// `inbox.list`: threads matching every given filter, newest activity first.
pub fn list(tx: &dyn Tx, now: Ts, p: ListParams) -> Result<ThreadsResult> {
    let limit = check::limit(p.limit, DEFAULT_LIMIT)?;
    cursor(tx, now, p.after.clone())?;
    Ok(threads_page(tx.threads().threads_list(&p, limit)?.into_iter().map(|t| view(t, now)).collect()))
}

/// A page cursor naming a thread: it must exist, or the page would silently be empty.
fn cursor(tx: &dyn Tx, now: Ts, after: Option<String>) -> Result<Option<String>> {
    if let Some(t) = &after {
        check::id("after", t)?;
        load(tx, t, now)?;
    }
    Ok(after)
}

fn threads_page(threads: Vec<Thread>) -> ThreadsResult {
    let page = bound::page(threads, |t: &Thread| t.thread_id.clone());
    ThreadsResult { threads: page.items, truncated: page.truncated, next_after: page.next_after }
}

/// `inbox.show`: a thread with its full history, each message with its artifacts.
pub fn show(tx: &dyn Tx, now: Ts, p: &ShowParams) -> Result<ShowResult> {
    check::id("thread_id", &p.thread_id)?;
    let (thread, _) = load(tx, &p.thread_id, now)?;
    let after = p.after_event.unwrap_or(0);
    let read = tx.messages().thread_messages_after(&p.thread_id, after, bound::items_budget())?;
    let page = bound::page_read(read, |m| m.event_id);
    Ok(ShowResult { thread, messages: page.items, truncated: page.truncated, next_after: page.next_after })
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
