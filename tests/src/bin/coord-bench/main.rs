//! coord-bench: the speed and memory figures of coordd, measured against the real release
//! daemon on a temporary socket. Run it with:
//!
//!     cargo build --release --workspace --bins && target/release/coord-bench
//!
//! Options: `--quick` (smaller counts, for a smoke run); `--only NAME` runs one measure
//! (wake, wakeload, sends, claims, subs, cli, fetch, pending, hook, ready, dispatch, orchwake,
//! pg, inbox, permission, dashboard, dashboard-live, search, launch; `screenshots` writes the dashboard's images into
//! docs/ and is never run by default). Results go to stdout as a table;
//! `docs/performance.md` records a run.
//!
//! Five long runs happen only when named: `--only soak` (100 simulated agents for 10
//! minutes; `--agents N`, `--minutes M` or `--seconds S`, `--think-ms T`), `--only crash-loop` (20 rounds of
//! `kill -9`; `--rounds N`), `--only abuse` (the memory abuse of issue 14 through the raw
//! socket), `--only replies` (lists of 1 MiB messages read page by page, issue 26) and
//! `--only pipeline` (pages pipelined and not read, and a batch of pages, issue 32).

mod control_bench;
mod dashboard_bench;
mod dashboard_live_bench;
mod dashboard_scene;
mod hosts;
mod idle_bench;
// The bridge's CPU is read from /proc.
#[cfg(target_os = "linux")]
mod launch_bench;
mod lead_bench;
#[cfg(target_os = "linux")]
mod live_bench;
mod mcp_tokens;
mod merge_queue_bench;
mod orch_bench;
mod pg_bench;
mod pg_floor;
mod pg_writer;
#[cfg(target_os = "linux")]
mod pipeline_bench;
mod procfs;
mod scale_bench;
mod search_bench;
mod sends_bench;
mod session_bench;
mod sqlite_floor;
// The long runs read /proc (resident size, open descriptors) and use Unix sockets.
#[cfg(target_os = "linux")]
mod soak_bench;
mod yardstick;

use std::sync::Arc;
use std::time::{Duration, Instant};

use coord_client::Client;
use coord_proto::api::InboxApiClient;
use coord_proto::types::*;
use coord_tests::Project;
pub(crate) use procfs::{cpu_secs, rss_mib};

struct Scale {
    ready_tasks: usize,
    dispatch_tasks: usize,
    worktree_tasks: usize,
    orch_wakes: usize,
    wakes: usize,
    sends_per_client: usize,
    cli_sends: usize,
    claim_threads: usize,
    subscriptions: usize,
    fetch_max: usize,
}

const HELP: &str = "\
coord-bench: the speed and memory figures of coordd, measured against the real daemon on a
temporary socket (build with --release first; results go to stdout as a table).

Usage: coord-bench [--quick] [--only NAME] [OPTIONS]

Options:
  --quick                 smaller counts, for a smoke run
  --only NAME             run one measure: wake, wakeload, sends, claims, subs, cli, fetch,
                          pending, hook, ready, dispatch, orchwake, pg, inbox, permission,
                          dashboard, dashboard-live, search, launch, lead, live (live sessions
                          and session reuse: runs the real claude CLI), mcp-tokens, mergequeue,
                          screenshots (writes the dashboard's images into docs/; never run by
                          default)
  --only soak             100 simulated agents for 10 minutes
                          (--agents N, --minutes M or --seconds S, --think-ms T)
  --only crash-loop       rounds of kill -9 (--rounds N, default 20)
  --only abuse            the memory abuse of issue 14 through the raw socket
  --only replies          lists of 1 MiB messages read page by page (issue 26): the
                          largest reply and the daemon's resident size
  --only pipeline         3 connections x 64 pipelined pages of 1 MiB messages, not
                          reading, + a batch of 16 pages (issue 32): the daemon's peak
                          resident size against its aim (300 MiB)
  --sends-per-client N    sends per client in the send measure (default 2000)
  --hosts-cpu D,S,C       pg: the CPU, in cores, of each emulated host: each daemon's, the
                          PostgreSQL server's, the bench clients' (default 0.25,1,0.5;
                          needs root and a cgroup cpu controller)
  -h, --help              print this help

Examples:
  cargo build --release --workspace --bins && target/release/coord-bench
  target/release/coord-bench --quick --only sends
  target/release/coord-bench --only soak --agents 50 --minutes 2
";

/// The options that take a value, and those that do not.
const VALUED: [&str; 8] =
    ["--only", "--agents", "--minutes", "--seconds", "--think-ms", "--rounds", "--sends-per-client", "--hosts-cpu"];

