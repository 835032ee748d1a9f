//! `coordd migrate --to postgres://…`: a project's SQLite history copied into PostgreSQL,
//! verified, restartable, and the project switched to it.

use coord_proto::api::{EventsApiClient, InboxApiClient};
use coord_proto::types::*;
use coord_tests::{Project, pg};

fn send(to: &str, summary: &str) -> SendParams {
    SendParams {
        from: "lead".into(),
        to: to.into(),
        message: MessageInput { summary: summary.into(), ..Default::default() },
        ..Default::default()
    }
}

/// Everything the project holds, as the protocol shows it.
async fn history(p: &Project) -> (Vec<Event>, Vec<Thread>) {
    let c = p.client().await;
    let events = c.events_list(EventsListParams { limit: Some(1000), ..Default::default() }).await.unwrap().events;
    let threads = c.list(ListParams { limit: Some(1000), ..Default::default() }).await.unwrap().threads;
    (events, threads)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sqlite_history_moves_to_postgres_verified_and_the_project_follows() {
    let Some(server) = pg::shared() else { return };
    let url = server.database();
    let p = Project::new().with_store("sqlite");
    let d = p.serve();
    let c = p.client().await;
    let sent = c.send(send("w1", "first")).await.unwrap();
    c.claim(ClaimParams { agent: "w1".into(), thread_id: sent.thread.thread_id.clone(), lease_seconds: None })
        .await
        .unwrap();
    for i in 0..20 {
        c.send(send("w2", &format!("task {i}"))).await.unwrap();
    }
    p.inbox().args(["agent", "register", "--name", "worker-1", "--role", "backend"]).run().ok();
    p.orch().args(["run", "create", "--goal", "g", "--id", "R1"]).run().ok();
    p.orch()
        .args(["task", "add", "--run", "R1", "--id", "T1", "--title", "t", "--assign-to", "w1", "--kind", "thread"])
        .run()
        .ok();
    p.orch().args(["dispatch", "--run", "R1", "--task", "T1"]).run().ok();
    let before = history(&p).await;
    drop(c);

    // Refused while the daemon runs.
    let busy = p.coordd().args(["migrate", "--to", &url]).run().code(3);
    assert!(busy.stderr.contains("coordd stop"), "{}", busy.stderr);
    d.signal("TERM");

    let out = p.coordd().args(["migrate", "--to", &url, "--json"]).run().ok().json();
    assert_eq!(out["copied"], true, "{out}");
    let events = out["tables"].as_array().unwrap().iter().find(|t| t["table"] == "events").unwrap().clone();
    assert_eq!(events["rows"], before.0.len() as u64);

    // The project now uses PostgreSQL (recorded in .agents/coordd.json): same history, the
    // same event ids, and new ids go on from the last one.
    let p = p.without_store();
    let _d = p.serve();
    assert_eq!(history(&p).await, before);
    let next = p.client().await.send(send("w1", "after")).await.unwrap();
    assert_eq!(next.event_id, before.0.last().unwrap().event_id + 1);
    let stored = pg::off_runtime(|| {
        let mut c = pg::Server::connect(&url);
        c.query_one("SELECT count(*) FROM threads", &[]).unwrap().get::<_, i64>(0)
    });
    assert_eq!(stored, before.1.len() as i64 + 1, "the daemon writes into PostgreSQL");
}

#[test]
fn migrating_again_only_verifies_and_a_foreign_target_is_refused() {
    let Some(server) = pg::shared() else { return };
    let url = server.database();
    let p = Project::new().with_store("sqlite");
    p.inbox().args(["send", "--from", "lead", "--to", "w", "--summary", "x"]).run().ok();
    p.coordd().args(["stop"]).run().ok();
    let first = p.coordd().args(["migrate", "--to", &url, "--json"]).run().ok().json();
    assert_eq!(first["copied"], true);
    let again = p.coordd().args(["migrate", "--to", &url, "--json"]).run().ok().json();
    assert_eq!(again["copied"], false, "a finished copy is verified again, not copied twice: {again}");
    assert_eq!(again["tables"], first["tables"]);

    let other = Project::new().with_store("sqlite");
    other.inbox().args(["send", "--from", "lead", "--to", "w", "--summary", "y"]).run().ok();
    other.coordd().args(["stop"]).run().ok();
    let refused = other.coordd().args(["migrate", "--to", &url]).run();
    assert_ne!(refused.code, 0);
    assert!(refused.stderr.contains("not a copy of this project"), "{}", refused.stderr);
}
