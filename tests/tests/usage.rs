//! Usage and budgets of launched sessions (issue 33) through the real daemon and
//! `coord-launch` with the `command` client: what a launcher reports (`launch.usage`, as the
//! bridge reports what a session's stream says) is summed per task and run, once however
//! often it is repeated; a run at its budget gets nothing more dispatched and `orch wait`
//! wakes; a session at its budget is stopped and its attempt fails with the reason; bad
//! reports get stable errors. Every wait is on an event or on the bridge's own lines.

#[path = "support/launch.rs"]
#[allow(dead_code, reason = "the other launch suites use the rest")]
mod support;

use coord_client::Client;
use coord_proto::api::{LaunchApiClient, ViewApiClient};
use coord_proto::types::*;
use coord_tests::{Project, finish};
use serde_json::json;
use support::*;

/// Claim the thread, say it is up (a `thread.progress`), then wait for the gate's line
/// before finishing (or, without a gate, run until stopped).
fn gated(gate: Option<&std::path::Path>) -> String {
    match gate {
        Some(g) => format!(
            "{UP} && read go < '{}' && inbox done --agent \"$COORD_AGENT\" --thread \"$COORD_THREAD\" --summary finished >/dev/null",
            g.display()
        ),
        None => format!("{UP} && sleep 300 & wait"),
    }
}

fn report(session: &str, input: i64, output: i64, read: i64, write: i64, cost: f64) -> UsageParams {
    UsageParams {
        session_id: session.into(),
        run_id: Some("R1".into()),
        input_tokens: input,
        output_tokens: output,
        cache_read_tokens: read,
        cache_write_tokens: write,
        cost_usd: Some(cost),
    }
}

/// The running session of `task` once its worker said it is up.
async fn session_of(c: &Client, task: &str) -> LaunchSession {
    sessions(c).await.into_iter().rev().find(|s| s.task_id == task).expect("the task's session")
}

/// Dispatch R1's ready tasks and record a session for each attempt, as a launcher does
/// (this test's own pid stands for the process).
async fn recorded_sessions(p: &Project, c: &Client) -> Vec<LaunchSession> {
    let d = orch(p, &["dispatch", "--run", "R1", "--all-ready"]);
    let mut out = Vec::new();
    for x in d["dispatches"].as_array().expect("dispatches") {
        let s = SessionStartParams {
            run_id: "R1".into(),
            task_id: x["task_id"].as_str().unwrap().into(),
            thread_id: x["thread_id"].as_str().unwrap().into(),
            client: "command".into(),
            pid: i64::from(std::process::id()),
            launcher: "test-launcher".into(),
            cwd: p.path().display().to_string(),
            log_path: p.path().join("log").display().to_string(),
            ..Default::default()
        };
        out.push(c.session_start(s).await.expect("session start"));
    }
    out.sort_by(|a, b| a.task_id.cmp(&b.task_id));
    out
}

/// Cumulative reports, as a session's stream gives them turn after turn: each task keeps
/// its last totals, the run their sum, and `view.run` and `orch status --json` say the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_recorded_is_what_was_reported_summed_per_task_and_run() {
    let p = Project::new();
    thread_run(&p, &[], &["T1", "T2"]);
    let c = p.client().await;
    let s = recorded_sessions(&p, &c).await;
    let (t1, t2) = (&s[0].session_id, &s[1].session_id);
    for r in [report(t1, 100, 20, 1000, 50, 0.012345), report(t2, 7, 3, 0, 0, 0.5), report(t1, 250, 45, 3000, 50, 0.1)]
    {
        c.usage(r).await.expect("usage");
    }
    let shown = c.usage_show(UsageShowParams { run_id: "R1".into() }).await.unwrap();
    let t1_usage =
        Usage { input_tokens: 250, output_tokens: 45, cache_read_tokens: 3000, cache_write_tokens: 50, cost_usd: 0.1 };
    let t2_usage =
        Usage { input_tokens: 7, output_tokens: 3, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: 0.5 };
    let run =
        Usage { input_tokens: 257, output_tokens: 48, cache_read_tokens: 3000, cache_write_tokens: 50, cost_usd: 0.6 };
    let tasks: Vec<(String, Usage)> = shown.tasks.iter().map(|t| (t.key.clone(), t.usage)).collect();
    assert_eq!(tasks, vec![("T1".to_string(), t1_usage), ("T2".to_string(), t2_usage)]);
    assert_eq!(shown.usage, run);
    assert_eq!((shown.agents.len(), shown.agents[0].usage, shown.agents[0].sessions), (1, run, 2));
    let view = c.view_run(RunViewParams { run_id: "R1".into(), after: None }).await.unwrap();
    assert_eq!(view.usage.expect("view.run's usage").usage, run);
    let status = orch(&p, &["status", "--run", "R1"]);
    assert_eq!(status["usage"]["usage"]["cost_usd"], json!(0.6), "{status}");
    assert_eq!(status["usage"]["tasks"][0]["usage"]["input_tokens"], json!(250), "{status}");
    let text = p.orch().args(["status", "--run", "R1"]).run().ok().stdout;
    assert!(text.contains("usage: $0.60") && text.contains("task T1: $0.10"), "{text}");
}