/// `--help`, or an unknown option (an error naming it, exit status 2).
fn check_args(args: &[String]) {
    let mut rest = args.iter().skip(1);
    while let Some(a) = rest.next() {
        match a.as_str() {
            "-h" | "--help" => {
                print!("{HELP}");
                std::process::exit(0);
            }
            "--quick" => {}
            v if VALUED.contains(&v) => {
                if rest.next().is_none() {
                    eprintln!("coord-bench: {v} needs a value (see coord-bench --help)");
                    std::process::exit(2);
                }
            }
            other => {
                eprintln!("coord-bench: unknown argument '{other}' (see coord-bench --help)");
                std::process::exit(2);
            }
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    check_args(&args);
    let quick = args.iter().any(|a| a == "--quick");
    let budgets = match args.iter().position(|a| a == "--hosts-cpu").and_then(|i| args.get(i + 1)) {
        Some(v) => hosts::Budgets::parse(v).unwrap_or_else(|e| {
            eprintln!("coord-bench: {e}");
            std::process::exit(2)
        }),
        None => hosts::DEFAULT,
    };
    // `--only NAME` runs one measure: wake, wakeload, sends, claims, subs, cli, fetch,
    // pending, hook, ready, dispatch, orchwake, pg (PostgreSQL beside SQLite), inbox, permission,
    // search, mergequeue.
    let only = args.iter().position(|a| a == "--only").and_then(|i| args.get(i + 1)).cloned();
    let run = |name: &str| only.as_deref().is_none_or(|o| o == name);
    let number = |flag: &str, default: u64| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    if let Some(long @ ("soak" | "crash-loop" | "abuse" | "replies" | "pipeline")) = only.as_deref() {
        #[cfg(not(target_os = "linux"))]
        {
            eprintln!("coord-bench: --only {long} reads /proc and runs on Linux only");
            std::process::exit(1);
        }
        #[cfg(target_os = "linux")]
        {
            let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
            let p = Project::new();
            println!("coord-bench {long}: {} cores", std::thread::available_parallelism().map_or(0, |n| n.get()));
            println!("{:<58} result", "measure");
            if long == "crash-loop" {
                rt.block_on(soak_bench::crash_loop(&p, number("--rounds", 20) as usize));
                return;
            }
            let d = p.serve();
            if long == "abuse" {
                soak_bench::abuse(&p, &d.socket, d.pid());
            } else if long == "replies" {
                soak_bench::replies(&d.socket, d.pid());
            } else if long == "pipeline" {
                pipeline_bench::pipeline(&d.socket, d.pid());
            } else {
                let s = soak_bench::Soak {
                    agents: number("--agents", 100) as usize,
                    duration: Duration::from_secs(number("--seconds", number("--minutes", 10) * 60)),
                    think: Duration::from_millis(number("--think-ms", 20)),
                };
                rt.block_on(soak_bench::soak(&p, d.pid(), &d.socket, &s));
            }
            d.signal("TERM");
            return;
        }
    }
    let scale = if quick {
        Scale {
            ready_tasks: 2000,
            dispatch_tasks: 200,
            worktree_tasks: 10,
            orch_wakes: 50,
            wakes: 200,
            sends_per_client: 100,
            cli_sends: 20,
            claim_threads: 500,
            subscriptions: 1000,
            fetch_max: 1000,
        }
    } else {
        Scale {
            ready_tasks: 100_000,
            dispatch_tasks: 2000,
            worktree_tasks: 50,
            orch_wakes: 1000,
            wakes: 20_000,
            sends_per_client: number("--sends-per-client", 2000) as usize,
            cli_sends: 200,
            claim_threads: 5000,
            subscriptions: 1000,
            fetch_max: 1_000_000,
        }
    };
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    println!(
        "coord-bench: {} cores{}",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        if quick { " (quick)" } else { "" }
    );
    println!("{:<58} result", "measure");
    // Every measure gets a project and daemon of its own, started for it and stopped after
    // it: nothing an earlier measure left behind (a database of a million threads, a
    // backlog of the search indexer, running sessions) weighs on a later one, and a measure
    // reads the same alone (`--only`) as in a full run.
    let stage = |name: &str| run(name).then(Stage::start);
    if let Some(s) = stage("subs") {
        // Memory first, on the fresh daemon, before any load fills its page cache.
        report("daemon RSS, idle", format!("{:.1} MiB", rss_mib(s.pid())));
        rt.block_on(subscriptions_rss(&s.p, s.pid(), scale.subscriptions));
    }
    if let Some(s) = stage("ready") {
        rt.block_on(orch_bench::ready_queue(&s.p, scale.ready_tasks));
    }
    if let Some(s) = stage("dispatch") {
        rt.block_on(orch_bench::dispatch(&s.p, scale.dispatch_tasks, scale.worktree_tasks));
    }
    #[cfg(target_os = "linux")]
    if let Some(s) = stage("launch") {
        rt.block_on(launch_bench::launch(&s.p, 20, Duration::from_secs(if quick { 2 } else { 10 })));
    }
    #[cfg(target_os = "linux")]
    if let Some(s) = stage("live") {
        rt.block_on(live_bench::live(
            &s.p,
            if quick { 20 } else { 200 },
            Duration::from_secs(if quick { 2 } else { 10 }),
        ));
        live_bench::reuse();
    }
    if let Some(s) = stage("mergequeue") {
        // A git repository in the stage's project: the runs' code tasks work there.
        rt.block_on(merge_queue_bench::run(&s.p, if quick { 10 } else { 50 }));
    }
    if let Some(s) = stage("orchwake") {
        rt.block_on(orch_bench::done_to_wait(&s.p, scale.orch_wakes));
    }
    if let Some(s) = stage("wake") {
        rt.block_on(wake_latency(&s.p, scale.wakes));
    }
    if let Some(s) = stage("wakeload") {
        rt.block_on(scale_bench::wake_under_load(&s.p, scale.wakes));
    }
    if let Some(s) = stage("sends") {
        rt.block_on(sends_bench::send_throughput(&s.p, s.pid(), 32, scale.sends_per_client));
        report("daemon RSS after the sends (SQLite page cache warm)", format!("{:.1} MiB", rss_mib(s.pid())));
    }
    if let Some(s) = stage("search") {
        rt.block_on(search_bench::search(&s.p, scale.cli_sends * 100));
    }
    if let Some(s) = stage("claims") {
        rt.block_on(claim_contention(&s.p, 32, scale.claim_threads));
    }
    if run("pg") {
        rt.block_on(pg_bench::run(quick, budgets));
    }
    if let Some(s) = stage("inbox") {
        rt.block_on(control_bench::memory(scale.wakes));
        rt.block_on(control_bench::daemon(&s.p, scale.orch_wakes));
    }
    if let Some(s) = stage("permission") {
        rt.block_on(control_bench::permission(&s.p, scale.cli_sends));
    }
    if let Some(s) = stage("fetch") {
        rt.block_on(scale_bench::fetch_scaling(&s.p, scale.fetch_max, scale.cli_sends));
    }
    if let Some(s) = stage("cli") {
        cli_send(&s.p, scale.cli_sends);
    }
    if let Some(s) = stage("pending") {
        session_bench::pending(&s.p, scale.cli_sends);
    }
    if let Some(s) = stage("hook") {
        session_bench::hook(&s.p, scale.cli_sends);
    }
    if let Some(s) = stage("lead") {
        rt.block_on(lead_bench::question_to_lead(&s.p, if quick { 10 } else { 50 }));
        lead_bench::team_run(&s.p);
    }
    if let Some(s) = stage("mcp-tokens") {
        rt.block_on(mcp_tokens::run(&s.p));
    }
    if run("dashboard") {
        dashboard_bench::run(&rt, quick);
    }
    if run("dashboard-live") {
        dashboard_live_bench::run(&rt, quick);
    }
    if only.as_deref() == Some("screenshots") {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs");
        dashboard_bench::screenshots(&rt, &dir);
    }
}

/// One measure's own project and daemon; the daemon is stopped (TERM) when it drops.
struct Stage {
    p: Project,
    d: Option<coord_tests::Daemon>,
}

impl Stage {
    fn start() -> Stage {
        let p = Project::new();
        let d = p.serve();
        Stage { p, d: Some(d) }
    }

    fn pid(&self) -> u32 {
        self.d.as_ref().map_or(0, |d| d.pid())
    }
}

impl Drop for Stage {
    fn drop(&mut self) {
        if let Some(d) = self.d.take() {
            d.signal("TERM");
        }
    }
}

pub(crate) fn report(what: &str, result: String) {
    println!("{what:<58} {result}");
}

pub(crate) fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

pub(crate) fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1000.0)
}

