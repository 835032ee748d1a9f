//! The dashboard's views for a lead, in a real headless Chromium: a thread read as a
//! conversation (every message, its payload and artifacts), task ↔ thread links in every
//! view, Retry / Reassign / Cancel on failed and blocked tasks (a refusal shows its error),
//! the whole question, a graph whose edges pass under no node and whose labels fit, a run
//! that needs attention for an open request, an agent whose task failed, the WebSocket
//! connect's timeout, a gated call's countdown and a released reservation's release time;
//! the new views at 390 px and 1400 px. Skips (saying so) without Chromium, but fails under
//! `COORD_CI`.

use std::io::Read;
use std::net::TcpListener;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use coord_tests::browser::Browser;
use coord_tests::*;
use serde_json::{Value, json};

const LIVE: &str = "document.getElementById('conn').dataset.state === 'live'";

fn orch(p: &Project, args: &[&str]) -> Value {
    p.orch().args(args).json_flag().run().ok().json()
}

/// A run R1 whose task T1 (max 3 attempts) is dispatched to `worker`, who claimed it: its
/// thread.
fn claimed_task(p: &Project, worker: &str) -> String {
    orch(p, &["run", "create", "--goal", "G", "--id", "R1"]);
    orch(p, &["task", "add", "--run", "R1", "--id", "T1", "--title", "Schema", "--kind", "thread"]);
    let d = orch(p, &["dispatch", "--run", "R1", "--task", "T1", "--to", worker]);
    let thr = d["dispatches"][0]["thread_id"].as_str().unwrap().to_string();
    ok(p, &["claim", "--agent", worker, "--thread", &thr]);
    thr
}

/// [`claimed_task`], then failed by its worker: its thread.
fn failed_task(p: &Project, worker: &str) -> String {
    let thr = claimed_task(p, worker);
    ok(p, &["fail", "--agent", worker, "--thread", &thr, "--summary", "tests do not build"]);
    thr
}

/// Click the element matching `selector` (a JS string literal is made of it).
fn click(b: &mut Browser, selector: &str) {
    let sel = serde_json::to_string(selector).unwrap();
    b.wait_for(&format!("document.querySelector({sel})"), selector);
    b.eval(&format!("document.querySelector({sel}).click()"));
}

#[test]
fn a_thread_reads_as_a_conversation_with_its_payloads_and_artifacts_live() {
    let Some(mut b) = Browser::launch() else { return };
    let p = Project::new();
    let thr = claimed_task(&p, "wkr");
    let payload = r#"{"options":["diesel","sqlx"],"recommended":"sqlx"}"#;
    let question = [
        "update",
        "--agent",
        "wkr",
        "--thread",
        &thr,
        "--status",
        "blocked",
        "--summary",
        "diesel or sqlx?",
        "--body",
        "Both compile.",
        "--payload-json",
        payload,
        "--artifact",
        "notes/orm.md",
        "--artifact-kind",
        "report",
        "--artifact-metadata-json",
        r#"{"lines":42}"#,
    ];
    ok(&p, &question);

    b.open_dashboard(&format!("{}#threads/{thr}", dashboard_url(&p)));
    let q = "#view-threads li.msg[data-kind=\"question\"]";
    b.wait_for(
        &format!("document.querySelector('{q} pre.payload')?.textContent.includes('recommended')"),
        "the payload",
    );
    let shown = b.eval(&format!(
        "(() => {{ const q = document.querySelector('{q}'); return {{
           summary: q.querySelector('.summary').textContent, body: q.querySelector('.body').textContent,
           payload: JSON.parse(q.querySelector('pre.payload').textContent),
           path: q.querySelector('ul.artifacts code.path').textContent,
           meta: JSON.parse(q.querySelector('ul.artifacts pre.payload').textContent),
           messages: document.querySelectorAll('#view-threads li.msg').length,
           task: document.querySelector('#view-threads .thread-head a.task-link').getAttribute('href') }}; }})()"
    ));
    let show = ok(&p, &["show", "--thread", &thr]);
    let count = show["messages"].as_array().unwrap().len();
    assert_eq!(
        shown,
        json!({"summary": "diesel or sqlx?", "body": "Both compile.", "payload": {"options": ["diesel", "sqlx"], "recommended": "sqlx"},
               "path": "notes/orm.md", "meta": {"lines": 42}, "messages": count, "task": "#runs/R1/T1"}),
    );

    // An answer appears in the open conversation without a reload.
    orch(&p, &["answer", "--run", "R1", "--task", "T1", "--summary", "sqlx, async all the way"]);
    b.wait_for(
        "document.querySelector('#view-threads li.msg[data-kind=\"answer\"] .summary')?.textContent === 'sqlx, async all the way'",
        "the answer in the conversation",
    );
}