/// A report repeated, or lower than an earlier one (a late, out-of-order report), changes
/// nothing and records no event.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repeated_or_lower_report_counts_once() {
    let p = Project::new();
    thread_run(&p, &[], &["T1"]);
    let c = p.client().await;
    let s = recorded_sessions(&p, &c).await.remove(0);
    let first = c.usage(report(&s.session_id, 100, 10, 5, 1, 0.25)).await.unwrap();
    assert!(first.event_id > 0);
    let again = c.usage(report(&s.session_id, 100, 10, 5, 1, 0.25)).await.unwrap();
    let lower = c.usage(report(&s.session_id, 60, 2, 0, 0, 0.1)).await.unwrap();
    assert_eq!((again.event_id, lower.event_id), (0, 0));
    assert_eq!((again.run, lower.run), (first.run, first.run));
    let shown = c.usage_show(UsageShowParams { run_id: "R1".into() }).await.unwrap();
    assert_eq!(shown.usage, first.session.usage);
    assert_eq!(shown.usage.tokens(), 116);
}

/// The bridge runs with `--max-cost-usd 0.5`: once the run's sessions reported $0.60 the
/// lead's `orch wait` wakes with `run.budget_reached`, and the task that becomes ready next
/// is not dispatched, until the lead raises the budget.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_at_its_budget_dispatches_nothing_more_and_orch_wait_wakes() {
    let p = Project::new();
    thread_run(&p, &[], &["T1"]);
    orch(
        &p,
        &[
            "task",
            "add",
            "--run",
            "R1",
            "--id",
            "T2",
            "--title",
            "T2",
            "--kind",
            "thread",
            "--assign-to",
            "w1",
            "--depends-on",
            "T1",
        ],
    );
    let c = p.client().await;
    let from = c.server_info().last_event_id;
    let gate = gate(&p);
    let mut b = bridge(&p, &gated(Some(&gate)), &["--dispatch", "--max-cost-usd", "0.5"]);
    let up = within("T1 up", next_event(&c, from, &[EventType::ThreadProgress])).await;
    let s = session_of(&c, "T1").await;
    let wait = p
        .orch()
        .json_flag()
        .args(["wait", "--run", "R1", "--after-event", &up.event_id.to_string(), "--timeout-seconds", "120"])
        .spawn();
    let r = c.usage(report(&s.session_id, 1000, 100, 0, 0, 0.6)).await.unwrap();
    assert!(r.run_over_budget && !r.session_over_budget, "{r:?}");
    let woke = finish(wait);
    let woke: serde_json::Value = serde_json::from_str(&woke.stdout).expect(&woke.stderr);
    assert_eq!(woke["event"]["event_type"], "run.budget_reached", "{woke}");
    said(&mut b, "reached its budget ($0.60 of $0.50)");
    // T1 finishes; T2 becomes ready and is not dispatched.
    std::fs::write(&gate, "go\n").unwrap();
    said(&mut b, "T2 not dispatched: the run is at its budget");
    let t2 = orch(&p, &["task", "show", "--run", "R1", "--task", "T2"]);
    assert_eq!(t2["task"]["status"], "ready", "{t2}");
    assert_eq!(sessions(&c).await.len(), 1);
    // The lead raises the budget: the bridge goes on.
    let raised = orch(&p, &["run", "budget", "--run", "R1", "--max-cost-usd", "5"]);
    assert_eq!(raised["over_budget"], false, "{raised}");
    let d = within("T2 dispatched", next_event(&c, raised["event_id"].as_i64().unwrap(), &[EventType::TaskDispatched]))
        .await;
    assert_eq!(d.task_id, "T2");
    b.kill().unwrap();
    b.wait().unwrap();
    for s in sessions(&c).await.iter().filter(|s| s.state == SessionState::Running) {
        kill_group_if_running(s.pid);
    }
}