fn msg(s: &str) -> MessageInput {
    MessageInput { summary: s.into(), ..Default::default() }
}

async fn new_thread(c: &Client, to: &str) -> String {
    c.send(SendParams { from: "lead".into(), to: to.into(), message: msg("bench"), ..Default::default() })
        .await
        .unwrap()
        .thread
        .thread_id
}

/// A waiter subscribed to a thread; the leader replies; time until the waiter has the
/// notification in hand. This includes the reply's request transit and commit, so it is an
/// upper bound of commit-to-notification.
async fn wake_latency(p: &Project, n: usize) {
    let waiter = p.client().await;
    let leader = p.client().await;
    let thr = new_thread(&leader, "w").await;
    let mut lat = time_wakes(&waiter, &leader, &thr, n).await;
    lat.sort();
    report(
        &format!("wake latency, reply -> subscribed waiter ({n} wakes)"),
        format!(
            "p50 {}  p99 {}  p99.9 {}  max {}",
            ms(percentile(&lat, 0.5)),
            ms(percentile(&lat, 0.99)),
            ms(percentile(&lat, 0.999)),
            ms(lat[n - 1])
        ),
    );
}

/// `n` wakes of `waiter` (subscribed to `thr`'s answers) by `leader`'s replies, in order.
pub(crate) async fn time_wakes(waiter: &Client, leader: &Client, thr: &str, n: usize) -> Vec<Duration> {
    let filter =
        EventFilter { thread_id: Some(thr.to_string()), kinds: vec![MessageKind::Answer], ..Default::default() };
    let mut sub = waiter.subscribe(filter).await.unwrap();
    let mut lat = Vec::with_capacity(n);
    for i in 0..n {
        let params = ReplyParams {
            from: "lead".into(),
            thread_id: thr.to_string(),
            message: msg(&format!("a{i}")),
            ..Default::default()
        };
        let t0 = Instant::now();
        let woke = async {
            sub.next().await.unwrap().unwrap();
            t0.elapsed()
        };
        let (r, d) = tokio::join!(leader.reply(params), woke);
        r.unwrap();
        lat.push(d);
    }
    lat
}

