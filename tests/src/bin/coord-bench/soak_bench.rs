//! Long runs that are not CI tests: the 100-agent soak (`--only soak`), the long crash loop
//! (`--only crash-loop`), the memory abuse the issue measured through the raw socket
//! (`--only abuse`), and lists of large messages read page by page (`--only replies`).

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use coord_client::Client;
use coord_tests::sim::{self, AgentPlan, Ledger, World, percentile};
use coord_tests::{Project, open_fds, proc_mib};
use tokio::sync::watch;

use super::report;

/// How the soak runs (`--agents N`, `--minutes M`, `--think-ms T`).
pub struct Soak {
    pub agents: usize,
    pub duration: Duration,
    pub think: Duration,
}

/// 100 simulated agents for 10 minutes; throughput, latency per operation, errors, the
/// daemon's RSS and descriptors over time, then the integrity and durability checks.
pub async fn soak(p: &Project, pid: u32, socket: &std::path::Path, s: &Soak) {
    let ledger = Arc::new(Ledger::default());
    let (stop_tx, stop) = watch::channel(false);
    let (_restarted, restarts) = watch::channel(0u64);
    let world = World { socket: socket.to_path_buf(), ledger: ledger.clone(), stop, restarts };
    let mut tasks = tokio::task::JoinSet::new();
    for index in 0..s.agents {
        let plan =
            AgentPlan { index, agents: s.agents, seed: 0x50a4, think: s.think, answer_wait: Duration::from_secs(5) };
        tasks.spawn(sim::agent(plan, world.clone()));
    }
    let t0 = Instant::now();
    let every = (s.duration / 10).max(Duration::from_secs(1));
    let mut samples = vec![(Duration::ZERO, proc_mib(pid, "VmRSS"), open_fds(pid), 0usize)];
    while t0.elapsed() < s.duration {
        tokio::time::sleep(every.min(s.duration.saturating_sub(t0.elapsed()))).await;
        samples.push((t0.elapsed(), proc_mib(pid, "VmRSS"), open_fds(pid), ledger.calls()));
    }
    let _ = stop_tx.send(true);
    while tasks.join_next().await.is_some() {}
    let secs = t0.elapsed().as_secs_f64();

    let stats = ledger.stats();
    let calls: usize = stats.values().map(|o| o.micros.len()).sum();
    report(
        &format!("soak: {} agents, {:.0} s, think {} ms", s.agents, secs, s.think.as_millis()),
        format!("{calls} calls, {:.0} calls/s, {} acknowledged writes", calls as f64 / secs, ledger.acked().len()),
    );
    println!(
        "  {:<26} {:>9} {:>8} {:>9} {:>9} {:>9}  errors",
        "operation", "calls", "/s", "p50 ms", "p99 ms", "max ms"
    );
    for (op, o) in &stats {
        let mut m = o.micros.clone();
        m.sort_unstable();
        let errors: Vec<String> = o.errors.iter().map(|(c, n)| format!("{c} {n}")).collect();
        println!(
            "  {op:<26} {:>9} {:>8.1} {:>9.2} {:>9.2} {:>9.2}  {}",
            m.len(),
            m.len() as f64 / secs,
            percentile(&m, 50.0) as f64 / 1000.0,
            percentile(&m, 99.0) as f64 / 1000.0,
            m.last().copied().unwrap_or(0) as f64 / 1000.0,
            if errors.is_empty() { "-".to_string() } else { errors.join(", ") }
        );
    }
    println!("  {:>8} {:>9} {:>6} {:>9}", "time s", "RSS MiB", "fds", "calls");
    for (t, rss, fds, n) in &samples {
        println!("  {:>8.0} {rss:>9} {fds:>6} {n:>9}", t.as_secs_f64());
    }
    let client = Client::connect_socket(socket).await.expect("connect");
    let acked = ledger.acked();
    let found = sim::verify(&client, &acked).await.expect("read the event stream");
    let lost = found.problems.iter().filter(|p| p.contains("missing")).count();
    let double = found.problems.iter().filter(|p| p.contains("granted twice")).count();
    report(
        "soak: acknowledged writes checked against the event stream",
        format!("{} checked, {lost} lost, {double} double grants, {} events", found.acked, found.events),
    );
    for problem in found.problems.iter().take(10) {
        println!("  PROBLEM {problem}");
    }
    let check = p.coordd().args(["check", "--json"]).run();
    report("soak: coordd check (integrity, event ids)", check.stdout.trim().to_string());
}

