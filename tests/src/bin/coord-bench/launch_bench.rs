//! The launch bridge's figures: the time from `orch.dispatch` to the session's start as
//! `coord-launch` records it (`launch.started`, written once the process is spawned, so an
//! upper bound on the process's start), and the bridge's own CPU over a quiet interval with
//! 20 sessions running (read from its /proc stat; it waits on subscriptions and child exits,
//! so the aim is none at all).

use std::time::{Duration, Instant};

use coord_proto::api::OrchApiClient;
use coord_proto::types::*;
use coord_tests::Project;

use crate::orch_bench::{new_run, task};
use crate::{ms, percentile, report};

/// utime + stime of a process, in clock ticks (/proc/PID/stat fields 14 and 15).
pub(crate) fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("the bridge's stat");
    let rest = stat.rsplit_once(") ").expect("stat").1;
    let f: Vec<&str> = rest.split(' ').collect();
    // `rest` starts at field 3 (state), so field N is f[N - 3].
    f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap()
}

/// RL's events of one type after `first`.
fn after(first: i64, t: EventType) -> EventFilter {
    EventFilter { run_id: Some("RL".into()), after_event: Some(first), event_types: vec![t], ..Default::default() }
}

/// Start `sessions` sessions: the first (a warm-up) as the bridge comes up, then the others
/// one dispatch at a time to a bridge whose sessions run until stopped,
/// timing each dispatch to its `launch.started`; then, with them all running, the bridge's
/// CPU over `quiet`. The run is cancelled at the end, which stops every session.
pub async fn launch(p: &Project, sessions: usize, quiet: Duration) {
    let c = p.client().await;
    new_run(&c, "RL").await;
    for i in 0..sessions {
        c.task_add(task("RL", format!("T{i}"), vec![], TaskKind::Thread)).await.unwrap();
    }
    let cursor = c.dispatch(DispatchParams { run_id: "RL".into(), task_id: Some("T0".into()), ..Default::default() });
    let first = cursor.await.unwrap().event_id;
    let max = sessions.to_string();
    let mut bridge = p
        .launch()
        .args(["--run", "RL", "--command", "exec sleep 100000", "--max-sessions", &max, "--grace-seconds", "2"])
        .spawn();
    let filter = after(first, EventType::LaunchStarted);
    let mut started = c.subscribe(filter).await.unwrap();
    // The warm-up: T0's session, started when the bridge comes up, is not timed.
    started.next().await.unwrap().unwrap();
    let mut lat = Vec::with_capacity(sessions);
    for i in 1..sessions {
        let t0 = Instant::now();
        c.dispatch(DispatchParams { run_id: "RL".into(), task_id: Some(format!("T{i}")), ..Default::default() })
            .await
            .unwrap();
        let ev = started.next().await.unwrap().unwrap();
        lat.push(t0.elapsed());
        assert_eq!(ev.task_id, format!("T{i}"));
    }
    lat.sort();
    report(
        &format!("dispatch to session start, coord-launch ({} dispatches)", sessions - 1),
        format!("p50 {}  p99 {}", ms(percentile(&lat, 0.5)), ms(percentile(&lat, 0.99))),
    );
    let before = cpu_ticks(bridge.id());
    tokio::time::sleep(quiet).await;
    let ticks = cpu_ticks(bridge.id()) - before;
    report(
        &format!("coord-launch CPU, idle with {sessions} sessions ({}s)", quiet.as_secs()),
        format!("{ticks} ticks (1 tick = 1/100 s)"),
    );
    // The cancel has the bridge stop every session; it is stopped once they have all ended.
    let exited = after(first, EventType::LaunchExited);
    let mut exited = c.subscribe(exited).await.unwrap();
    c.orch_cancel(CancelTaskParams { run_id: "RL".into(), task_id: None, reason: "bench over".into() }).await.unwrap();
    for _ in 0..sessions {
        exited.next().await.unwrap().unwrap();
    }
    let _ = bridge.kill();
    let _ = bridge.wait();
}
