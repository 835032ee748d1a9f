//! The crash loop: simulated agents work while the daemon is killed with `kill -9` at
//! random moments and started again. After each restart: `coordd check` passes (SQLite's
//! integrity check, event ids without a gap), every acknowledged write is in the event
//! stream, no lease generation was granted twice, and a waiter that was subscribed across
//! the crash resumes and receives what was committed after it.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use coord_client::Client;
use coord_proto::api::InboxApiClient;
use coord_proto::types::*;
use tokio::sync::watch;

use super::{AgentPlan, Ledger, Rng, World, agent, verify};
use crate::{Daemon, Project};

/// How hard to shake the daemon.
#[derive(Debug, Clone)]
pub struct Plan {
    pub rounds: usize,
    pub agents: usize,
    /// Calls the agents make between two kills: a random number in this range.
    pub calls_between_kills: (usize, usize),
    pub seed: u64,
}

/// What one round saw.
#[derive(Debug, Clone)]
pub struct Round {
    pub round: usize,
    pub calls: usize,
    pub events: usize,
    pub acked: usize,
    pub restart: Duration,
}

/// Run the crash loop on `project`; `Err` describes the first broken promise.
pub async fn run(project: &Project, plan: &Plan) -> Result<Vec<Round>, String> {
    let mut daemon = tokio::task::block_in_place(|| project.serve());
    let ledger = Arc::new(Ledger::default());
    let (stop_tx, stop) = watch::channel(false);
    let (restarted, restarts) = watch::channel(0u64);
    let world = World { socket: daemon.socket.clone(), ledger: ledger.clone(), stop, restarts };
    let mut tasks = tokio::task::JoinSet::new();
    for index in 0..plan.agents {
        let a = AgentPlan {
            index,
            agents: plan.agents,
            seed: plan.seed,
            think: Duration::ZERO,
            answer_wait: Duration::from_millis(200),
        };
        tasks.spawn(agent(a, world.clone()));
    }
    let (seen_tx, mut seen) = watch::channel(0i64);
    let received = Arc::new(Mutex::new(Vec::new()));
    tasks.spawn(waiter(world.clone(), seen_tx, received.clone()));

    let mut rng = Rng::new(plan.seed);
    let mut rounds = Vec::new();
    for round in 1..=plan.rounds {
        let (lo, hi) = plan.calls_between_kills;
        let target = ledger.calls() + lo + rng.below((hi - lo + 1) as u64) as usize;
        while ledger.calls() < target {
            ledger.progress().await;
        }
        let calls = ledger.calls();
        let t = Instant::now();
        daemon = tokio::task::block_in_place(|| {
            daemon.kill9();
            project.serve()
        });
        let restart = t.elapsed();
        let _ = restarted.send(round as u64);
        let found = check(project, &daemon, &ledger).await?;
        // The waiter resumes: it receives an event committed after the restart.
        let marker = mark(&daemon).await?;
        while *seen.borrow_and_update() < marker {
            seen.changed().await.map_err(|_| "the waiter stopped".to_string())?;
        }
        rounds.push(Round { round, calls, events: found.0, acked: found.1, restart });
    }
    let _ = stop_tx.send(true);
    while tasks.join_next().await.is_some() {}
    check(project, &daemon, &ledger).await?;
    // Across every crash, the waiter saw each event exactly once, in order.
    let got = received.lock().unwrap().clone();
    let want: Vec<i64> = (1..=got.last().copied().unwrap_or(0)).collect();
    if got != want {
        return Err(format!("the waiter received {} events, not 1..={} once each", got.len(), want.len()));
    }
    drop(daemon);
    Ok(rounds)
}

/// `coordd check` and the ledger against the event stream; (events, acked writes).
async fn check(project: &Project, daemon: &Daemon, ledger: &Ledger) -> Result<(usize, usize), String> {
    let out = tokio::task::block_in_place(|| project.coordd().args(["check", "--json"]).run());
    if out.code != 0 {
        return Err(format!("coordd check failed: {}{}", out.stdout, out.stderr));
    }
    let client = Client::connect_socket(&daemon.socket).await.map_err(|e| e.to_string())?;
    let acked = ledger.acked();
    let f = verify(&client, &acked).await.map_err(|e| e.to_string())?;
    if !f.ok() {
        return Err(format!("{} problem(s): {:?}", f.problems.len(), &f.problems[..f.problems.len().min(10)]));
    }
    Ok((f.events, f.acked))
}

/// Commit one event and return its id.
async fn mark(daemon: &Daemon) -> Result<i64, String> {
    let client = Client::connect_socket(&daemon.socket).await.map_err(|e| e.to_string())?;
    let p = SendParams {
        from: "checker".into(),
        to: "nobody".into(),
        message: MessageInput { summary: "marker".into(), ..Default::default() },
        ..Default::default()
    };
    Ok(client.send(p).await.map_err(|e| e.to_string())?.event_id)
}

/// Follow the whole event stream across crashes: subscribe after the last event received,
/// again after every end of the subscription or connection.
async fn waiter(mut world: World, seen: watch::Sender<i64>, received: Arc<Mutex<Vec<i64>>>) {
    let mut cursor = 0;
    while !*world.stop.borrow() {
        let Ok(client) = Client::connect_socket(&world.socket).await else {
            tokio::select! {
                _ = world.restarts.changed() => {}
                _ = world.stop.changed() => {}
                _ = tokio::time::sleep(Duration::from_millis(50)) => {}
            }
            continue;
        };
        let filter = EventFilter { after_event: Some(cursor), ..Default::default() };
        let Ok(mut stream) = client.subscribe(filter).await else { continue };
        loop {
            let next = tokio::select! {
                n = stream.next() => n,
                _ = world.stop.changed() => return,
            };
            let Some(Ok(e)) = next else { break };
            cursor = e.event_id;
            received.lock().unwrap().push(cursor);
            let _ = seen.send(cursor);
        }
    }
}
