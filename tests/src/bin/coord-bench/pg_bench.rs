//! `--only pg`: PostgreSQL beside SQLite, in one run. One instance and two instances (two
//! daemons, two project directories, one database) of a server the bench starts itself
//! (Debian's PostgreSQL on a Unix socket, `fsync=off` like every test server here, so the
//! figures are of coordd and not of this machine's disk), and the cost of the cursor
//! scheme measured on the server directly.

use std::sync::Arc;
use std::time::{Duration, Instant};

use coord_client::Client;
use coord_proto::api::InboxApiClient;
use coord_proto::types::*;
use coord_tests::Project;
use coord_tests::pg::{self, Server};

use super::hosts::{self, Budgets};
use super::procfs::{comm_cpu_secs, thread_cpu_secs};
use super::sends_bench::sends;
use super::{cpu_secs, ms, percentile, report};
use super::{idle_bench, pg_floor, pg_writer};

pub(super) async fn clients(p: &Project, n: usize) -> Vec<Arc<Client>> {
    let mut v = Vec::new();
    for _ in 0..n {
        v.push(Arc::new(p.client().await));
    }
    v
}

/// Every claimer races for every thread; attempts per second (one grant per thread).
async fn claims(cs: Vec<Arc<Client>>, threads: &[String]) -> f64 {
    let ids = Arc::new(threads.to_vec());
    let attempts = cs.len() * threads.len();
    let t0 = Instant::now();
    let tasks: Vec<_> = cs
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            let ids = ids.clone();
            tokio::spawn(async move {
                let mut won = 0;
                for t in ids.iter() {
                    let p = ClaimParams { agent: format!("w{i}"), thread_id: t.clone(), lease_seconds: Some(600) };
                    won += usize::from(c.claim(p).await.is_ok());
                }
                won
            })
        })
        .collect();
    let mut grants = 0;
    for t in tasks {
        grants += t.await.unwrap();
    }
    assert_eq!(grants, threads.len(), "exactly one grant per thread");
    attempts as f64 / t0.elapsed().as_secs_f64()
}

async fn threads(c: &Client, n: usize) -> Vec<String> {
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        let msg = MessageInput { summary: "bench".into(), ..Default::default() };
        v.push(
            c.send(SendParams { from: "lead".into(), to: "pool".into(), message: msg, ..Default::default() })
                .await
                .unwrap()
                .thread
                .thread_id,
        );
    }
    v
}

/// Wake latency percentiles: p50 and p99.
async fn wakes(waiter: &Client, leader: &Client, n: usize) -> (Duration, Duration) {
    let thr = threads(leader, 1).await.remove(0);
    let mut lat = super::time_wakes(waiter, leader, &thr, n).await;
    lat.sort();
    (percentile(&lat, 0.5), percentile(&lat, 0.99))
}

fn p50_p99((p50, p99): (Duration, Duration)) -> String {
    format!("p50 {}  p99 {}", ms(p50), ms(p99))
}

/// A daemon's wake-ups at idle, reported against `aim`; the rate.
async fn idle(what: &str, pid: u32, quick: bool, aim: &str) -> f64 {
    let window = Duration::from_secs(if quick { 2 } else { 10 });
    let (rate, who) = idle_bench::per_second(pid, Duration::from_secs(1), window).await;
    let who = if who.is_empty() { String::new() } else { format!("; woke: {who}") };
    report(
        &format!("{what}: idle wake-ups, context switches/s over {} s", window.as_secs()),
        format!("{rate:.1} /s (aim: {aim}){who}"),
    );
    rate
}

