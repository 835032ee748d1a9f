//! The budgets that bound what connections make the daemon hold while it reads requests:
//! unfinished lines (a total across connections, and an idle timeout), and requests read
//! but not yet answered (per connection and in total). What a connection has *to write*
//! is budgeted in [`crate::net::outbox`], and replies being built in [`super::heavy`].

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::Notify;

/// Bytes of unfinished request lines buffered across all connections. A line whose
/// buffered part would push the total past this is discarded (the client gets
/// `request_budget_exceeded`); the connection goes on with its next line.
pub const PARTIAL_LINES_BUDGET: usize = 64 * 1024 * 1024;
/// How long an unfinished line may wait for its next byte before it is discarded (the
/// client gets `partial_line_timeout`).
pub const PARTIAL_LINE_TIMEOUT: Duration = Duration::from_secs(30);
/// Bytes of requests one connection may have read and not yet answered before the daemon
/// stops reading from it (it always reads when none is pending).
pub const CONNECTION_IN_FLIGHT_BUDGET: usize = 32 * 1024 * 1024;
/// Bytes of requests read and not yet answered across all connections before a connection
/// with requests of its own pending stops reading.
pub const IN_FLIGHT_BUDGET: usize = 256 * 1024 * 1024;

/// A byte budget shared by several connections.
#[derive(Debug)]
pub struct Budget {
    limit: usize,
    bytes: AtomicUsize,
    freed: Notify,
}

impl Budget {
    pub fn new(limit: usize) -> Budget {
        Budget { limit, bytes: AtomicUsize::new(0), freed: Notify::new() }
    }

    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Bytes currently taken.
    pub fn bytes(&self) -> usize {
        self.bytes.load(Ordering::Acquire)
    }

    /// Take `n` more bytes if the total stays within the limit.
    pub fn try_take(&self, n: usize) -> bool {
        self.bytes.fetch_update(Ordering::AcqRel, Ordering::Acquire, |b| (b + n <= self.limit).then_some(b + n)).is_ok()
    }

    /// Take `n` bytes whatever the total.
    pub fn take(&self, n: usize) {
        self.bytes.fetch_add(n, Ordering::AcqRel);
    }

    pub fn give_back(&self, n: usize) {
        if n > 0 {
            self.bytes.fetch_sub(n, Ordering::AcqRel);
            self.freed.notify_waiters();
        }
    }

    /// Resolves when some bytes are given back.
    pub async fn freed(&self) {
        self.freed.notified().await
    }
}

/// The limits every connection of one daemon shares.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Unfinished lines, across connections.
    pub partial_lines: Arc<Budget>,
    pub partial_line_timeout: Duration,
    /// Requests read and not yet answered, across connections.
    pub in_flight: Arc<Budget>,
    /// Output queued for writing, across connections (`crate::net::shed`).
    pub output: Arc<crate::net::shed::Pool>,
    /// Replies being built by heavy calls, across connections (`super::heavy`).
    pub builders: super::heavy::Builders,
}

impl Default for Limits {
    fn default() -> Self {
        Limits::with_timeout(PARTIAL_LINE_TIMEOUT)
    }
}

impl Limits {
    /// The default budgets, with another idle timeout for unfinished lines.
    pub fn with_timeout(partial_line_timeout: Duration) -> Limits {
        Limits {
            partial_lines: Arc::new(Budget::new(PARTIAL_LINES_BUDGET)),
            partial_line_timeout,
            in_flight: Arc::new(Budget::new(IN_FLIGHT_BUDGET)),
            output: Arc::default(),
            builders: Default::default(),
        }
    }

    /// These budgets, with another daemon-wide output budget (bytes).
    pub fn with_output_budget(self, bytes: usize) -> Limits {
        Limits { output: Arc::new(crate::net::shed::Pool::new(bytes)), ..self }
    }
}

/// The bytes of one request line while it is being handled: taken from its connection's
/// count and from the daemon's total, given back when the call is answered.
pub struct InFlight {
    bytes: usize,
    conn: Arc<AtomicUsize>,
    total: Arc<Budget>,
}

impl InFlight {
    pub fn new(bytes: usize, conn: &Arc<AtomicUsize>, total: &Arc<Budget>) -> InFlight {
        conn.fetch_add(bytes, Ordering::AcqRel);
        total.take(bytes);
        InFlight { bytes, conn: conn.clone(), total: total.clone() }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.conn.fetch_sub(self.bytes, Ordering::AcqRel);
        self.total.give_back(self.bytes);
    }
}

/// May a connection with `mine` bytes of requests pending read another line?
pub fn may_read(mine: usize, total: &Budget) -> bool {
    mine == 0 || (mine < CONNECTION_IN_FLIGHT_BUDGET && total.bytes() < total.limit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_refuses_what_would_pass_its_limit() {
        let b = Budget::new(10);
        assert!(b.try_take(6));
        assert!(!b.try_take(5));
        assert!(b.try_take(4));
        b.give_back(10);
        assert_eq!(b.bytes(), 0);
    }

    #[test]
    fn a_connection_with_nothing_pending_may_always_read() {
        let total = Arc::new(Budget::new(100));
        total.take(1000);
        assert!(may_read(0, &total));
        assert!(!may_read(1, &total));
        let conn = Arc::new(AtomicUsize::new(0));
        total.give_back(1000);
        let line = InFlight::new(CONNECTION_IN_FLIGHT_BUDGET, &conn, &total);
        assert!(!may_read(conn.load(Ordering::Acquire), &Budget::new(usize::MAX)));
        drop(line);
        assert_eq!((conn.load(Ordering::Acquire), total.bytes()), (0, 0));
    }
}
