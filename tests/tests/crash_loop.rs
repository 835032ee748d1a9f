//! The short crash loop (the long one is `coord-bench --only crash-loop`): 16 simulated
//! agents work through the real client while the daemon is killed with `kill -9` at random
//! moments, six times. After each restart `coordd check` passes, every acknowledged write
//! is present, event ids have no gap, no lease generation was granted twice, and a waiter
//! subscribed across the crashes resumes with no gap and no duplicate.

use coord_tests::Project;
use coord_tests::sim::crash::{Plan, run};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sixteen_agents_survive_six_kill_9s() {
    let seed = std::env::var("COORD_CRASH_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x5eed);
    eprintln!("crash loop seed {seed} (COORD_CRASH_SEED reproduces it)");
    let p = Project::new();
    let plan = Plan { rounds: 6, agents: 16, calls_between_kills: (100, 400), seed };
    let rounds = run(&p, &plan).await.unwrap_or_else(|e| panic!("seed {seed}: {e}"));
    eprintln!("{rounds:#?}");
    let last = rounds.last().unwrap();
    assert!(last.acked > 200 && last.events >= last.acked, "{rounds:?}");
}