pub async fn run(quick: bool, budgets: Budgets) {
    let server = match Server::start() {
        Ok(s) => s,
        Err(e) => return report("PostgreSQL", format!("not measured: {e}")),
    };
    let (per_client, nthreads, nwakes) = if quick { (50, 100, 100) } else { (500, 1000, 2000) };

    // SQLite, same counts, same run.
    let s = Project::new().with_store("sqlite");
    let _ds = s.serve();
    report(
        &format!("SQLite: durable sends/s, 32 clients x {per_client}"),
        format!("{:.0} /s", sends(clients(&s, 32).await, per_client).await),
    );
    let t = threads(&s.client().await, nthreads).await;
    report(
        &format!("SQLite: claims/s, 32 claimers x {nthreads} threads"),
        format!("{:.0} attempts/s", claims(clients(&s, 32).await, &t).await),
    );
    report(
        &format!("SQLite: wake latency ({nwakes} wakes)"),
        p50_p99(wakes(&s.client().await, &s.client().await, nwakes).await),
    );
    let sqlite_idle = idle("SQLite daemon", _ds.pid(), quick, "0").await;

    let url = server.database();
    let a = Project::new().with_store(&url).on_host("host-a");
    let b = Project::new().with_store(&url).on_host("host-b");
    let (da, log_a) = pg_writer::serve(&a);
    let yardstick = tokio::task::block_in_place(|| pgbench_inserts(&server, if quick { 3 } else { 10 }));
    report(
        "yardstick: pgbench, single-row insert transactions/s, 32 clients",
        yardstick.as_ref().map_or_else(|e| format!("not measured: {e}"), |tps| format!("{tps:.0} /s")),
    );
    // The floors: one writer's batches, and two writers taking turns, with half as many
    // (each daemon's half of the clients) and as many (what a writer takes in once the
    // write lock is its turn).
    let mut floors = Vec::new();
    for (clients, batch) in [(1, 16), (2, 8), (2, 16)] {
        match pg_floor::send_sql_alone(&server, if quick { 3 } else { 10 }, clients, batch).await {
            Ok((rate, cpu)) => {
                floors.push(((clients, batch), rate));
                report(
                    &format!(
                        "the sends' SQL alone: pgbench, {clients} client(s), batches of {batch} sends as the writer sends them"
                    ),
                    format!("{rate:.0} sends/s  (PostgreSQL server CPU {cpu:.0} µs per send)"),
                )
            }
            Err(e) => report("the sends' SQL alone", format!("not measured: {e}")),
        }
    }
    // One instance alone: the second starts after (an idle instance still follows every
    // event the first commits).
    let stats_a = a.client().await;
    let before = pg_writer::now(&stats_a, &log_a).await;
    let cpu = CpuSplit::start(&[da.pid()]);
    let statements = Statements::reset(&url);
    let one = sends(clients(&a, 32).await, per_client).await;
    report(
        &format!("PostgreSQL, one instance: durable sends/s, 32 clients x {per_client}"),
        format!("{one:.0} /s{}", ratio(one, &yardstick)),
    );
    report("  CPU per send", cpu.per_send(32 * per_client));
    statements.report(32 * per_client);
    let after = pg_writer::now(&stats_a, &log_a).await;
    report("  its writer", pg_writer::describe(&[(&log_a, before, after)]));
    let (db, log_b) = pg_writer::serve(&b);
    let stats_b = b.client().await;
    let (before_a, before_b) = (pg_writer::now(&stats_a, &log_a).await, pg_writer::now(&stats_b, &log_b).await);
    let mut both = clients(&a, 16).await;
    both.extend(clients(&b, 16).await);
    let cpu = CpuSplit::start(&[da.pid(), db.pid()]);
    let statements = Statements::reset(&url);
    let two = sends(both, per_client).await;
    report(
        &format!("PostgreSQL, two instances: durable sends/s, 16+16 clients x {per_client}"),
        format!("{two:.0} /s ({:.2} x one instance){}", two / one, ratio(two, &yardstick)),
    );
    report("  CPU per send", cpu.per_send(32 * per_client));
    let cpu_bound = cpu.bound(32 * per_client);
    statements.report(32 * per_client);
    let (after_a, after_b) = (pg_writer::now(&stats_a, &log_a).await, pg_writer::now(&stats_b, &log_b).await);
    report("  their writers", pg_writer::describe(&[(&log_a, before_a, after_a), (&log_b, before_b, after_b)]));
    // The ratio again, B stopped and started between the phases: one sitting's rounds share
    // what the machine is doing, which moves a single pair's ratio by ±10%.
    let mut ratios = vec![two / one];
    let mut db = Some(db);
    for round in 2..=if quick { 1 } else { ROUNDS } {
        drop(db.take());
        // Each phase starts with every message of the one before indexed for search (as
        // the first round's do, see `pg_writer::now`): the indexer runs after a burst.
        settle(&stats_a).await;
        let one = sends(clients(&a, 32).await, per_client).await;
        db = Some(pg_writer::serve(&b).0);
        settle(&stats_a).await;
        let mut both = clients(&a, 16).await;
        both.extend(clients(&b, 16).await);
        let two = sends(both, per_client).await;
        report(
            &format!("  round {round}: one instance, then two (B stopped, then started)"),
            format!("{one:.0} /s, {two:.0} /s ({:.2} x)", two / one),
        );
        ratios.push(two / one);
    }
    // The same rounds with each daemon on a host of its own, emulated: what a second host
    // adds, where the plain rounds measure this machine's cores.
    let rounds = if quick { 1 } else { ROUNDS };
    let hosted = hosts::rounds(&server, (&a, da.pid()), &b, &mut db, &stats_a, per_client, (budgets, rounds)).await;
    if let Err(e) = &hosted {
        report("  hosts emulated", format!("not measured: {e}"));
    }
    let db = db.unwrap_or_else(|| pg_writer::serve(&b).0);
    let t = threads(&a.client().await, nthreads).await;
    let mut both = clients(&a, 16).await;
    both.extend(clients(&b, 16).await);
    report(
        &format!("PostgreSQL, two instances: claims/s, 16+16 claimers x {nthreads} threads"),
        format!("{:.0} attempts/s", claims(both, &t).await),
    );
    report(
        &format!("PostgreSQL, one instance: wake latency ({nwakes} wakes)"),
        p50_p99(wakes(&a.client().await, &a.client().await, nwakes).await),
    );
    let cross = wakes(&b.client().await, &a.client().await, nwakes).await;
    report(&format!("PostgreSQL: wake latency, commit on A -> waiter on B ({nwakes} wakes)"), p50_p99(cross));
    let idle_a = idle("PostgreSQL daemon A", da.pid(), quick, "at most 1, woken by notifications only").await;
    let idle_b = idle("PostgreSQL daemon B", db.pid(), quick, "at most 1, woken by notifications only").await;
    report("aims (issue 34)", String::new());
    report("  two instances / one instance (aim >= 1.0, goal 1.6)", median_of(&ratios));
    report(
        &format!(
            "  the same, hosts emulated: each daemon on {} core, the server {}, the clients {}",
            budgets.daemon, budgets.server, budgets.clients
        ),
        hosted.as_deref().map_or_else(|e| format!("not measured: {e}"), median_of),
    );
    report("    beside it, the SQL floor: 2 writers taking turns / 1 writer", floor_ratio(&floors));
    report(
        "    beside it, the CPU bound: the machine's cores / the two instances' CPU per send",
        format!("{cpu_bound:.0} sends/s ({:.2} x one instance)", cpu_bound / one),
    );
    report("  cross-daemon wake p50 (aim <= 5 ms)", format!("{} (p99 {})", ms(cross.0), ms(cross.1)));
    report("  idle SQLite daemon, wake-ups/s (aim 0)", format!("{sqlite_idle:.1}"));
    report(
        "  idle PostgreSQL daemons, context switches/s (aim: notifications only, <= 1 timer a second)",
        format!(
            "A {idle_a:.1}, B {idle_b:.1} (the non-holder's one try a second of the duties lock: 3.6-3.8 switches)"
        ),
    );

    let n = if quick { 500 } else { 5000 };
    let db = server.database();
    pg::off_runtime(move || cursor_cost(&db, n));
}