#[test]
fn tasks_and_threads_link_to_each_other_in_every_view() {
    let Some(mut b) = Browser::launch() else { return };
    let p = Project::new();
    let (thr, _) = blocked_task(&p, "wkr", "diesel or sqlx?");
    let plan = r#"{"request_id":"plan-9","plan":"1. tests\n2. code"}"#;
    let request = ["--agent", "wkr", "control", "--type", "plan_approval_request", "--payload", plan];
    let sent = ok(&p, &[&request[..], &["--run", "R1", "--task", "T1"]].concat());
    let request_href = format!("#threads/{}", thread_id(&sent));
    let url = dashboard_url(&p);
    let thread_href = format!("#threads/{thr}");
    let has = |view: &str, sel: &str, href: &str| {
        format!("[...document.querySelectorAll('#view-{view} {sel}')].some((a) => a.getAttribute('href') === '{href}')")
    };

    b.open_dashboard(&format!("{url}#runs"));
    b.wait_for(&has("runs", ".card.blocked a.thread-link", &thread_href), "the blocked card's thread link");
    // A request lives in a thread of its own, which its card links to, beside its task.
    for (view, thread) in [("agents", &thread_href), ("timeline", &thread_href), ("control", &request_href)] {
        b.eval(&format!("location.hash = '#{view}'"));
        b.wait_for(&has(view, "a.thread-link", thread), &format!("the thread link in {view}"));
        b.wait_for(&has(view, "a.task-link", "#runs/R1/T1"), &format!("the task link in {view}"));
    }

    // Both ways: the runs card opens the conversation, whose task link selects the task.
    b.eval("location.hash = '#runs'");
    click(&mut b, ".card.blocked[data-task=\"T1\"] a.thread-link");
    b.wait_for(
        &format!("!document.getElementById('view-threads').hidden && document.querySelector('#view-threads .thread-head')?.dataset.thread === '{thr}'"),
        "the conversation",
    );
    click(&mut b, "#view-threads .thread-head a.task-link");
    b.wait_for(
        "!document.getElementById('view-runs').hidden && document.querySelector('#view-runs .card.detail b')?.textContent === 'T1 · Schema'",
        "the task picked in its run",
    );
}

#[test]
fn retry_from_the_page_opens_a_new_attempt_of_a_failed_task() {
    let Some(mut b) = Browser::launch() else { return };
    let p = Project::new();
    failed_task(&p, "wkr");
    b.open_dashboard(&format!("{}#runs", dashboard_url(&p)));
    click(&mut b, ".card.failed[data-task=\"T1\"] button.retry");
    b.wait_for("document.querySelector('.card.failed[data-task=\"T1\"]') === null", "the failed card to go");
    b.wait_for(
        "document.querySelector('g.node[data-task=\"T1\"] text.sub')?.textContent === 'dispatched · wkr · #2'",
        "attempt 2",
    );
    let task = orch(&p, &["task", "show", "--run", "R1", "--task", "T1"]);
    assert_eq!(
        (task["task"]["status"].clone(), task["task"]["attempt"].clone()),
        (json!("dispatched"), json!(2)),
        "{task}"
    );
}

#[test]
fn reassign_from_the_page_moves_a_blocked_task_to_the_named_worker() {
    let Some(mut b) = Browser::launch() else { return };
    let p = Project::new();
    blocked_task(&p, "wkr", "diesel or sqlx?");
    b.open_dashboard(&format!("{}#runs", dashboard_url(&p)));
    let card = ".card.blocked[data-task=\"T1\"]";
    b.wait_for(
        &format!("document.querySelector('{card} .actions') && !document.querySelector('{card} button.retry')"),
        "no Retry on a blocked task",
    );
    b.eval(&format!("document.querySelector('{card} input.to').value = 'wkr-2'"));
    click(&mut b, &format!("{card} button.reassign"));
    b.wait_for(
        "document.querySelector('g.node[data-task=\"T1\"] text.sub')?.textContent === 'dispatched · wkr-2 · #2'",
        "the new worker",
    );
    b.wait_for(&format!("document.querySelector('{card}') === null"), "the blocked card to go");
}