/// `session_max_tokens` in launch.toml: the session that reported more is stopped, and its
/// attempt fails with the reason (what it used against its budget).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_at_its_budget_is_stopped_and_its_attempt_fails_with_the_reason() {
    let p = Project::new();
    thread_run(&p, &[], &["T1"]);
    p.write(".agents/launch.toml", "[defaults]\nsession_max_tokens = 1000\n");
    let c = p.client().await;
    let from = c.server_info().last_event_id;
    let b = bridge(&p, &gated(None), &["--dispatch", "--until-done"]);
    within("T1 up", next_event(&c, from, &[EventType::ThreadProgress])).await;
    let s = session_of(&c, "T1").await;
    let shown = c.usage_show(UsageShowParams { run_id: "R1".into() }).await.unwrap();
    assert_eq!(shown.sessions[0].budget.max_tokens, Some(1000), "the bridge set the session's budget");
    let r = c.usage(report(&s.session_id, 900, 300, 0, 0, 0.0)).await.unwrap();
    assert!(r.session_over_budget && !r.run_over_budget, "{r:?}");
    let failed = within("T1 failed", next_event(&c, from, &[EventType::TaskFailed])).await;
    let ended = sessions(&c).await.remove(0);
    assert_eq!(ended.state, SessionState::Stopped, "{ended:?}");
    let reason = ended.reason.clone().unwrap_or_default();
    assert!(reason.contains("reached its budget (1200 of 1000 tokens)"), "{reason}");
    let view = c.view_run(RunViewParams { run_id: "R1".into(), after: None }).await.unwrap();
    let failure = view.tasks[0].failure.as_ref().map(|m| m.summary.clone()).unwrap_or_default();
    assert!(failure.contains("reached its budget (1200 of 1000 tokens)"), "{failure}\n{failed:?}");
    let out = finish(b);
    assert_eq!(out.code, 1, "the run failed: {}\n{}", out.stdout, out.stderr);
}

/// Bad reports: negative or fractional counts, a negative or enormous cost, an unknown
/// session, another run's session: stable errors, nothing recorded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_usage_reports_get_stable_errors() {
    let p = Project::new();
    thread_run(&p, &[], &["T1"]);
    orch(&p, &["run", "create", "--goal", "other", "--id", "R2"]);
    let c = p.client().await;
    let s = recorded_sessions(&p, &c).await.remove(0);
    let id = s.session_id.as_str();
    let code = |r: Result<UsageResult, jsonrpsee::core::ClientError>| {
        coord_client::ClientError::from(r.expect_err("refused")).code()
    };
    assert_eq!(code(c.usage(report(id, -1, 0, 0, 0, 0.0)).await), "invalid_input");
    assert_eq!(code(c.usage(report(id, 0, 0, 0, 0, -0.5)).await), "invalid_input");
    assert_eq!(code(c.usage(report(id, 0, 0, 0, 0, 2e9)).await), "invalid_input");
    assert_eq!(code(c.usage(report(id, 0, 0, 0, i64::MAX, 0.0)).await), "invalid_input");
    assert_eq!(code(c.usage(report("ses_00000000000000000000000000", 1, 0, 0, 0, 0.0)).await), "session_not_found");
    let other = UsageParams { run_id: Some("R2".into()), ..report(id, 1, 0, 0, 0, 0.0) };
    assert_eq!(code(c.usage(other).await), "session_not_found");
    let bad_budget = BudgetSetParams { run_id: "R1".into(), max_cost_usd: Some(0.0), ..Default::default() };
    let refused = coord_client::ClientError::from(c.budget_set(bad_budget).await.expect_err("refused"));
    assert_eq!(refused.code(), "invalid_input");
    // On the wire: a fractional count and a cost that is not a number are bad params.
    let mut raw = coord_tests::RawConn::connect(&p.paths().socket);
    for bad in [json!({"session_id": id, "input_tokens": 1.5}), json!({"session_id": id, "cost_usd": "NaN"})] {
        let r = raw.call(json!({"jsonrpc": "2.0", "id": 1, "method": "launch.usage", "params": bad}));
        assert_eq!(r["error"]["code"], json!(-32602), "{r}");
    }
    let shown = c.usage_show(UsageShowParams { run_id: "R1".into() }).await.unwrap();
    assert!(shown.sessions.is_empty() && shown.usage == Usage::default(), "{shown:?}");
}