/// Index every message not indexed yet (a search does), so that a phase does not share
/// the machine with the indexing of the one before.
pub(super) async fn settle(c: &Client) {
    use coord_proto::api::SearchApiClient;
    let q = SearchParams { query: "settle".into(), limit: Some(1), ..Default::default() };
    c.search(q).await.expect("search");
}

/// Rounds of one instance, then two, in a full run (the first with the statistics).
const ROUNDS: usize = 3;

/// `0.92 (median of 3 rounds: 0.83, 0.92, 1.05)`, or the one ratio.
fn median_of(ratios: &[f64]) -> String {
    let mut sorted = ratios.to_vec();
    sorted.sort_by(f64::total_cmp);
    let each: Vec<String> = ratios.iter().map(|r| format!("{r:.2}")).collect();
    match sorted.len() {
        0 => "not measured".into(),
        1 => each[0].clone(),
        n => format!("{:.2} (median of {n} rounds: {})", sorted[n / 2], each.join(", ")),
    }
}

/// The SQL floor's ratio: two `pgbench` writers taking turns (batches of 8, of 16) against
/// one (batches of 16), or why it is missing.
fn floor_ratio(floors: &[((u32, u32), f64)]) -> String {
    let at = |k| floors.iter().find(|(f, _)| *f == k).map(|(_, r)| *r);
    match (at((1, 16)), at((2, 8)), at((2, 16))) {
        (Some(one), Some(eight), Some(sixteen)) => {
            format!("{:.2} (batches of 8), {:.2} (of 16)", eight / one, sixteen / one)
        }
        _ => "not measured".into(),
    }
}

