//! Figures of the redesign: `inbox fetch` as an agent's pending threads grow from 100 to a
//! million (whole process, served from an index, so it should stay flat), and wake latency
//! while a steady stream of sends keeps the WAL checkpoints coming (p99.9 and max).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use coord_client::Client;
use coord_proto::api::InboxApiClient;
use coord_proto::types::*;
use coord_tests::Project;

use crate::{ms, percentile, report};

fn msg(s: &str) -> MessageInput {
    MessageInput { summary: s.into(), ..Default::default() }
}

/// Send `n` new threads to `agent` over 32 connections, priorities mixed.
async fn fill(p: &Project, agent: &str, n: usize) {
    let clients = 32;
    let mut tasks = Vec::new();
    for c in 0..clients {
        let client = Arc::new(p.client().await);
        let agent = agent.to_string();
        let count = n / clients + usize::from(c < n % clients);
        tasks.push(tokio::spawn(async move {
            for i in 0..count {
                let priority = [Priority::Low, Priority::Normal, Priority::High][(c + i) % 3];
                let p = SendParams {
                    from: "lead".into(),
                    to: agent.clone(),
                    priority: Some(priority),
                    message: msg("pending work"),
                    ..Default::default()
                };
                client.send(p).await.unwrap();
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
}

/// Whole-process `inbox fetch --agent A --limit 50 --json` with 100 .. `max` pending
/// threads (each size a fresh agent, filled before it is measured).
pub async fn fetch_scaling(p: &Project, max: usize, runs: usize) {
    let mut size = 100;
    let mut filled = 0;
    let agent = "bench-fetch";
    while size <= max {
        fill(p, agent, size - filled).await;
        filled = size;
        let mut lat = Vec::with_capacity(runs);
        for _ in 0..runs {
            let t0 = Instant::now();
            let out = p.inbox().args(["--agent", agent, "fetch", "--limit", "50", "--json"]).run();
            lat.push(t0.elapsed());
            assert_eq!(out.code, 0, "{out:?}");
        }
        lat.sort();
        report(
            &format!("whole-process `inbox fetch --limit 50`, {size} pending"),
            format!("p50 {}  p99 {}", ms(percentile(&lat, 0.5)), ms(percentile(&lat, 0.99))),
        );
        size *= 10;
    }
}

/// A waiter woken `n` times while 16 other clients send continuously (so the writer
/// crosses many WAL checkpoints): reply → notification, p50 .. max.
pub async fn wake_under_load(p: &Project, n: usize) {
    let waiter = p.client().await;
    let leader = p.client().await;
    let thr = leader
        .send(SendParams { from: "lead".into(), to: "w".into(), message: msg("wake"), ..Default::default() })
        .await
        .unwrap()
        .thread
        .thread_id;
    let stop = Arc::new(AtomicBool::new(false));
    let mut load = Vec::new();
    for i in 0..16 {
        let c: Arc<Client> = Arc::new(p.client().await);
        let stop = stop.clone();
        load.push(tokio::spawn(async move {
            let mut sent = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let p = SendParams {
                    from: format!("load{i}"),
                    to: format!("sink{}", sent % 8),
                    message: msg("load"),
                    ..Default::default()
                };
                c.send(p).await.unwrap();
                sent += 1;
            }
            sent
        }));
    }
    let t_all = Instant::now();
    let mut lat = crate::time_wakes(&waiter, &leader, &thr, n).await;
    stop.store(true, Ordering::Relaxed);
    let mut sends = 0;
    for t in load {
        sends += t.await.unwrap();
    }
    let secs = t_all.elapsed().as_secs_f64().max(f64::EPSILON);
    lat.sort();
    report(
        &format!("wake latency under load ({n} wakes, {:.0} sends/s beside)", sends as f64 / secs),
        format!(
            "p50 {}  p99 {}  p99.9 {}  max {}",
            ms(percentile(&lat, 0.5)),
            ms(percentile(&lat, 0.99)),
            ms(percentile(&lat, 0.999)),
            ms(*lat.last().unwrap_or(&Duration::ZERO))
        ),
    );
}