/// Many workers race for the same threads in the same order: nearly every attempt
/// conflicts. Counts attempts (grants and refusals) per second.
async fn claim_contention(p: &Project, clients: usize, threads: usize) {
    let leader = p.client().await;
    let mut ids = Vec::with_capacity(threads);
    for _ in 0..threads {
        ids.push(new_thread(&leader, "pool").await);
    }
    let ids = Arc::new(ids);
    let mut cs = Vec::new();
    for _ in 0..clients {
        cs.push(Arc::new(p.client().await));
    }
    let t0 = Instant::now();
    let tasks: Vec<_> = cs
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            let ids = ids.clone();
            tokio::spawn(async move {
                let mut won = 0usize;
                for t in ids.iter() {
                    let p = ClaimParams { agent: format!("w{i}"), thread_id: t.clone(), lease_seconds: Some(600) };
                    if c.claim(p).await.is_ok() {
                        won += 1;
                    }
                }
                won
            })
        })
        .collect();
    let mut grants = 0;
    for t in tasks {
        grants += t.await.unwrap();
    }
    let secs = t0.elapsed().as_secs_f64();
    let attempts = clients * threads;
    assert_eq!(grants, threads, "exactly one grant per thread");
    report(
        &format!("claims/s under contention, {clients} claimers x {threads} threads"),
        format!("{:.0} attempts/s ({grants} grants, {} refusals)", attempts as f64 / secs, attempts - grants),
    );
}

async fn subscriptions_rss(p: &Project, pid: u32, n: usize) {
    let per_conn = 100;
    let mut conns = Vec::new();
    let mut subs = Vec::new();
    for i in 0..n.div_ceil(per_conn) {
        let c = p.client().await;
        for j in 0..per_conn.min(n - i * per_conn) {
            let f = EventFilter { agent: Some(format!("idle{i}-{j}")), ..Default::default() };
            subs.push(c.subscribe(f).await.unwrap());
        }
        conns.push(c);
    }
    report(
        &format!("daemon RSS, {} open subscriptions on {} connections", subs.len(), conns.len()),
        format!("{:.1} MiB", rss_mib(pid)),
    );
}

/// Whole-process `inbox send --json` against the warm daemon, spawned one after another.
fn cli_send(p: &Project, n: usize) {
    let mut lat = Vec::with_capacity(n);
    for i in 0..n {
        let t0 = Instant::now();
        let out =
            p.inbox().args(["send", "--from", "lead", "--to", "w", "--summary", &format!("cli {i}"), "--json"]).run();
        lat.push(t0.elapsed());
        assert_eq!(out.code, 0, "{out:?}");
    }
    lat.sort();
    report(
        &format!("whole-process `inbox send --json`, warm daemon ({n} runs)"),
        format!("p50 {}  p99 {}", ms(percentile(&lat, 0.5)), ms(percentile(&lat, 0.99))),
    );
}