/// Where a phase's CPU went, on the machine's cores: the daemons (and their writer
/// threads), the PostgreSQL server (all its processes) and the bench's own clients.
struct CpuSplit {
    pids: Vec<u32>,
    daemons: f64,
    writers: f64,
    server: f64,
    bench: f64,
}

fn daemons_cpu(pids: &[u32]) -> (f64, f64) {
    (pids.iter().map(|p| cpu_secs(*p)).sum(), pids.iter().map(|p| thread_cpu_secs(*p, WRITER)).sum())
}

impl CpuSplit {
    fn start(pids: &[u32]) -> CpuSplit {
        let (daemons, writers) = daemons_cpu(pids);
        CpuSplit {
            pids: pids.to_vec(),
            daemons,
            writers,
            server: comm_cpu_secs("postgres"),
            bench: cpu_secs(std::process::id()),
        }
    }

    /// The sends per second this machine's cores allow at the CPU per send spent since
    /// [`CpuSplit::start`] (daemons, server and the bench's clients), `n` sends.
    fn bound(&self, n: usize) -> f64 {
        let (daemons, _) = daemons_cpu(&self.pids);
        let spent = (daemons - self.daemons)
            + (comm_cpu_secs("postgres") - self.server)
            + (cpu_secs(std::process::id()) - self.bench);
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
        cores * n as f64 / spent
    }

    /// The CPU per send since [`CpuSplit::start`], `n` sends.
    fn per_send(&self, n: usize) -> String {
        let us = |now: f64, then: f64| (now - then) * 1e6 / n as f64;
        let (daemons, writers) = daemons_cpu(&self.pids);
        let (d, w) = if self.pids.len() == 1 { ("daemon", "its writer thread") } else { ("daemons", "their writers") };
        format!(
            "{d} {:.0} µs ({w} {:.0}), PostgreSQL server {:.0} µs, bench clients {:.0} µs",
            us(daemons, self.daemons),
            us(writers, self.writers),
            us(comm_cpu_secs("postgres"), self.server),
            us(cpu_secs(std::process::id()), self.bench),
        )
    }
}

/// The server time of each statement during a phase (`pg_stat_statements`), when the
/// server loads it (COORD_BENCH_PG_STATEMENTS=1).
struct Statements(Option<String>);

impl Statements {
    fn reset(url: &str) -> Statements {
        if !std::env::var("COORD_BENCH_PG_STATEMENTS").is_ok_and(|v| v == "1") {
            return Statements(None);
        }
        let u = url.to_string();
        pg::off_runtime(move || {
            let mut c = Server::connect(&u);
            c.batch_execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements; SELECT pg_stat_statements_reset()")
                .unwrap();
        });
        Statements(Some(url.to_string()))
    }

    /// The statements that took the most server time, per send of the phase's `n`, and
    /// the execution time of one call (min / mean / max).
    fn report(&self, n: usize) {
        let Some(url) = self.0.clone() else { return };
        let rows: Vec<(String, i64, [f64; 5])> = pg::off_runtime(move || {
            let mut c = Server::connect(&url);
            c.query(
                "SELECT left(regexp_replace(query, '\\s+', ' ', 'g'), 60), calls, total_exec_time + total_plan_time, \
                 total_plan_time, min_exec_time, mean_exec_time, max_exec_time FROM pg_stat_statements WHERE calls > 0 \
                 ORDER BY 3 DESC LIMIT 10",
                &[],
            )
            .unwrap()
            .iter()
            .map(|r| (r.get(0), r.get(1), [r.get(2), r.get(3), r.get(4), r.get(5), r.get(6)]))
            .collect()
        });
        for (q, calls, [ms, plan, min, mean, max]) in rows {
            let per = |t: f64| t * 1000.0 / n as f64;
            report(
                &format!("  statement: {q}"),
                format!(
                    "{calls} calls, {:.1} µs per send (planning {:.1}); a call {:.3} / {:.3} / {:.3} ms (min / mean / max)",
                    per(ms),
                    per(plan),
                    min,
                    mean,
                    max
                ),
            );
        }
    }
}

