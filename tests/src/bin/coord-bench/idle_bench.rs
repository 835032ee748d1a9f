//! Idle wake-ups: a daemon with nothing to do should not wake (issue 34). Counted as the
//! context switches of every thread of the daemon over a quiet window, after its last
//! activity has settled ([`coord_tests::wake_ups_during`]).

use std::time::Duration;

/// The wake-ups of `pid`'s threads during `window` (after `settle` with nothing asked of it),
/// per second, and which threads woke (name: count).
pub async fn per_second(pid: u32, settle: Duration, window: Duration) -> (f64, String) {
    tokio::time::sleep(settle).await;
    let (total, who) = tokio::task::block_in_place(|| coord_tests::wake_ups_during(pid, window));
    let who: Vec<String> = who.into_iter().map(|(k, v)| format!("{k}: {v}")).collect();
    (total as f64 / window.as_secs_f64(), who.join(", "))
}
