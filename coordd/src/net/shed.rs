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
//!
//! [`Meter`], the byte count of one queue, lives here so that `outbox` (which charges
//! meters and joins the pool) depends on this module and not the other way round.

use std::cmp::Reverse;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};

use tokio::sync::Notify;

/// Bytes queued and not yet handed to the socket (a connection's or a subscription's). Its
/// operations are sequentially consistent, with the outbox's `Room::waiting`: a sender that finds no room and then registers as
/// waiting either sees the room a writer made, or that writer sees it waiting.
#[derive(Debug, Default)]
pub struct Meter {
    bytes: AtomicUsize,
}

impl Meter {
    /// Bytes currently charged.
    pub fn bytes(&self) -> usize {
        self.bytes.load(Ordering::SeqCst)
    }

    /// Charge `n` bytes if the meter is under `budget`; false (and nothing charged) if not.
    pub(crate) fn try_charge(&self, n: usize, budget: usize) -> bool {
        self.bytes.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |b| (b < budget).then_some(b + n)).is_ok()
    }

    pub(crate) fn charge(&self, n: usize) {
        self.bytes.fetch_add(n, Ordering::SeqCst);
    }

    pub(crate) fn release(&self, n: usize) {
        self.bytes.fetch_sub(n, Ordering::SeqCst);
    }
}

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