/// The PostgreSQL writer thread's name as /proc shows it (cut to 15 bytes).
const WRITER: &str = "coordd-pg-write";

/// `  (0.42 x the yardstick)`, or nothing when the yardstick was not measured.
fn ratio(rate: f64, yardstick: &Result<f64, String>) -> String {
    yardstick.as_ref().map_or(String::new(), |y| format!("  ({:.2} x the yardstick)", rate / y))
}

/// The yardstick for PostgreSQL sends: `pgbench` (it ships with the server) running one
/// single-row insert per transaction from 32 clients on 2 threads, for `secs` seconds, on
/// a database of its own on the same server; transactions per second.
fn pgbench_inserts(server: &Server, secs: u32) -> Result<f64, String> {
    let url = server.database();
    let db = url.trim_start_matches("postgres:///").split('?').next().unwrap_or_default().to_string();
    pg::off_runtime(|| {
        Server::connect(&url).batch_execute("CREATE TABLE yard (id BIGSERIAL PRIMARY KEY, body TEXT NOT NULL)")
    })
    .map_err(|e| format!("cannot create the yardstick's table: {e}"))?;
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let script = dir.path().join("insert.sql");
    std::fs::write(&script, "INSERT INTO yard (body) VALUES ('durable send');\n").map_err(|e| e.to_string())?;
    let out = server
        .pgbench(&db)
        .args(["-n", "-c", "32", "-j", "2", "-T", &secs.to_string(), "-f"])
        .arg(&script)
        .output()
        .map_err(|e| format!("cannot run pgbench: {e}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    // "tps = 9876.543210 (without initial connection time)"
    stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("tps = ")?.split_whitespace().next()?.parse().ok())
        .ok_or_else(|| format!("no tps in pgbench's output: {stdout} {}", String::from_utf8_lossy(&out.stderr)))
}

/// The cursor scheme on the server itself: one event per transaction, ids from the
/// counter row (locked, stored back) as the writer takes them, against ids from a plain
/// sequence; one writer, then two at once.
fn cursor_cost(url: &str, n: usize) {
    let mut c = Server::connect(url);
    c.batch_execute(
        "CREATE TABLE ev_seq (id BIGSERIAL PRIMARY KEY, body TEXT); \
         CREATE TABLE ev_ctr (id BIGINT PRIMARY KEY, body TEXT); \
         CREATE TABLE ctr (one BOOLEAN PRIMARY KEY, last BIGINT NOT NULL); INSERT INTO ctr VALUES (true, 0);",
    )
    .unwrap();
    let one = |url: String, counter: bool, n: usize| {
        std::thread::spawn(move || {
            let mut c = Server::connect(&url);
            for _ in 0..n {
                let mut tx = c.transaction().unwrap();
                if counter {
                    let last: i64 = tx.query_one("SELECT last FROM ctr FOR UPDATE", &[]).unwrap().get(0);
                    tx.execute("INSERT INTO ev_ctr (id, body) VALUES ($1, 'e')", &[&(last + 1)]).unwrap();
                    tx.execute("UPDATE ctr SET last = $1", &[&(last + 1)]).unwrap();
                } else {
                    tx.execute("INSERT INTO ev_seq (body) VALUES ('e')", &[]).unwrap();
                }
                tx.commit().unwrap();
            }
        })
    };
    for writers in [1usize, 2] {
        let mut per = Vec::new();
        for counter in [false, true] {
            let t0 = Instant::now();
            let hs: Vec<_> = (0..writers).map(|_| one(url.to_string(), counter, n)).collect();
            hs.into_iter().for_each(|h| h.join().unwrap());
            let us = t0.elapsed().as_secs_f64() * 1e6 / (writers * n) as f64;
            per.push(Duration::from_secs_f64(us / 1e6));
        }
        report(
            &format!("cursor scheme: one-event transactions, {writers} writer(s) x {n}"),
            format!(
                "sequence {:.1} µs/tx, counter row {:.1} µs/tx",
                per[0].as_secs_f64() * 1e6,
                per[1].as_secs_f64() * 1e6
            ),
        );
    }
}
