//! The daemon-wide output budget. Each connection's queued output is bounded by its own
//! budget (`outbox`), but many connections that all stop reading would still add up: the
//! [`Pool`] counts every byte queued on any connection and, when the total passes its
//! budget, closes the connections that hold the most unwritten output (those that are not
//! reading), largest first, until the total is back under three quarters of the budget.
//! A connection holding less than [`SHED_FLOOR`] is keeping up and is never closed.
//!
//! Closing drops the connection's queue at once (its writer stops), so the memory comes
//! back whatever its client does; the client sees the connection end, as after a daemon
//! restart, and reconnects and resumes from its cursor.

use std::cmp::Reverse;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};

use tokio::sync::Notify;

use crate::outbox::Meter;

/// Bytes all connections together may have queued for writing.
pub const OUTPUT_BUDGET: usize = 256 * 1024 * 1024;
/// A connection with less than this queued is keeping up: it is never closed for the
/// daemon's budget.
pub const SHED_FLOOR: usize = 1024 * 1024;

/// Every connection's queued output, against one budget.
#[derive(Debug)]
pub struct Pool {
    budget: usize,
    total: AtomicUsize,
    conns: Mutex<Vec<Weak<Handle>>>,
}

impl Default for Pool {
    fn default() -> Self {
        Pool::new(OUTPUT_BUDGET)
    }
}

/// One connection as the pool sees it: its meter, and whether it was closed.
#[derive(Debug)]
pub struct Handle {
    meter: Arc<Meter>,
    shed: AtomicBool,
    notify: Notify,
}

impl Pool {
    pub fn new(budget: usize) -> Pool {
        Pool { budget, total: AtomicUsize::new(0), conns: Mutex::new(Vec::new()) }
    }

    /// Bytes queued on all connections.
    pub fn total(&self) -> usize {
        self.total.load(Ordering::SeqCst)
    }

    /// Count a new connection, whose queue is measured by `meter`.
    pub fn join(&self, meter: Arc<Meter>) -> Arc<Handle> {
        let h = Arc::new(Handle { meter, shed: AtomicBool::new(false), notify: Notify::new() });
        if let Ok(mut conns) = self.conns.lock() {
            conns.retain(|w| w.strong_count() > 0);
            conns.push(Arc::downgrade(&h));
        }
        h
    }

    /// `n` more bytes are queued somewhere; over the budget, close the worst readers.
    pub fn charge(&self, n: usize) {
        if self.total.fetch_add(n, Ordering::SeqCst) + n > self.budget {
            self.shed();
        }
    }

    pub fn release(&self, n: usize) {
        self.total.fetch_sub(n, Ordering::SeqCst);
    }

    fn shed(&self) {
        let handles: Vec<Arc<Handle>> = match self.conns.lock() {
            Ok(conns) => conns.iter().filter_map(Weak::upgrade).collect(),
            Err(_) => return,
        };
        // What connections closed already hold is on its way out.
        let leaving: usize = handles.iter().filter(|h| h.is_shed()).map(|h| h.meter.bytes()).sum();
        let mut total = self.total().saturating_sub(leaving);
        let mut open: Vec<Arc<Handle>> = handles.into_iter().filter(|h| !h.is_shed()).collect();
        open.sort_by_key(|h| Reverse(h.meter.bytes()));
        for h in open {
            let queued = h.meter.bytes();
            if total <= self.budget / 4 * 3 || queued < SHED_FLOOR {
                break;
            }
            h.close();
            total = total.saturating_sub(queued);
            tracing::warn!(
                queued_bytes = queued,
                budget = self.budget,
                "closing a connection that is not reading: the daemon's output budget is used up"
            );
        }
    }
}

impl Handle {
    /// Was the connection closed for the daemon's budget?
    pub fn is_shed(&self) -> bool {
        self.shed.load(Ordering::SeqCst)
    }

    fn close(&self) {
        self.shed.store(true, Ordering::SeqCst);
        self.notify.notify_waiters();
    }

    /// Completes once the connection is closed for the daemon's budget.
    pub async fn closed(&self) {
        loop {
            let n = self.notify.notified();
            tokio::pin!(n);
            n.as_mut().enable();
            if self.is_shed() {
                return;
            }
            n.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::value::RawValue;

    use super::*;
    use crate::outbox::Outbox;

    const MIB: usize = 1024 * 1024;

    fn raw(n: usize) -> Box<RawValue> {
        RawValue::from_string(format!("\"{}\"", "x".repeat(n.saturating_sub(3)))).unwrap()
    }

    #[test]
    fn over_the_budget_the_connections_holding_the_most_are_closed_and_readers_never() {
        let pool = Arc::new(Pool::new(4 * MIB));
        let (a, _a_unread) = Outbox::new(pool.clone());
        let (b, _b_unread) = Outbox::new(pool.clone());
        let (c, mut c_reads) = Outbox::new(pool.clone());
        let sub = || Arc::new(Meter::default());
        let (sa, sb, sc) = (sub(), sub(), sub());
        a.try_push(raw(3 * MIB), &sa).unwrap();
        c.try_push(raw(100), &sc).unwrap();
        drop(c_reads.try_recv().unwrap());
        assert!(!a.handle().is_shed(), "under the budget nothing is closed");
        // 5 MiB queued: the largest holder goes, which brings the total under 3 MiB.
        b.try_push(raw(2 * MIB), &sb).unwrap();
        assert!(a.handle().is_shed());
        assert!(!b.handle().is_shed() && !c.handle().is_shed());
        drop(_a_unread);
        assert_eq!(pool.total(), 2 * MIB, "a closed connection's queue is given back when dropped");
    }
}