/// The long crash loop: 20 rounds of `kill -9` under 16 agents.
pub async fn crash_loop(p: &Project, rounds: usize) {
    let plan = sim::crash::Plan { rounds, agents: 16, calls_between_kills: (500, 5000), seed: 0xc4a5 };
    let t0 = Instant::now();
    match sim::crash::run(p, &plan).await {
        Ok(r) => {
            let worst = r.iter().map(|x| x.restart).max().unwrap_or_default();
            let last = r.last().expect("rounds");
            report(
                &format!("crash loop: {rounds} x kill -9 under 16 agents"),
                format!(
                    "all checks passed; {} calls, {} events, {} acknowledged writes; slowest restart {}; {:.0} s",
                    last.calls,
                    last.events,
                    last.acked,
                    super::ms(worst),
                    t0.elapsed().as_secs_f64()
                ),
            );
        }
        Err(e) => report("crash loop", format!("FAILED: {e}")),
    }
}

/// The issue's three measurements, through the raw socket: a subscriber that never reads
/// while 5 MB and 64 KB bodies are sent, and connections holding unfinished 16 MB lines.
pub fn abuse(p: &Project, socket: &std::path::Path, pid: u32) {
    let call = |c: &mut (UnixStream, BufReader<UnixStream>), line: &str| {
        c.0.write_all(line.as_bytes()).unwrap();
        c.0.write_all(b"\n").unwrap();
        let mut reply = String::new();
        c.1.read_line(&mut reply).unwrap();
        reply
    };
    let conn = || {
        let s = UnixStream::connect(socket).unwrap();
        (s.try_clone().unwrap(), BufReader::new(s))
    };
    for (n, size) in [(160usize, 5_000_000usize), (14_000, 64 * 1024)] {
        let mut stuck = conn();
        call(&mut stuck, r#"{"jsonrpc":"2.0","id":1,"method":"events.subscribe","params":{}}"#);
        let mut w = conn();
        let before = proc_mib(pid, "VmRSS");
        let body = "x".repeat(size);
        let t0 = Instant::now();
        for i in 0..n {
            let line = format!(
                r#"{{"jsonrpc":"2.0","id":{i},"method":"inbox.send","params":{{"from":"a","to":"b","summary":"s","body":"{body}"}}}}"#
            );
            call(&mut w, &line);
        }
        report(
            &format!("a subscriber that never reads, {n} sends of {} KB", size / 1024),
            format!(
                "RSS {before} -> {} MiB (peak {} MiB), {:.0} s",
                proc_mib(pid, "VmRSS"),
                proc_mib(pid, "VmHWM"),
                t0.elapsed().as_secs_f64()
            ),
        );
    }
    let before = proc_mib(pid, "VmRSS");
    let part = vec![b'x'; 16 * 1024 * 1024 - 1];
    let mut held: Vec<UnixStream> = Vec::new();
    for _ in 0..40 {
        let mut s = UnixStream::connect(socket).unwrap();
        s.write_all(&part).unwrap();
        held.push(s);
    }
    report(
        "40 connections each holding an unfinished 16 MB line",
        format!("RSS {before} -> {} MiB (peak {} MiB)", proc_mib(pid, "VmRSS"), proc_mib(pid, "VmHWM")),
    );
    drop(held);
    // Many subscribers that never read, on connections of their own: each may hold its
    // subscription's budget and one event more, and all of them the daemon's output budget.
    for n in [1usize, 40, 100] {
        let mut stuck: Vec<_> = (0..n).map(|_| conn()).collect();
        for s in &mut stuck {
            call(s, r#"{"jsonrpc":"2.0","id":1,"method":"events.subscribe","params":{}}"#);
        }
        let mut w = conn();
        let before = proc_mib(pid, "VmRSS");
        let body = "x".repeat(5_000_000);
        for i in 0..30 {
            let line = format!(
                r#"{{"jsonrpc":"2.0","id":{i},"method":"inbox.send","params":{{"from":"a","to":"b","summary":"s","body":"{body}"}}}}"#
            );
            call(&mut w, &line);
        }
        report(
            &format!("{n} connection(s) subscribed and never reading, 30 sends of 5 MB"),
            format!("RSS {before} -> {} MiB (peak {} MiB)", proc_mib(pid, "VmRSS"), proc_mib(pid, "VmHWM")),
        );
    }
    let _ = p;
}

/// Messages of 1 MiB the `replies` measure reads: with a `limit` of 1000, a store that read
/// a page's rows before cutting them would hold all of them.
const REPLY_MESSAGES: usize = 100;

/// Issue 26's measurement: lists of 1 MiB messages read whole, page after page
/// ([`REPLY_MESSAGES`] in one thread; `events.list` with `limit` 1000, `inbox.show`,
/// `mail.list`, `view.timeline`): the largest reply line, and the daemon's resident size
/// and its peak while reading each list (the peak is reset before each, through
/// `/proc/PID/clear_refs`, so the sends do not count).
pub fn replies(socket: &std::path::Path, pid: u32) {
    use serde_json::{Value, json};
    let s = UnixStream::connect(socket).unwrap();
    let mut c = (s.try_clone().unwrap(), BufReader::new(s));
    let mut call = |method: &str, params: Value| -> (Value, usize) {
        let line = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
        c.0.write_all(line.as_bytes()).unwrap();
        c.0.write_all(b"\n").unwrap();
        let mut reply = String::new();
        c.1.read_line(&mut reply).unwrap();
        (serde_json::from_str::<Value>(&reply).unwrap()["result"].clone(), reply.len())
    };
    let body = "x".repeat(1024 * 1024);
    let (sent, _) = call("inbox.send", json!({"from": "lead", "to": "r", "summary": "m", "body": body}));
    let thread = sent["thread"]["thread_id"].clone();
    for _ in 1..REPLY_MESSAGES {
        call(
            "inbox.reply",
            json!({"from": "lead", "thread_id": thread, "kind": "progress", "summary": "m", "body": body}),
        );
    }
    let lists = [
        ("events.list", json!({"thread_id": thread, "limit": 1000}), "events", "after_event"),
        ("inbox.show", json!({"thread_id": thread}), "messages", "after_event"),
        ("mail.list", json!({"agent": "r", "limit": 500}), "mail", "before_event"),
        ("view.timeline", json!({"thread_id": thread, "limit": 1000}), "items", "before_event"),
    ];
    for (method, mut params, items, cursor) in lists {
        // "5" resets the peak resident size (VmHWM) to the current one (Linux 4.0 and later).
        let reset = std::fs::write(format!("/proc/{pid}/clear_refs"), "5").is_ok();
        let before = proc_mib(pid, "VmRSS");
        let (mut largest, mut pages, mut got, mut peak_seen) = (0, 0, 0, before);
        loop {
            let (r, size) = call(method, params.clone());
            (largest, pages) = (largest.max(size), pages + 1);
            got += r[items].as_array().map_or(0, Vec::len);
            peak_seen = peak_seen.max(proc_mib(pid, "VmRSS"));
            if r["truncated"] != true {
                break;
            }
            params[cursor] = r["next_after"].clone();
        }
        let hwm = proc_mib(pid, "VmHWM");
        let peak = if reset { format!("peak while reading {hwm} MiB") } else { format!("peak of the run {hwm} MiB") };
        report(
            &format!("{method} of {REPLY_MESSAGES} messages of 1 MiB"),
            format!(
                "{got} items in {pages} pages, largest reply {:.1} MiB; RSS {before} -> {} MiB (highest seen {peak_seen} MiB, {peak})",
                largest as f64 / 1048576.0,
                proc_mib(pid, "VmRSS"),
                peak_seen = peak_seen,
            ),
        );
    }
}
