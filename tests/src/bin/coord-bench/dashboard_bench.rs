//! The dashboard in headless Chromium: commit of an event → the DOM showing it (the live
//! event list, and an agent's unread badge, which takes one `view.agents` call more), page
//! load to the first complete render on a run of 1,000 tasks and 10,000 messages, and the
//! daemon's extra memory with the page open. `--only screenshots` writes the docs' images.
//!
//! Instants: the event's `created_at` is stamped inside its write transaction, just before
//! the commit; the page's `Date.now()` is taken by a `MutationObserver` when the DOM shows
//! it. Both are the same machine's wall clock, in milliseconds.

use std::path::Path;
use std::time::Duration;

use coord_client::Client;
use coord_proto::api::{EventsApiClient, InboxApiClient, OrchApiClient, ViewApiClient};
use coord_proto::types::*;
use coord_tests::browser::Browser;
use coord_tests::{Project, dashboard_url};
use futures::future::join_all;

use crate::{ms, percentile, report, rss_mib};

const AGENTS: usize = 20;
const WRITERS: usize = 8;

pub(crate) fn msg(s: String) -> MessageInput {
    MessageInput { summary: s, ..Default::default() }
}

pub(crate) fn millis(rfc3339: &str) -> i64 {
    let t = humantime::parse_rfc3339(rfc3339).expect("timestamp");
    t.duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64
}

/// A run of `tasks` tasks (a chain of layers) and `messages` messages in their threads.
pub(crate) async fn seed(c: &Client, tasks: usize, messages: usize) {
    c.run_create(RunCreateParams { run_id: Some("R1".into()), goal: "a large run".into(), ..Default::default() })
        .await
        .unwrap();
    for i in 0..tasks {
        let deps = if i >= 10 { vec![format!("T{}", i - 10)] } else { vec![] };
        let p = TaskAddParams {
            run_id: "R1".into(),
            task_id: format!("T{i}"),
            title: format!("task {i}"),
            depends_on: deps,
            assign_to: Some(format!("agent-{}", i % AGENTS)),
            kind: Some(TaskKind::Thread),
            ..Default::default()
        };
        c.task_add(p).await.unwrap();
    }
    let per_thread = 10;
    let threads = messages / per_thread;
    let chunks: Vec<Vec<usize>> = (0..WRITERS).map(|w| (0..threads).filter(|t| t % WRITERS == w).collect()).collect();
    join_all(chunks.into_iter().map(|ids| async move {
        for t in ids {
            let to = format!("agent-{}", t % AGENTS);
            let first = SendParams {
                from: "lead".into(),
                to: to.clone(),
                run_id: Some("R1".into()),
                task_id: Some(format!("T{}", t % tasks.max(1))),
                message: msg(format!("thread {t}")),
                ..Default::default()
            };
            let thread = c.send(first).await.unwrap().thread.thread_id;
            for k in 1..per_thread {
                let p = SendParams {
                    from: "lead".into(),
                    to: to.clone(),
                    thread_id: Some(thread.clone()),
                    message: msg(format!("note {k} in thread {t}")),
                    ..Default::default()
                };
                c.send(p).await.unwrap();
            }
        }
    }))
    .await;
}

/// The daemon's side of a first render: the calls the page makes, timed from a client.
fn view_calls(rt: &tokio::runtime::Runtime, c: &Client, tasks: usize) {
    let time = |what: &str, f: &dyn Fn()| {
        let mut lat: Vec<Duration> = (0..20)
            .map(|_| {
                let t0 = std::time::Instant::now();
                f();
                t0.elapsed()
            })
            .collect();
        lat.sort();
        report(what, format!("p50 {}", ms(percentile(&lat, 0.5))));
    };
    time(&format!("  view.run, {tasks} tasks"), &|| {
        rt.block_on(c.view_run(RunViewParams { run_id: "R1".into(), after: None })).unwrap();
    });
    time("  view.agents", &|| {
        rt.block_on(c.view_agents(AgentsViewParams::default())).unwrap();
    });
    time("  view.timeline, newest 200 copies", &|| {
        rt.block_on(c.view_timeline(TimelineParams { limit: Some(200), ..Default::default() })).unwrap();
    });
    time("  events.list of control messages", &|| {
        let p = EventsListParams {
            filter: EventFilter { kinds: vec![MessageKind::Control], ..Default::default() },
            limit: Some(500),
        };
        rt.block_on(c.events_list(p)).unwrap();
    });
}