#[test]
fn a_cancel_the_daemon_refuses_shows_its_error_on_the_card() {
    let Some(mut b) = Browser::launch() else { return };
    let p = Project::new();
    // The run is the lead's: the page, acting as the overseer only, may not cancel for it.
    blocked_task(&p, "wkr", "diesel or sqlx?");
    b.open_dashboard(&format!("{}#runs", dashboard_url(&p)));
    let card = ".card.blocked[data-task=\"T1\"]";
    click(&mut b, &format!("{card} button.cancel"));
    b.wait_for(
        &format!(
            "document.querySelector('{card} .action-status.error')?.textContent.startsWith('page_acts_as_overseer: ')"
        ),
        "the refusal",
    );
    let task = orch(&p, &["task", "show", "--run", "R1", "--task", "T1"]);
    assert_eq!(task["task"]["status"], "blocked", "nothing changed: {task}");
}

#[test]
fn no_graph_edge_passes_under_a_node_and_every_label_fits_its_node() {
    let Some(mut b) = Browser::launch() else { return };
    let p = Project::new();
    orch(&p, &["run", "create", "--goal", "G", "--id", "R1"]);
    // T1 -> T2 -> T3 -> T4 and T1 -> T4 (an edge across two layers), with neighbours in
    // every layer and titles too long for a node.
    let long = "A title far too long to fit inside one node of the graph";
    for (id, deps) in [("T1", ""), ("T5", ""), ("T2", "T1"), ("T6", "T5"), ("T3", "T2"), ("T7", "T6"), ("T4", "T3,T1")]
    {
        let mut args = vec!["task", "add", "--run", "R1", "--id", id, "--title", long, "--kind", "thread"];
        if !deps.is_empty() {
            args.extend(["--depends-on", deps]);
        }
        orch(&p, &args);
    }
    b.open_dashboard(&format!("{}#runs", dashboard_url(&p)));
    b.wait_for("document.querySelectorAll('svg.graph g.node').length === 7", "the graph");
    let report = b.eval(
        "(() => { const svg = document.querySelector('svg.graph'); const m = svg.getScreenCTM();
           const boxes = [...svg.querySelectorAll('g.node')].map((g) => { const r = g.querySelector('rect').getBoundingClientRect();
             return { id: g.dataset.task, l: r.left, t: r.top, r: r.right, b: r.bottom }; });
           const under = [];
           for (const path of svg.querySelectorAll('.edges path')) {
             const len = path.getTotalLength();
             for (let d = 0; d <= len; d += 2) {
               const q = path.getPointAtLength(d); const x = m.a * q.x + m.e, y = m.d * q.y + m.f;
               for (const n of boxes) {
                 if (n.id === path.dataset.from || n.id === path.dataset.to) continue;
                 if (x > n.l && x < n.r && y > n.t && y < n.b) under.push(path.dataset.from + '->' + path.dataset.to + ' under ' + n.id);
               }
             }
           }
           const s = svg.getBoundingClientRect();
           const cut = boxes.filter((n) => n.l < s.left || n.t < s.top || n.r > s.right + 0.5 || n.b > s.bottom + 0.5).map((n) => n.id);
           const wide = [...svg.querySelectorAll('g.node')].filter((g) => [...g.querySelectorAll('text')]
             .some((t) => t.getBBox().x + t.getBBox().width > g.querySelector('rect').getBBox().width - 4)).map((g) => g.dataset.task);
           return { edges: svg.querySelectorAll('.edges path').length, under: [...new Set(under)], cut, wide,
                    clipped: svg.querySelector('g.node[data-task=\"T1\"] text.title').textContent.endsWith('…') }; })()",
    );
    assert_eq!(report, json!({"edges": 6, "under": [], "cut": [], "wide": [], "clipped": true}));
}

