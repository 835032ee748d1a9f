//! What the daemon is busy with, counted in one place: open connections, open
//! subscriptions and when the last call arrived. `system.hello` reports the counts
//! (`coordd status`, `coordd list`), and the idle timeout (`services::background::idle`)
//! reads them: a daemon with a subscriber is never idle.
//!
//! One daemon runs per process, so the counters are process-wide.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

static CLIENTS: AtomicUsize = AtomicUsize::new(0);
static SUBSCRIPTIONS: AtomicUsize = AtomicUsize::new(0);
/// Milliseconds from [`epoch`] to the last call.
static LAST_CALL_MS: AtomicU64 = AtomicU64::new(0);

fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// Counts one open thing while it lives.
pub struct Open(&'static AtomicUsize);

impl Drop for Open {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A connection opened; it counts until the guard drops.
pub fn connection() -> Open {
    touch();
    CLIENTS.fetch_add(1, Ordering::Relaxed);
    Open(&CLIENTS)
}

/// A subscription started; it counts until the guard drops.
pub fn subscription() -> Open {
    SUBSCRIPTIONS.fetch_add(1, Ordering::Relaxed);
    Open(&SUBSCRIPTIONS)
}

/// A call arrived.
pub fn touch() {
    LAST_CALL_MS.store(epoch().elapsed().as_millis() as u64, Ordering::Relaxed);
}

pub fn connections() -> usize {
    CLIENTS.load(Ordering::Relaxed)
}

pub fn subscriptions() -> usize {
    SUBSCRIPTIONS.load(Ordering::Relaxed)
}

/// Time since the last call (or since start-up, if none came).
pub fn idle_for() -> Duration {
    let last = Duration::from_millis(LAST_CALL_MS.load(Ordering::Relaxed));
    epoch().elapsed().saturating_sub(last)
}