pub fn run(rt: &tokio::runtime::Runtime, quick: bool) {
    let Some(mut b) = Browser::launch() else {
        report("dashboard", "skipped: Chromium is not installed".into());
        return;
    };
    let p = Project::new();
    let d = p.serve();
    let pid = d.pid();
    let (tasks, messages, samples) = if quick { (100, 1000, 30) } else { (1000, 10_000, 200) };
    let c = rt.block_on(p.client());
    rt.block_on(seed(&c, tasks, messages));
    // The views read once over the socket first, so the page's extra memory is its own.
    view_calls(rt, &c, tasks);
    let before = rss_mib(pid);

    let url = dashboard_url(&p);
    let mut loads = Vec::new();
    for _ in 0..5 {
        // A new document each time (a hash change alone would not load the page again).
        b.goto("about:blank");
        b.open_dashboard(&format!("{url}#runs"));
        b.wait_for(&format!("document.querySelectorAll('svg.graph g.node').length === {tasks}"), "every node");
        let at = b.eval("window.__coord.ready").as_f64().unwrap();
        if std::env::var_os("COORD_BENCH_VERBOSE").is_some() {
            println!("  load {at:.1} ms, per view: {}", b.eval("JSON.stringify(window.__coord.timings)"));
        }
        loads.push(Duration::from_secs_f64(at / 1000.0));
    }
    loads.sort();
    report(
        &format!("dashboard load → first full render ({tasks} tasks, {messages} msgs)"),
        format!("p50 {}  max {}", ms(percentile(&loads, 0.5)), ms(*loads.last().unwrap())),
    );

    // Record when each event's line and each badge value first appear.
    b.eval(
        r#"(() => {
            window.__seen = {}; window.__badge = {};
            new MutationObserver((ms) => {
                const now = Date.now();
                for (const m of ms) for (const n of m.addedNodes) {
                    if (n.dataset && n.dataset.event && !(n.dataset.event in window.__seen)) window.__seen[n.dataset.event] = now;
                }
                const b = document.querySelector('tr[data-agent="bench-target"] .badge.unread');
                if (b && !(b.dataset.count in window.__badge)) window.__badge[b.dataset.count] = now;
            }).observe(document.body, {subtree: true, childList: true, attributes: true, characterData: true});
        })()"#,
    );
    let mut event_lat = Vec::new();
    let mut badge_lat = Vec::new();
    for i in 1..=samples {
        let p = SendParams {
            from: "lead".into(),
            to: "bench-target".into(),
            message: msg(format!("m{i}")),
            ..Default::default()
        };
        let r = rt.block_on(c.send(p)).unwrap();
        let (id, committed) = (r.event_id, millis(&r.message.created_at));
        b.wait_for(&format!("window.__seen['{id}'] && window.__badge['{i}']"), "the event and the badge");
        let seen = b.eval(&format!("[window.__seen['{id}'], window.__badge['{i}']]"));
        let lat = |v: &serde_json::Value| Duration::from_millis((v.as_i64().unwrap() - committed).max(0) as u64);
        event_lat.push(lat(&seen[0]));
        badge_lat.push(lat(&seen[1]));
    }
    event_lat.sort();
    badge_lat.sort();
    let row = |l: &[Duration]| format!("p50 {}  p99 {}", ms(percentile(l, 0.5)), ms(percentile(l, 0.99)));
    report(&format!("commit → event shown in the page ({samples} events)"), row(&event_lat));
    report(&format!("commit → unread badge updated ({samples} sends)"), row(&badge_lat));
    let after = rss_mib(pid);
    report(
        "daemon RSS: views read over the socket → page open",
        format!("{before:.1} MiB → {after:.1} MiB (+{:.1})", after - before),
    );
    drop(b);
    d.signal("TERM");
}

/// Screenshots of each main view, for the docs.
pub fn screenshots(rt: &tokio::runtime::Runtime, dir: &Path) {
    let Some(mut b) = Browser::launch() else {
        report("screenshots", "skipped: Chromium is not installed".into());
        return;
    };
    let p = Project::new();
    let d = p.serve();
    let c = rt.block_on(p.client());
    rt.block_on(crate::dashboard_scene::build(&c, &p));
    let url = dashboard_url(&p);
    // The blocked task's thread: its conversation, question payload and artifact included.
    let attempt = rt
        .block_on(c.task_show(TaskShowParams { run_id: "R1".into(), task_id: "T2".into(), after_attempt: None }))
        .expect("T2");
    let thread = attempt.attempts.last().map(|a| a.thread_id.clone()).unwrap_or_default();
    for view in ["runs", "agents", "timeline", "reservations", "control", "threads"] {
        let place = if view == "threads" { format!("threads/{thread}") } else { view.to_string() };
        b.open_dashboard(&format!("{url}#{place}"));
        b.wait_for("document.getElementById('conn').dataset.state === 'live'", "live");
        if view == "runs" {
            b.eval("document.querySelector('g.node[data-task=\"T2\"]')?.dispatchEvent(new MouseEvent('click'))");
        }
        if view == "threads" {
            b.wait_for("document.querySelector('#view-threads li.msg pre.payload')", "the conversation");
        }
        let file = dir.join(format!("dashboard-{view}.png"));
        b.screenshot(&file);
        report("screenshot", file.display().to_string());
    }
    // The same team on a phone: one column, tables as cards.
    b.viewport(390, 844);
    for view in ["runs", "agents", "threads"] {
        let place = if view == "threads" { format!("threads/{thread}") } else { view.to_string() };
        b.open_dashboard(&format!("{url}#{place}"));
        b.wait_for("document.getElementById('conn').dataset.state === 'live'", "live");
        let file = dir.join(format!("dashboard-phone-{view}.png"));
        b.screenshot(&file);
        report("screenshot", file.display().to_string());
    }
    drop(b);
    d.signal("TERM");
}
