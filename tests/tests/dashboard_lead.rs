//! The dashboard, second pass, in a real headless Chromium: what a lead needs at a glance
//! and on any screen. An answered task leaves the Blocked panel and the counters follow; a
//! run whose failed task will be retried needs attention rather than being failed; after
//! a restart on another port the page stops (dimmed) and says to run `orch dashboard`; the
//! page acts as its overseer only; and no view is wider than a 390 px phone or a 1400 px
//! window; a session `coord-launch` started shows in its run while it runs, then with its
//! exit code and its log's last lines. Skips (saying so) without Chromium, but fails under `COORD_CI`.

use coord_tests::browser::Browser;
use coord_tests::*;
use serde_json::json;

const LIVE: &str = "document.getElementById('conn').dataset.state === 'live'";

/// The port of a dashboard URL.
fn port_of(url: &str) -> u16 {
    let rest = url.strip_prefix("http://127.0.0.1:").expect("a loopback URL");
    rest.split_once('/').unwrap().0.parse().unwrap()
}

/// The token of a dashboard URL.
fn token_of(url: &str) -> &str {
    url.trim_end_matches('/').rsplit('/').next().unwrap()
}

#[test]
fn an_answered_task_leaves_the_blocked_panel_and_the_counters_follow() {
    let Some(mut b) = Browser::launch() else { return };
    let p = Project::new();
    blocked_task(&p, "wkr", "diesel or sqlx?");
    b.open_dashboard(&format!("{}#runs", dashboard_url(&p)));
    let card = ".card.blocked[data-task=\"T1\"]";
    b.wait_for(&format!("document.querySelector('{card} .question')?.textContent.includes('diesel')"), "the question");
    b.wait_for("document.querySelector('.counts [data-count=\"blocked\"]')?.textContent === 'blocked 1'", "1 blocked");

    b.type_enter(&format!("{card} textarea"), "sqlx");
    b.wait_for(&format!("document.querySelector('{card}') === null"), "the card and its answer box to go");
    b.wait_for(
        "document.querySelector('.counts [data-count=\"in_progress\"]')?.textContent === 'in_progress 1' \
         && document.querySelector('.counts [data-count=\"blocked\"]') === null",
        "the counters to agree with orch status",
    );
    let status = p.orch().args(["status", "--run", "R1"]).json_flag().run().ok().json();
    assert!(status.to_string().contains("in_progress"), "{status}");
}

#[test]
fn a_run_whose_failed_task_will_be_retried_needs_attention_and_is_not_failed() {
    let Some(mut b) = Browser::launch() else { return };
    let p = Project::new();
    let orch = |args: &[&str]| p.orch().args(args).json_flag().run().ok().json();
    orch(&["run", "create", "--goal", "G", "--id", "R1"]);
    orch(&["task", "add", "--run", "R1", "--id", "T1", "--title", "Schema", "--kind", "thread"]);
    let d = orch(&["dispatch", "--run", "R1", "--task", "T1", "--to", "wkr"]);
    let thr = d["dispatches"][0]["thread_id"].as_str().unwrap().to_string();
    ok(&p, &["claim", "--agent", "wkr", "--thread", &thr]);
    ok(&p, &["fail", "--agent", "wkr", "--thread", &thr, "--summary", "tests do not build"]);

    b.open_dashboard(&format!("{}#runs", dashboard_url(&p)));
    b.wait_for(
        "document.querySelector('.run-head .run-state')?.dataset.state === 'needs-attention'",
        "the run's badge to say it needs attention",
    );
    assert_eq!(b.eval("document.querySelector('.run-head .run-state').textContent"), json!("needs attention"));
    b.wait_for("document.querySelector('.card.failed[data-task=\"T1\"] .retries') !== null", "the retry note");
}

#[test]
fn after_a_restart_on_another_port_the_page_stops_and_says_to_run_orch_dashboard() {
    let Some(mut b) = Browser::launch() else { return };
    let p = Project::new();
    let daemon = p.serve();
    let url = dashboard_url(&p);
    b.open_dashboard(&format!("{url}#agents"));
    b.wait_for(LIVE, "live");

    daemon.signal("TERM");
    b.wait_for("document.body.classList.contains('stale')", "stale data dimmed while disconnected");
    // Someone else holds the old port now: the daemon serves another one, with a new token.
    let squatter = std::net::TcpListener::bind(("127.0.0.1", port_of(&url))).expect("the old port");
    let _daemon = p.serve();
    let moved = dashboard_url(&p);
    drop(squatter);
    assert_ne!(port_of(&moved), port_of(&url), "{moved}");
    assert_ne!(token_of(&moved), token_of(&url), "a new port gets a new token");

    b.wait_for("document.getElementById('conn').dataset.state === 'gone'", "the page to stop retrying");
    let gone = b.eval("[document.getElementById('gone').hidden, document.getElementById('gone').textContent]");
    assert_eq!(gone[0], json!(false));
    assert!(gone[1].as_str().unwrap().contains("orch dashboard"), "{gone}");
    assert!(b.eval("window.__coord.failures").as_i64().unwrap() >= 1);
}

