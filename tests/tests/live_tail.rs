//! A running session's last lines, live (issue 33, "readable transcripts"): a `command`
//! session's output filter (live or one-shot) reports its log's last lines (`launch.sessionTail`)
//! as they arrive, so `orch status --json`, `view.run` and the dashboard show them while the
//! session runs, each change with a `launch.tail` event (no view polls). Only the run's
//! launcher may set a tail: the session's own worker is refused. Every wait is on an event,
//! a process or the page's state.

#[path = "support/launch.rs"]
#[allow(dead_code, reason = "this suite uses part of what the launch suites share")]
mod support;

use coord_client::Client;
use coord_proto::api::{LaunchApiClient as _, ViewApiClient as _};
use coord_proto::types::*;
use coord_tests::browser::Browser;
use coord_tests::{Project, dashboard_url, ok, register};
use support::*;

/// A live session's script: take the task, say it is up, print `lines` (what the session
/// is doing), then wait on `gate` (running, with nothing more to say).
fn saying(lines: &[&str], gate: &std::path::Path) -> String {
    let say: String = lines.iter().map(|l| format!("echo '{l}'; ")).collect();
    format!("IFS= read -r first; {UP}; {say}read go < '{}'", gate.display())
}

/// The `launch.tail` event after `from` whose session's tail holds `needle`: the session
/// as it recorded it.
async fn tail_with(c: &Client, mut from: i64, needle: &str) -> LaunchSession {
    within(&format!("a tail with {needle:?}"), async {
        loop {
            let e = next_event(c, from, &[EventType::LaunchTail]).await;
            from = e.event_id;
            let s: LaunchSession = serde_json::from_value(e.payload_json["session"].clone()).expect("a session");
            if s.log_tail.as_deref().is_some_and(|t| t.contains(needle)) {
                return s;
            }
        }
    })
    .await
}

