//! `--only sends`: durable sends from 32 clients at once against the single-row WAL
//! yardstick, with where the CPU goes (the daemon, its writer thread, the bench's own
//! clients), and the ceiling the RPC layer alone sets on the same two cores: the same
//! clients making calls that touch no store.

use std::sync::Arc;
use std::time::Instant;

use coord_client::Client;
use coord_proto::api::{DashboardApiClient, InboxApiClient};
use coord_proto::types::*;
use coord_tests::Project;

use super::procfs::thread_cpu_secs;
use super::{cpu_secs, report, sqlite_floor, yardstick};

pub async fn send_throughput(p: &Project, pid: u32, clients: usize, per_client: usize) {
    let mut cs = Vec::new();
    for _ in 0..clients {
        cs.push(Arc::new(p.client().await));
    }
    let cpu0 = cpu_secs(pid);
    let writer0 = thread_cpu_secs(pid, "coordd-writer");
    let bench0 = cpu_secs(std::process::id());
    let t0 = Instant::now();
    sends(cs, per_client).await;
    let total = clients * per_client;
    let secs = t0.elapsed().as_secs_f64();
    let cpu = cpu_secs(pid) - cpu0;
    let writer = thread_cpu_secs(pid, "coordd-writer") - writer0;
    let bench = cpu_secs(std::process::id()) - bench0;
    let rate = total as f64 / secs;
    let per_send = |secs: f64| secs * 1e6 / total as f64;
    report(
        &format!("durable sends/s, {clients} concurrent clients ({total} sends)"),
        format!("{rate:.0} /s  (daemon CPU {:.1} µs per send)", per_send(cpu)),
    );
    // Where the CPU goes: the writer thread is the serial part; the bench's own clients
    // share the machine's cores with the daemon.
    report(
        "  CPU per send: daemon's writer thread / bench clients",
        format!("{:.1} µs / {:.1} µs", per_send(writer), per_send(bench)),
    );
    match yardstick::sqlite_single_row(p.path(), 5.0) {
        Ok(y) => report(
            "yardstick: single-row WAL transactions/s (python3 sqlite3)",
            format!("{y:.0} /s  (sends: {:.2} x the yardstick)", rate / y),
        ),
        Err(e) => report("yardstick: single-row WAL transactions/s", format!("not measured: {e}")),
    }
    rpc_ceiling(p, pid, clients, per_client).await;
    // The SQL of the sends alone, on a fresh database of the daemon's schema.
    let fresh = Project::new();
    drop(fresh.serve());
    match tokio::task::block_in_place(|| sqlite_floor::send_sql_alone(&fresh.path().join(".agents/coord.db"), 5.0)) {
        Ok((rate, cpu)) => report(
            "the sends' SQL alone: one thread, transactions of 32 sends",
            format!("{rate:.0} sends/s  (CPU {cpu:.1} µs per send)"),
        ),
        Err(e) => report("the sends' SQL alone", format!("not measured: {e}")),
    }
}

/// Sends from every client at once; sends per second.
pub async fn sends(cs: Vec<Arc<Client>>, per_client: usize) -> f64 {
    let n = cs.len() * per_client;
    let t0 = Instant::now();
    let tasks: Vec<_> = cs
        .into_iter()
        .enumerate()
        .map(|(i, c)| {
            tokio::spawn(async move {
                for j in 0..per_client {
                    let msg = MessageInput { summary: "durable send".into(), ..Default::default() };
                    let p = SendParams {
                        from: format!("lead{i}"),
                        to: format!("w{}", j % 16),
                        message: msg,
                        ..Default::default()
                    };
                    c.send(p).await.unwrap();
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    n as f64 / t0.elapsed().as_secs_f64()
}

/// The RPC layer's ceiling: `clients` clients each making `per_client` calls of
/// `dashboard.status` (answered from the daemon's memory: no store, no writer), as fast as
/// they can, one call outstanding per client like the sends. Calls per second and the CPU
/// per call of the daemon and of the bench's clients.
pub async fn rpc_ceiling(p: &Project, pid: u32, clients: usize, per_client: usize) {
    let mut cs: Vec<Arc<Client>> = Vec::new();
    for _ in 0..clients {
        cs.push(Arc::new(p.client().await));
    }
    let (cpu0, bench0) = (cpu_secs(pid), cpu_secs(std::process::id()));
    let t0 = Instant::now();
    let tasks: Vec<_> = cs
        .into_iter()
        .map(|c| {
            tokio::spawn(async move {
                for _ in 0..per_client {
                    c.dashboard_status().await.unwrap();
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
    let total = (clients * per_client) as f64;
    let secs = t0.elapsed().as_secs_f64();
    let per_call = |s: f64| s * 1e6 / total;
    report(
        &format!("ceiling: calls that touch no store/s, {clients} clients (dashboard.status)"),
        format!(
            "{:.0} /s  (CPU per call: daemon {:.1} µs, bench clients {:.1} µs)",
            total / secs,
            per_call(cpu_secs(pid) - cpu0),
            per_call(cpu_secs(std::process::id()) - bench0)
        ),
    );
}