#[test]
fn a_run_with_an_open_plan_request_needs_attention_until_it_is_answered() {
    let Some(mut b) = Browser::launch() else { return };
    let p = Project::new();
    claimed_task(&p, "wkr");
    b.open_dashboard(&format!("{}#runs", dashboard_url(&p)));
    let state = "document.querySelector('.run-head .run-state')?.dataset.state";
    b.wait_for(&format!("{state} === 'active'"), "an active run");

    let plan = r#"{"request_id":"plan-7","plan":"1. tests\n2. code"}"#;
    let request = ["--agent", "wkr", "control", "--type", "plan_approval_request", "--payload", plan];
    ok(&p, &[&request[..], &["--run", "R1", "--task", "T1"]].concat());
    b.wait_for(&format!("{state} === 'needs-attention'"), "needs attention for the open request");
    assert_eq!(b.eval("document.querySelector('.run-head .run-state').dataset.requests"), json!("1"));

    // The run's creator (orch's default, "leader") answers.
    let answer = ["--agent", "leader", "control", "--type", "plan_approval_response", "--payload"];
    ok(&p, &[&answer[..], &[r#"{"request_id":"plan-7","approved":true}"#]].concat());
    b.wait_for(&format!("{state} === 'active'"), "active again once answered");
}

#[test]
fn an_agent_whose_task_failed_is_failed_until_the_task_is_retried() {
    let Some(mut b) = Browser::launch() else { return };
    let p = Project::new();
    let thr = failed_task(&p, "wkr");
    ok(&p, &["agent", "register", "--name", "idle-1", "--role", "worker"]);
    b.open_dashboard(&format!("{}#agents", dashboard_url(&p)));
    let row = "tr[data-agent=\"wkr\"]";
    b.wait_for(&format!("document.querySelector('{row}')?.dataset.need === 'failed'"), "wkr failed");
    let first = b.eval("document.querySelector('#view-agents tbody tr').dataset.agent");
    assert_eq!(first, json!("wkr"), "a failed agent comes before idle ones");
    let links =
        b.eval(&format!("[...document.querySelectorAll('{row} .failed-tasks a')].map((a) => a.getAttribute('href'))"));
    assert_eq!(links, json!(["#runs/R1/T1", format!("#threads/{thr}")]));

    orch(&p, &["retry", "--run", "R1", "--task", "T1"]);
    b.wait_for(&format!("document.querySelector('{row}')?.dataset.need !== 'failed'"), "no longer failed");
}

#[test]
fn the_websocket_connect_gives_up_on_a_port_that_accepts_and_never_answers() {
    let Some(mut b) = Browser::launch() else { return };
    let p = Project::new();
    let daemon = p.serve();
    let url = dashboard_url(&p);
    b.open_dashboard(&format!("{url}#agents"));
    b.wait_for(LIVE, "live");
    let port: u16 = url.strip_prefix("http://127.0.0.1:").unwrap().split_once('/').unwrap().0.parse().unwrap();

    daemon.signal("TERM");
    // The old port now accepts connections and never says a word.
    let squatter = TcpListener::bind(("127.0.0.1", port)).expect("the old port");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for conn in squatter.incoming() {
            let Ok(mut conn) = conn else { continue };
            let tx = tx.clone();
            std::thread::spawn(move || {
                let opened = Instant::now();
                let mut buf = [0u8; 4096];
                let mut asked = false;
                // Read the page's upgrade request, answer nothing, and time how long it waits.
                while let Ok(n) = conn.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    asked |= String::from_utf8_lossy(&buf[..n]).contains("Upgrade: websocket");
                }
                let _ = tx.send((asked, opened.elapsed()));
            });
        }
    });
    let waited = loop {
        let (asked, waited) = rx.recv_timeout(Duration::from_secs(120)).expect("the page to give up on a connection");
        if asked {
            break waited;
        }
    };
    assert!(waited >= Duration::from_secs(4), "the page gave up after {waited:?}, before its 5 s timeout");
    b.wait_for("window.__coord.failures >= 1", "the attempt counted as a failure");
    assert_ne!(b.eval("document.getElementById('conn').dataset.state"), json!("live"));
}

#[test]
fn a_waiting_gated_call_counts_down_to_the_policy_timeout() {
    let Some(mut b) = Browser::launch() else { return };
    let p = Project::new();
    let _d = p.serve();
    ok(&p, &["--agent", "lead", "policy", "lead", "lead"]);
    ok(&p, &["--agent", "lead", "policy", "gate", "Bash(git push*)"]);
    ok(&p, &["--agent", "lead", "policy", "timeout", "600"]);
    let input = json!({
        "session_id": "sess-1", "transcript_path": "/tmp/t.jsonl", "cwd": p.path(), "permission_mode": "default",
        "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_use_id": "toolu_01",
        "tool_input": {"command": "git push origin main"}
    });
    let hook = p.inbox().args(["--agent", "w1", "hook", "claude", "pre-tool-use"]).stdin(input.to_string().as_bytes());
    let hook = std::thread::spawn(move || hook.run());

    b.open_dashboard(&format!("{}#control", dashboard_url(&p)));
    let card = ".card.control.open[data-type=\"permission_request\"]";
    b.wait_for(&format!("document.querySelector('{card} .countdown .left')"), "the countdown");
    let requests = ok(&p, &["--agent", "lead", "requests"]);
    let r = &requests["requests"][0];
    let created = chrono_ms(r["created_at"].as_str().unwrap());
    let shown = b.eval(&format!(
        "(() => {{ const e = document.querySelector('{card} .countdown .left'); return [Date.parse(e.dataset.until), e.textContent]; }})()"
    ));
    assert_eq!(
        shown[0].as_i64().unwrap(),
        created + 600_000,
        "the deadline is the request's time plus the policy timeout"
    );
    let text = shown[1].as_str().unwrap();
    assert!(text.ends_with(" left") && (text.starts_with("10m") || text.starts_with("9m")), "{text}");

    let id = r["request_id"].as_str().unwrap();
    ok(&p, &["--agent", "lead", "permit", "--request", id, "--deny", "--reason", "not now"]);
    hook.join().unwrap().ok();
    b.wait_for(&format!("document.querySelector('{card}') === null"), "the countdown to go with the answer");
}