/// Let the session finish its wait, then stop it and its bridge.
fn end(s: &LaunchSession, mut b: std::process::Child) {
    kill_group(s.pid);
    b.kill().unwrap();
    b.wait().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_sessions_last_lines_are_in_orch_status_and_view_run() {
    let p = Project::new();
    thread_run(&p, &[], &["T1"]);
    let c = p.client().await;
    let from = c.server_info().last_event_id;
    let gate = gate(&p);
    let lines = [r#"{"type":"tool","name":"Bash","input":"cargo test -p store"}"#, "3 of 9 tests passed so far"];
    let b = bridge(&p, &saying(&lines, &gate), &["--dispatch", "--live"]);
    let s = tail_with(&c, from, "3 of 9 tests passed so far").await;
    assert_eq!(s.state, SessionState::Running);

    let status = orch(&p, &["status", "--run", "R1"]);
    let listed = &status["sessions"][0];
    assert_eq!(listed["state"], "running", "{status}");
    let tail = listed["log_tail"].as_str().unwrap_or_default();
    let last: Vec<&str> = tail.lines().rev().take(2).collect();
    assert!(last[0].ends_with(" 3 of 9 tests passed so far"), "{tail}");
    assert!(last[1].ends_with(" tool Bash: cargo test -p store"), "{tail}");

    let view = c.view_run(RunViewParams { run_id: "R1".into(), ..Default::default() }).await.expect("view.run");
    assert_eq!(view.sessions[0].log_tail.as_deref(), Some(tail), "view.run and orch status agree");
    end(&s, b);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_one_shot_command_sessions_last_lines_are_in_orch_status() {
    let p = Project::new();
    thread_run(&p, &[], &["T1"]);
    let c = p.client().await;
    let from = c.server_info().last_event_id;
    let gate = gate(&p);
    let script = format!("{UP}; echo 'building the store crate'; read go < '{}'", gate.display());
    let b = bridge(&p, &script, &["--dispatch"]);
    let s = tail_with(&c, from, "building the store crate").await;
    assert_eq!((s.state, s.mode), (SessionState::Running, SessionMode::OneShot));

    let status = orch(&p, &["status", "--run", "R1"]);
    let tail = status["sessions"][0]["log_tail"].as_str().unwrap_or_default();
    assert!(tail.lines().last().is_some_and(|l| l.ends_with(" building the store crate")), "{status}");
    end(&s, b);
}

/// Under `--tmux` the filter runs in the session's window, and still gets the session's id.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tmux_sessions_last_lines_are_in_orch_status() {
    if !coord_tests::have("tmux", "coord-launch --tmux") {
        return;
    }
    let p = Project::new();
    thread_run(&p, &[], &["T1"]);
    let c = p.client().await;
    let from = c.server_info().last_event_id;
    let gate = gate(&p);
    let tmux = Tmux::new();
    let script = format!("{UP}; echo 'linking the daemon'; read go < '{}'", gate.display());
    let args = ["--run", "R1", "--command", &script, "--tmux", "--dispatch"];
    let b = p.launch().args(args).env("TMUX_TMPDIR", &tmux.dir()).spawn();
    let s = tail_with(&c, from, "linking the daemon").await;
    assert_eq!((s.state, s.tmux_window.is_some()), (SessionState::Running, true), "{s:?}");

    let status = orch(&p, &["status", "--run", "R1"]);
    let tail = status["sessions"][0]["log_tail"].as_str().unwrap_or_default();
    assert!(tail.lines().last().is_some_and(|l| l.ends_with(" linking the daemon")), "{status}");
    end(&s, b);
}

#[test]
fn the_dashboard_shows_a_running_sessions_new_lines_as_they_come() {
    let Some(mut b) = Browser::launch() else { return };
    let p = Project::new();
    thread_run(&p, &[], &["T1"]);
    let gate = gate(&p);
    // The session prints its second line only once the page shows its first, then waits on
    // a FIFO of its own (reopening the first could meet the test's write end still open,
    // read its end of file and end the session).
    let hold = p.path().join("hold");
    assert!(std::process::Command::new("mkfifo").arg(&hold).status().unwrap().success());
    let script = format!(
        "{}; echo 'now migrating the schema'; read go < '{}'",
        saying(&["reading the task"], &gate),
        hold.display()
    );
    let bridge = bridge(&p, &script, &["--dispatch", "--live"]);
    b.open_dashboard(&format!("{}#runs/R1", dashboard_url(&p)));
    let card = ".card.session[data-task=\"T1\"]";
    let shows = |text: &str| format!("document.querySelector('{card} .log-tail')?.textContent.includes('{text}')");
    b.wait_for(&shows("reading the task"), "the first line");
    assert_eq!(b.eval(&format!("document.querySelector('{card}').dataset.state")), "running");
    std::fs::write(&gate, "go\n").unwrap();
    b.wait_for(&shows("now migrating the schema"), "the next line, live");
    assert_eq!(b.eval(&format!("document.querySelector('{card}').dataset.state")), "running");
    let rt = tokio::runtime::Runtime::new().unwrap();
    let s = rt.block_on(async { sessions(&p.client().await).await.remove(0) });
    end(&s, bridge);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_cannot_set_its_own_sessions_tail() {
    let p = Project::new();
    let lead = register(&p, "lead-one");
    register(&p, "w-one");
    orch(&p, &["run", "create", "--goal", "g", "--id", "R1"]);
    orch(
        &p,
        &["task", "add", "--run", "R1", "--id", "T1", "--title", "T1", "--kind", "thread", "--assign-to", "w-one"],
    );
    ok(&p, &["init", "--require-credentials", "--lead", "lead-one"]);
    let c = p.client().await;
    let from = c.server_info().last_event_id;
    let gate = gate(&p);
    // The bridge runs with the lead's secret, its filter reports with it; the session has
    // its worker's.
    let b = p
        .launch()
        .args(["--run", "R1", "--command", &saying(&["a line from the session"], &gate), "--dispatch", "--live"])
        .env(AGENT_SECRET_ENV, &lead)
        .spawn();
    let s = tail_with(&c, from, "a line from the session").await;

    // The secret the bridge gave the session: its worker's own.
    let env = std::fs::read(format!("/proc/{}/environ", s.pid)).expect("the session's environment");
    let own = format!("{AGENT_SECRET_ENV}=");
    let worker =
        env.split(|b| *b == 0).map(String::from_utf8_lossy).find_map(|kv| kv.strip_prefix(&own).map(str::to_string));
    let worker = worker.expect("the session holds its worker's secret");
    let as_worker = Client::connect_socket_as(&p.paths().socket, Some(&worker)).await.expect("w-one authenticates");
    let forged = SessionTailParams { session_id: s.session_id.clone(), lines: vec!["all tests passed".into()] };
    let err = coord_client::ClientError::from(as_worker.session_tail(forged).await.expect_err("refused"));
    assert_eq!(err.code(), "unauthenticated", "a worker may not set a tail: {err}");
    let now = sessions(&c).await.remove(0);
    assert_eq!(now.log_tail, s.log_tail, "the tail is the filter's still");
    end(&s, b);
}