#[test]
fn the_page_acts_as_its_overseer_and_answers_only_what_is_addressed_to_the_lead_or_them() {
    let Some(mut b) = Browser::launch() else { return };
    let p = Project::new();
    let _d = p.serve();
    ok(&p, &["--agent", "lead", "policy", "lead", "lead"]);
    let info = p.orch().args(["dashboard", "--as", "alice"]).json_flag().run().ok().json();
    assert_eq!(info["overseer"], "alice", "{info}");
    let url = info["url"].as_str().unwrap().to_string();
    // The lead asks a worker to stop: that request is the worker's to answer.
    let shutdown = p.inbox().args(["--agent", "lead", "shutdown", "--to", "w1", "--reason", "run finished"]);
    shutdown.json_flag().run().ok();
    b.open_dashboard(&format!("{url}#control"));
    b.wait_for(LIVE, "live");
    let card = ".card.control[data-type=\"shutdown_request\"]";
    b.wait_for(
        &format!("document.querySelector('{card} .not-mine')?.textContent === 'for w1 to answer'"),
        "no buttons",
    );
    assert_eq!(b.eval(&format!("document.querySelector('{card} button.approve') === null")), json!(true));

    let call = |b: &mut Browser, method: &str, params: serde_json::Value| {
        b.eval(&format!("window.__coord.rpc.call('{method}', {params}).then(() => 'ok', (e) => e.data && e.data.code)"))
    };
    let request_id = b.eval(&format!("document.querySelector('{card}').dataset.request"));
    let answer = json!({"from": "alice", "type": "shutdown_approved", "payload": {"request_id": request_id}});
    assert_eq!(call(&mut b, "control.send", answer), json!("response_forbidden"), "not the page's to answer");
    let as_worker = json!({"from": "w1", "to": "lead", "summary": "I am w1"});
    assert_eq!(call(&mut b, "inbox.send", as_worker), json!("page_acts_as_overseer"));
    let as_lead = json!({"from": "lead", "to": "w1", "summary": "I am the lead"});
    assert_eq!(call(&mut b, "inbox.send", as_lead), json!("page_acts_as_overseer"));
    let policy =
        json!({"actor": "alice", "policy": {"version": 0, "lead": "alice", "timeout_seconds": 60, "rules": []}});
    assert_eq!(call(&mut b, "policy.set", policy), json!("page_acts_as_overseer"));
    let itself = json!({"from": "alice", "to": "w1", "summary": "from the person"});
    assert_eq!(call(&mut b, "inbox.send", itself), json!("ok"));
    let stop = b.eval("window.__coord.rpc.call('dashboard.stop').then(() => 'ok', (e) => e.data && e.data.code)");
    assert_eq!(stop, json!("page_acts_as_overseer"));
}

#[test]
fn no_view_is_wider_than_a_phone_or_a_laptop_window() {
    let Some(mut b) = Browser::launch() else { return };
    let p = Project::new();
    let long = "frontend-worker-with-a-rather-long-name-01234567";
    ok(&p, &["agent", "register", "--name", long, "--role", "worker"]);
    blocked_task(
        &p,
        "wkr",
        "Which of the two schemas (the normalised one or the flat one) should the importer target?",
    );
    ok(&p, &["send", "--from", "lead", "--to", long, "--summary", "a long thread subject that keeps going and going"]);
    ok(&p, &["agent", "register", "--name", "wkr-2", "--role", "worker"]);
    ok(&p, &["send", "--from", "lead", "--to", "broadcast", "--summary", "broadcast to everyone"]);
    let scope = "src/some/deeply/nested/module/path/that/is/long/and/longer/still/lib.rs";
    ok(&p, &["reserve", "--agent", long, "--scope", scope, "--task", "T1"]);
    let url = dashboard_url(&p);
    b.open_dashboard(&format!("{url}#runs"));
    for (w, h) in [(390, 844), (1400, 800)] {
        b.viewport(w, h);
        for view in ["runs", "agents", "timeline", "threads", "reservations", "control"] {
            b.eval(&format!("location.hash = '#{view}'"));
            b.wait_for(&format!("!document.getElementById('view-{view}').hidden"), view);
            b.wait_for(LIVE, "live");
            let (over, worst) = b.overflow();
            assert!(over <= 0, "{view} at {w}px is {over}px wider than the window: {worst}");
        }
    }
}

