//! Where a PostgreSQL send's time goes, as the daemon's writer counts it: each daemon of
//! `--only pg` logs its writer's statistics to a file (`coordd::store::postgres::writer` at
//! debug level: batches, jobs, round trips, the time waited on them, the time busy, all since
//! it started), and a phase's share is the difference between the line just before it and
//! the line just after it.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use coord_client::Client;
use coord_proto::api::{InboxApiClient, SearchApiClient};
use coord_proto::types::*;
use coord_tests::{Daemon, Project};

/// The daemon's log filter: the usual info, and the writer's statistics.
const LOG: &str = "info,coordd::store::postgres::writer=debug";

/// Start `p`'s daemon logging to a file in its project; the daemon and the log's path.
pub fn serve(p: &Project) -> (Daemon, PathBuf) {
    let log = p.path().join("bench-coordd.log");
    let arg = log.to_string_lossy().into_owned();
    (p.serve_with(&["--log-file", &arg], &[("COORDD_LOG", LOG)]), log)
}

/// One statistics line: the writer's totals since it started.
#[derive(Debug, Clone, Copy, Default)]
pub struct Totals {
    batches: f64,
    jobs: f64,
    largest: f64,
    trips: f64,
    waited_us: f64,
    begin_us: f64,
    flush_us: f64,
    commit_us: f64,
    busy_us: f64,
    up_us: f64,
}

impl Totals {
    fn parse(line: &str) -> Option<Totals> {
        let field = |name: &str| -> Option<f64> {
            let at = line.find(&format!(" {name}="))? + name.len() + 2;
            line[at..].split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
        };
        Some(Totals {
            batches: field("batches")?,
            jobs: field("jobs")?,
            largest: field("largest")?,
            trips: field("trips")?,
            waited_us: field("waited_us")?,
            begin_us: field("begin_us")?,
            flush_us: field("flush_us")?,
            commit_us: field("commit_us")?,
            busy_us: field("busy_us")?,
            up_us: field("up_us")?,
        })
    }

    fn all(log: &Path) -> Vec<Totals> {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        text.lines().filter(|l| l.contains("writer statistics")).filter_map(Totals::parse).collect()
    }

    fn last(log: &Path) -> Option<Totals> {
        Totals::all(log).pop()
    }

    /// The largest batch between `a` and `b` (each line gives the largest since the one before).
    fn largest_between(log: &Path, a: &Totals, b: &Totals) -> f64 {
        let lines = Totals::all(log);
        lines.iter().filter(|t| t.up_us > a.up_us && t.up_us <= b.up_us).map(|t| t.largest).fold(0.0, f64::max)
    }
}

/// The writer's totals now, with nothing left for its search indexer to do: a search
/// first indexes every message not indexed yet (each search does), then, after a pause,
/// one more send makes the writer log its totals (it logs after a batch that follows a
/// pause), and the line is waited for. The indexer's own next run starts only after a quiet
/// moment that outlasts this.
pub async fn now(c: &Client, log: &Path) -> Totals {
    let q = SearchParams { query: "statistics".into(), limit: Some(1), ..Default::default() };
    c.search(q).await.unwrap();
    let before = Totals::last(log).map(|t| t.up_us);
    tokio::time::sleep(Duration::from_millis(150)).await;
    let msg = MessageInput { summary: "statistics".into(), ..Default::default() };
    c.send(SendParams { from: "bench".into(), to: "stats".into(), message: msg, ..Default::default() }).await.unwrap();
    let t0 = Instant::now();
    loop {
        if let Some(t) = Totals::last(log).filter(|t| Some(t.up_us) != before) {
            return t;
        }
        assert!(t0.elapsed() < Duration::from_secs(30), "the writer logged no statistics in {}", log.display());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A phase's batches, from each writer's log and its totals before and after the phase
/// (several writers: summed, the busy share averaged over them).
pub fn describe(phases: &[(&Path, Totals, Totals)]) -> String {
    let mut d = Totals::default();
    let mut busy_share = 0.0;
    for (log, a, b) in phases {
        d.batches += b.batches - a.batches;
        d.jobs += b.jobs - a.jobs;
        d.largest = d.largest.max(Totals::largest_between(log, a, b));
        d.trips += b.trips - a.trips;
        d.waited_us += b.waited_us - a.waited_us;
        d.begin_us += b.begin_us - a.begin_us;
        d.flush_us += b.flush_us - a.flush_us;
        d.commit_us += b.commit_us - a.commit_us;
        d.busy_us += b.busy_us - a.busy_us;
        busy_share += (b.busy_us - a.busy_us) / (b.up_us - a.up_us).max(1.0);
    }
    let per = |x: f64, n: f64| if n > 0.0 { x / n } else { 0.0 };
    let ms = |us: f64| per(us, d.batches) / 1000.0;
    format!(
        "{:.1} jobs/batch (largest {:.0}), {:.1} round trips/batch ({:.2}/job), {:.0} µs/round trip; \
         per batch {:.2} ms: begin {:.2}, held writes + commit {:.2}, commit alone {:.2}, other round trips {:.2}, the rest (CPU) {:.2}; \
         writer busy {:.0}%",
        per(d.jobs, d.batches),
        d.largest,
        per(d.trips, d.batches),
        per(d.trips, d.jobs),
        per(d.waited_us, d.trips),
        ms(d.busy_us),
        ms(d.begin_us),
        ms(d.flush_us),
        ms(d.commit_us),
        ms(d.waited_us - d.begin_us - d.flush_us - d.commit_us),
        ms(d.busy_us - d.waited_us),
        100.0 * busy_share / phases.len().max(1) as f64,
    )
}
