//! Idle wake-ups: a daemon with nothing to do should not wake (issue 34). Counted as the
//! context switches of every thread of the daemon (`voluntary_ctxt_switches` and
//! `nonvoluntary_ctxt_switches` of `/proc/PID/task/*/status`) over a quiet window, after
//! its last activity has settled. A thread only switches after it woke, so every wake-up
//! counts (a thread that ends during the window is left out: it woke to end, once).

use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Context switches so far of each thread of `pid`, by thread id.
fn switches(pid: u32) -> HashMap<String, u64> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return HashMap::new() };
    tasks
        .flatten()
        .filter_map(|t| {
            let status = std::fs::read_to_string(t.path().join("status")).ok()?;
            let count = |key: &str| -> u64 {
                status.lines().find_map(|l| l.strip_prefix(key)?.trim().parse().ok()).unwrap_or(0)
            };
            let n = count("voluntary_ctxt_switches:") + count("nonvoluntary_ctxt_switches:");
            Some((t.file_name().to_string_lossy().into_owned(), n))
        })
        .collect()
}

/// The wake-ups of `pid`'s threads during `window` (after `settle` with nothing asked of it),
/// per second, and which threads woke (name: count).
pub async fn per_second(pid: u32, settle: Duration, window: Duration) -> (f64, String) {
    tokio::time::sleep(settle).await;
    let t0 = Instant::now();
    let before = switches(pid);
    tokio::time::sleep(window).await;
    let after = switches(pid);
    let secs = t0.elapsed().as_secs_f64();
    let mut total = 0;
    let mut who: HashMap<String, u64> = HashMap::new();
    for (tid, n) in &after {
        if let Some(b) = before.get(tid)
            && n > b
        {
            total += n - b;
            let name = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/comm")).unwrap_or_default();
            *who.entry(name.trim().to_string()).or_default() += n - b;
        }
    }
    let mut who: Vec<String> = who.into_iter().map(|(k, v)| format!("{k}: {v}")).collect();
    who.sort();
    (total as f64 / secs, who.join(", "))
}
