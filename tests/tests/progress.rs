//! Progress lines from tool subprocesses: a process started with the environment `hook
//! install` gives the session reports lines, and a subscriber sees them live; the recent
//! history is kept for late watchers; the Rust reporter never blocks.

use std::time::Duration;

use coord_inbox::ProgressReporter;
use coord_proto::api::ControlApiClient;
use coord_proto::types::*;
use coord_tests::{Project, ok_as};
use serde_json::Value;

async fn guarded<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(60), f).await.expect("hung")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_subprocess_reports_progress_that_a_subscriber_sees_live() {
    let p = Project::new();
    let _d = p.serve();
    ok_as(&p, "w1", &["hook", "install", "--task", "T1"]);
    let settings: Value =
        serde_json::from_str(&std::fs::read_to_string(p.path().join(".claude/settings.local.json")).unwrap()).unwrap();
    let env = settings["env"].as_object().unwrap().clone();
    let c = p.client().await;
    let mut sub =
        c.progress_subscribe(ProgressFilter { agent: Some("w1".into()), ..Default::default() }).await.unwrap();
    // The tool knows nothing but its environment, as Claude Code passes it to every tool.
    for (text, extra) in [("step 1 of 2", vec!["--tool-use-id", "toolu_9"]), ("all done", vec!["--type", "result"])] {
        let mut run = p.inbox().args(["progress", text]).args(extra);
        for (k, v) in &env {
            run = run.env(k, v.as_str().unwrap());
        }
        run.run().ok();
    }
    let first = guarded(sub.next()).await.unwrap().unwrap();
    let second = guarded(sub.next()).await.unwrap().unwrap();
    assert_eq!(
        (first.data.as_str(), first.line_type, first.tool_use_id.as_str()),
        ("step 1 of 2", ProgressType::Progress, "toolu_9")
    );
    assert_eq!((first.agent.as_str(), first.task_id.as_str()), ("w1", "T1"));
    assert_eq!((second.data.as_str(), second.line_type), ("all done", ProgressType::Result));
    assert_eq!(second.seq, first.seq + 1);
    assert_eq!(second.dropped, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn late_watchers_see_the_recent_lines() {
    let p = Project::new();
    let _d = p.serve();
    for n in 1..=3 {
        ok_as(&p, "w1", &["progress", &format!("line {n}")]);
    }
    let out = p.inbox().args(["watch", "--progress", "--recent", "--follow", "--count", "3", "--json"]).run().ok();
    let lines: Vec<String> =
        out.json_lines().iter().map(|v| v["progress"]["data"].as_str().unwrap().to_string()).collect();
    assert_eq!(lines, vec!["line 1", "line 2", "line 3"]);
    let recent = p.client().await.progress_recent(ProgressFilter::default()).await.unwrap();
    assert_eq!((recent.lines.len(), recent.last_seq), (3, 3));
    let e = p.inbox().args(["--agent", "w1", "progress", &"x".repeat(MAX_PROGRESS_DATA + 1), "--json"]).run();
    assert_eq!(e.code, 30, "{}", e.stdout);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rust_reporter_delivers_and_never_blocks() {
    let p = Project::new();
    let _d = p.serve();
    let reporter = ProgressReporter::spawn(p.paths().socket, "w1", Some("T1".into()));
    for n in 0..20 {
        assert!(reporter.progress(format!("{n}")));
    }
    guarded(reporter.flush()).await;
    assert_eq!(reporter.dropped(), 0);
    let recent = p.client().await.progress_recent(ProgressFilter::default()).await.unwrap();
    assert_eq!(recent.lines.len(), 20);

    // With nobody listening, lines are dropped and counted; nothing waits.
    let lost = ProgressReporter::spawn(p.path().join("no.sock"), "w1", None);
    let accepted = (0..1000).filter(|n| lost.progress(format!("{n}"))).count();
    guarded(lost.flush()).await;
    assert_eq!(lost.dropped(), 1000, "{accepted} queued, all dropped in the end");
}

#[test]
fn with_no_daemon_to_take_it_a_progress_line_is_dropped_and_the_tool_goes_on() {
    let p = Project::new();
    let gone = p.path().join("no-daemon.sock");
    let v = p
        .inbox()
        .args(["--agent", "w1", "progress", "12/40", "--json"])
        .env("COORD_PROGRESS", gone.to_str().unwrap())
        .run()
        .ok()
        .json();
    assert_eq!(v["dropped"], true, "{v}");
}

/// Issue 20 item 2: a progress subscription after a line that was never reported is refused
/// with the latest line's number, not left waiting for ever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_past_the_latest_line_is_refused_naming_the_latest() {
    let p = Project::new();
    let _d = p.serve();
    let c = p.client().await;
    let line = ProgressParams {
        agent: "w1".into(),
        task_id: None,
        line_type: ProgressType::Log,
        tool_use_id: None,
        data: "one".into(),
        meta: None,
    };
    let last = guarded(c.progress_report(line)).await.unwrap().seq;
    let refused = guarded(c.progress_subscribe(ProgressFilter { after_seq: Some(last + 5), ..Default::default() }));
    let Err(err) = refused.await else { panic!("a cursor past the latest line is refused") };
    let err = coord_client::ClientError::from(err);
    assert_eq!(err.code(), "cursor_ahead", "{err}");
    assert!(err.to_string().contains(&format!("latest progress line ({last})")), "{err}");
    guarded(c.progress_subscribe(ProgressFilter { after_seq: Some(last), ..Default::default() }))
        .await
        .expect("the latest line is a valid cursor");
}