/// Milliseconds since the epoch of an RFC 3339 UTC instant with milliseconds
/// ("2026-11-26T07:10:16.123Z").
fn chrono_ms(ts: &str) -> i64 {
    let out = std::process::Command::new("date").args(["-u", "-d", ts, "+%s%3N"]).output().expect("date");
    String::from_utf8(out.stdout).unwrap().trim().parse().expect("a time")
}

#[test]
fn a_released_reservation_shows_its_release_time_under_released() {
    let Some(mut b) = Browser::launch() else { return };
    let p = Project::new();
    ok(&p, &["reserve", "--agent", "wkr", "--scope", "src/lib.rs", "--task", "T1", "--ttl", "60"]);
    ok(&p, &["release", "--agent", "wkr", "--scope", "src/lib.rs"]);
    let all = p.inbox().args(["reservations", "--all"]).json_flag().run().ok().json();
    let r = &all["reservations"][0];
    let released = r["released_at"].as_str().expect("released_at").to_string();
    assert_ne!(r["expires_at"].as_str().unwrap(), released);

    b.open_dashboard(&format!("{}#reservations", dashboard_url(&p)));
    let cell = "#view-reservations table.history td.ended";
    b.wait_for(&format!("document.querySelector('{cell}')"), "the history row");
    let shown = b.eval(&format!(
        "(() => {{ const c = document.querySelector('{cell}'); return [c.dataset.label, c.title,
           [...document.querySelectorAll('#view-reservations table.history th')].pop().textContent]; }})()"
    ));
    assert_eq!(shown, json!(["released", released, "released"]));
}

#[test]
fn the_threads_and_runs_views_fit_a_phone_and_a_laptop_window() {
    let Some(mut b) = Browser::launch() else { return };
    let p = Project::new();
    let long = "frontend-worker-with-a-rather-long-name-01234567";
    let (thr, _) =
        blocked_task(&p, long, "Which of the two schemas (the normalised one or the flat one) should it target?");
    orch(&p, &["task", "add", "--run", "R1", "--id", "T2", "--title", "Importer", "--kind", "thread"]);
    let d = orch(&p, &["dispatch", "--run", "R1", "--task", "T2", "--to", "wkr"]);
    let thr2 = d["dispatches"][0]["thread_id"].as_str().unwrap().to_string();
    ok(&p, &["claim", "--agent", "wkr", "--thread", &thr2]);
    let payload =
        r#"{"path":"src/some/deeply/nested/module/path/that/is/long/and/longer/still/lib.rs","lines":[1,2,3]}"#;
    ok(&p, &["fail", "--agent", "wkr", "--thread", &thr2, "--summary", "no", "--payload-json", payload]);
    let url = dashboard_url(&p);
    b.open_dashboard(&format!("{url}#runs"));
    for (w, h) in [(390, 844), (1400, 800)] {
        b.viewport(w, h);
        for place in ["runs/R1/T1".to_string(), format!("threads/{thr}"), format!("threads/{thr2}"), "agents".into()] {
            b.eval(&format!("location.hash = '#{place}'"));
            let view = place.split('/').next().unwrap();
            b.wait_for(&format!("!document.getElementById('view-{view}').hidden"), view);
            b.wait_for(LIVE, "live");
            if view == "threads" {
                b.wait_for("document.querySelector('#view-threads li.msg')", "the conversation");
            }
            let (over, worst) = b.overflow();
            assert!(over <= 0, "{place} at {w}px is {over}px wider than the window: {worst}");
        }
    }
}