#[test]
fn the_timeline_shows_a_broadcast_as_one_row_with_category_ack_and_task() {
    let Some(mut b) = Browser::launch() else { return };
    let p = Project::new();
    for n in ["wkr-1", "wkr-2", "wkr-3"] {
        ok(&p, &["agent", "register", "--name", n, "--role", "worker"]);
    }
    ok(&p, &["send", "--from", "lead", "--to", "broadcast", "--summary", "freeze the main branch"]);
    let handoff = ["send", "--from", "lead", "--to", "wkr-1", "--summary", "take over", "--category", "HANDOFF"];
    ok(&p, &[&handoff[..], &["--task", "T2"]].concat());
    b.open_dashboard(&format!("{}#timeline", dashboard_url(&p)));
    let rows = "[...document.querySelectorAll('#view-timeline tbody tr[data-message]')]";
    let broadcast = format!("{rows}.filter((r) => r.textContent.includes('freeze the main branch'))");
    b.wait_for(&format!("{broadcast}.length === 1 && {broadcast}[0].dataset.copies === '3'"), "one row for 3 copies");
    let to = b.eval(&format!("{broadcast}[0].querySelector('.recipients').textContent"));
    assert_eq!(to, json!("3 recipients: wkr-1, wkr-2, wkr-3"));
    let handoff = format!("{rows}.find((r) => r.textContent.includes('take over'))");
    b.wait_for(&format!("{handoff}?.querySelector('.pill.category')?.textContent === 'HANDOFF'"), "the category");
    assert_eq!(b.eval(&format!("{handoff}.querySelector('.pill.ack') !== null")), json!(true), "ack required");
    let place = b.eval(&format!("{handoff}.querySelector('td[data-label=\"thread\"]').textContent"));
    assert_eq!(place, json!("T2"), "a task without a run is not shown as '/T2'");
}

#[test]
fn a_launched_session_shows_in_its_run_running_then_with_its_exit_code_and_log() {
    let Some(mut b) = Browser::launch() else { return };
    let p = Project::new();
    let orch = |args: &[&str]| p.orch().args(args).json_flag().run().ok().json();
    orch(&["run", "create", "--goal", "G", "--id", "R1"]);
    orch(&["task", "add", "--run", "R1", "--id", "T1", "--title", "Schema", "--kind", "thread", "--assign-to", "w1"]);
    // The session runs until the test writes a line into the fifo, then finishes its task.
    let fifo = p.path().join("go");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let work = format!(
        "echo working on $COORD_TASK && read x < {} && inbox claim --agent $COORD_AGENT --thread $COORD_THREAD \
         >/dev/null && inbox done --agent $COORD_AGENT --thread $COORD_THREAD --summary ok >/dev/null && echo finished",
        fifo.display()
    );
    let bridge = p.launch().args(["--run", "R1", "--command", &work, "--dispatch", "--until-done"]).spawn();

    b.open_dashboard(&format!("{}#runs", dashboard_url(&p)));
    let card = ".card.session[data-task=\"T1\"]";
    b.wait_for(&format!("document.querySelector('{card}')?.dataset.state === 'running'"), "the running session");
    let text = b.eval(&format!("document.querySelector('{card}').textContent"));
    let text = text.as_str().unwrap();
    assert!(text.contains("command · one_shot · @w1 · pid ") && text.contains("running for"), "{text}");

    std::fs::write(&fifo, "go\n").unwrap();
    b.wait_for(&format!("document.querySelector('{card}')?.dataset.state === 'exited'"), "the session's exit");
    b.wait_for(&format!("document.querySelector('{card} .how')?.textContent === 'exit 0'"), "its exit code");
    b.wait_for(
        &format!("document.querySelector('{card} .log-tail')?.textContent.includes('finished')"),
        "its log's tail",
    );
    let out = finish(bridge);
    assert_eq!(out.code, 0, "{}", out.stderr);
}
