//! The dashboard updating in place, in headless Chromium (`--only dashboard-live`), with
//! 10,000 messages in the project and the page on its Timeline:
//!
//! - a send's reply → its timeline row and the recipient's unread badge (p50/p95), on a
//!   quiet daemon and again while a background load of sends runs;
//! - a burst of 10,000 sends → the page showing the last one (its row and the badge's
//!   final count), how long after the last commit; when the page's script got the last
//!   event; the WebSocket messages it took, its time handling them and in animation-frame
//!   callbacks (drawing), its reconnects, its longest main-thread task and the views it
//!   read again meanwhile; each view's draws and their time, every call the page made,
//!   and Chromium's long animation frames (their time, of it style and layout, and their
//!   scripts' time by invoker): where the page's main thread went.
//!
//! Instants as in `dashboard_bench`: the send's `created_at`, stamped in its write
//! transaction just before the commit (the reply follows the commit), and the page's
//! `Date.now()` in a `MutationObserver` that sees the row or the badge's count appear.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use coord_client::Client;
use coord_proto::api::InboxApiClient;
use coord_proto::types::*;
use coord_tests::browser::Browser;
use coord_tests::{Project, dashboard_url};
use futures::future::join_all;
use serde_json::Value;

use crate::dashboard_bench::{millis, msg, seed};
use crate::{ms, percentile, report};

const TARGET: &str = "bench-target";
/// Concurrent senders of the burst, and of the background load.
const BURST_WRITERS: usize = 8;
const LOAD_WRITERS: usize = 2;
/// Each background sender's pause between sends: a steady load the page can keep up with
/// (a flood would push a sample's row out of the 200 shown before a frame draws it).
const LOAD_PAUSE: Duration = Duration::from_millis(20);

/// Records when each timeline row and each count of the target's badge first appear, the
/// page's longest task (Chromium's `longtask` entries, 50 ms and over), its animation-frame
/// callbacks (how many, their time) and its long animation frames (Chromium's
/// `long-animation-frame` entries, frames of 50 ms and over: their time, the part spent in
/// style and layout, and their scripts' time by what invoked them).
const OBSERVER: &str = r#"(() => {
  window.__rows = {}; window.__badge = {}; window.__longest = 0;
  new MutationObserver((ms) => {
    const now = Date.now();
    for (const m of ms) for (const n of m.addedNodes) {
      const id = n.dataset && n.dataset.message;
      if (id && !(id in window.__rows)) window.__rows[id] = now;
    }
    const b = document.querySelector('tr[data-agent="bench-target"] .badge.unread');
    if (b && !(b.dataset.count in window.__badge)) window.__badge[b.dataset.count] = now;
  }).observe(document.body, {subtree: true, childList: true, attributes: true, characterData: true});
  const rpc = window.__coord.rpc, receive = rpc.receive.bind(rpc);
  window.__ws = {frames: 0, busy: 0, last: 0, drawing: 0, callbacks: 0};
  const raf = window.requestAnimationFrame.bind(window);
  window.requestAnimationFrame = (cb) => raf((t) => {
    const s = performance.now(); cb(t); window.__ws.drawing += performance.now() - s; window.__ws.callbacks += 1;
  });
  window.__loaf = {n: 0, ms: 0, layout: 0, scripts: {}};
  new PerformanceObserver((l) => {
    const f = window.__loaf;
    for (const e of l.getEntries()) {
      f.n += 1; f.ms += e.duration;
      if (e.styleAndLayoutStart) f.layout += e.startTime + e.duration - e.styleAndLayoutStart;
      for (const x of e.scripts) f.scripts[x.invokerType] = (f.scripts[x.invokerType] || 0) + x.duration;
    }
  }).observe({type: 'long-animation-frame'});
  rpc.receive = (text) => {
    const s = performance.now();
    window.__ws.frames += 1; window.__ws.last = Date.now();
    receive(text);
    window.__ws.busy += performance.now() - s;
  };
  new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__longest = Math.max(window.__longest, e.duration); })
    .observe({entryTypes: ['longtask']});
})()"#;

fn send_to(to: &str, summary: String) -> SendParams {
    SendParams { from: "lead".into(), to: to.into(), message: msg(summary), ..Default::default() }
}

/// The target's badge count as the page shows it.
fn badge(b: &mut Browser) -> u64 {
    let v = b.eval("document.querySelector('tr[data-agent=\"bench-target\"] .badge.unread')?.dataset.count");
    v.as_str().and_then(|s| s.parse().ok()).expect("the target's badge")
}

/// The page's `view.timeline` and `view.agents` calls so far.
fn refetches(b: &mut Browser) -> i64 {
    let v =
        b.eval("(window.__coord.rpc.counts['view.timeline'] || 0) + (window.__coord.rpc.counts['view.agents'] || 0)");
    v.as_i64().unwrap()
}

/// `n` sends to the target, one at a time: reply → row and reply → badge for each.
fn sample(rt: &tokio::runtime::Runtime, b: &mut Browser, c: &Client, n: usize) -> (Vec<Duration>, Vec<Duration>) {
    let base = badge(b);
    let (mut rows, mut badges) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for i in 1..=n {
        let r = rt.block_on(c.send(send_to(TARGET, format!("sample {i}")))).unwrap();
        let (id, committed) = (r.message.message_id, millis(&r.message.created_at));
        let count = base + i as u64;
        b.wait_for(&format!("window.__rows['{id}'] && window.__badge['{count}']"), "the row and the badge");
        let seen = b.eval(&format!("[window.__rows['{id}'], window.__badge['{count}']]"));
        let lat = |v: &Value| Duration::from_millis((v.as_i64().unwrap() - committed).max(0) as u64);
        rows.push(lat(&seen[0]));
        badges.push(lat(&seen[1]));
    }
    rows.sort();
    badges.sort();
    (rows, badges)
}

fn p50_p95(l: &[Duration]) -> String {
    format!("p50 {}  p95 {}  max {}", ms(percentile(l, 0.5)), ms(percentile(l, 0.95)), ms(*l.last().unwrap()))
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg").map(|s| s.split(' ').next().unwrap_or("?").to_string()).unwrap_or_default()
}

/// Sends to the seed's agents (not the target) on their own connections, paced, until `stop`.
fn background_load(rt: &tokio::runtime::Runtime, p: &Project, stop: Arc<AtomicBool>, sent: Arc<AtomicU64>) {
    for w in 0..LOAD_WRITERS {
        let c = rt.block_on(p.client());
        let (stop, sent) = (stop.clone(), sent.clone());
        rt.spawn(async move {
            let mut i = 0u64;
            while !stop.load(Ordering::Relaxed) {
                c.send(send_to(&format!("agent-{}", (w as u64 + i) % 20), format!("load {i}"))).await.unwrap();
                sent.fetch_add(1, Ordering::Relaxed);
                i += 1;
                tokio::time::sleep(LOAD_PAUSE).await;
            }
        });
    }
}

/// `n` sends to the target from `BURST_WRITERS` concurrent senders: the last commit's
/// instant and the newest message's id.
async fn burst(c: &Client, n: usize) -> (i64, String) {
    let per = n / BURST_WRITERS;
    let results = join_all((0..BURST_WRITERS).map(|w| async move {
        let mut out = Vec::with_capacity(per);
        for i in 0..per {
            out.push(c.send(send_to(TARGET, format!("burst {w}/{i}"))).await.unwrap());
        }
        out
    }))
    .await;
    let all: Vec<MessageResult> = results.into_iter().flatten().collect();
    let last_commit = all.iter().map(|r| millis(&r.message.created_at)).max().unwrap();
    let newest = all.iter().max_by_key(|r| r.event_id).unwrap().message.message_id.clone();
    (last_commit, newest)
}

pub fn run(rt: &tokio::runtime::Runtime, quick: bool) {
    let Some(mut b) = Browser::launch() else {
        report("dashboard-live", "skipped: Chromium is not installed".into());
        return;
    };
    let p = Project::new();
    let d = p.serve();
    let (messages, samples, burst_n) = if quick { (1_000, 50, 1_000) } else { (10_000, 200, 10_000) };
    let c = rt.block_on(p.client());
    rt.block_on(seed(&c, 100, messages));
    rt.block_on(c.send(send_to(TARGET, "hello".into()))).unwrap();

    b.open_dashboard(&format!("{}#timeline", dashboard_url(&p)));
    b.wait_for("document.body.dataset.loaded === '1'", "every view loaded");
    b.eval(OBSERVER);

    let (rows, badges) = sample(rt, &mut b, &c, samples);
    let quiet = format!("{messages} msgs, quiet, load avg {}", load_average());
    report(&format!("send's reply → timeline row ({quiet})"), p50_p95(&rows));
    report(&format!("send's reply → unread badge ({quiet})"), p50_p95(&badges));

    let (stop, sent) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicU64::new(0)));
    background_load(rt, &p, stop.clone(), sent.clone());
    let t0 = Instant::now();
    let (rows, badges) = sample(rt, &mut b, &c, samples);
    let rate = sent.load(Ordering::Relaxed) as f64 / t0.elapsed().as_secs_f64();
    let loaded = format!("{LOAD_WRITERS} senders, {rate:.0} sends/s, load avg {}", load_average());
    stop.store(true, Ordering::Relaxed);
    report(&format!("send's reply → timeline row ({loaded})"), p50_p95(&rows));
    report(&format!("send's reply → unread badge ({loaded})"), p50_p95(&badges));

    // Let the page settle (the load's last events), then the burst.
    b.wait_for("window.__coord.live.pending === 0", "the page to settle");
    let base = badge(&mut b);
    let before = refetches(&mut b);
    b.eval(
        "window.__longest = 0; Object.assign(window.__ws, {frames: 0, busy: 0, drawing: 0, callbacks: 0});
         window.__loaf = {n: 0, ms: 0, layout: 0, scripts: {}}; window.__calls = {...window.__coord.rpc.counts};
         for (const k in window.__coord.live.draws) delete window.__coord.live.draws[k];",
    );
    let connects = b.eval("window.__coord.connects").as_i64().unwrap();
    let t0 = Instant::now();
    let (last_commit, newest) = rt.block_on(burst(&c, burst_n));
    let took = t0.elapsed();
    let sent = (burst_n / BURST_WRITERS) * BURST_WRITERS;
    let count = base + sent as u64;
    b.wait_for(&format!("window.__rows['{newest}'] && window.__badge['{count}']"), "the burst's last row and badge");
    let seen = b.eval(&format!(
        "[window.__rows['{newest}'], window.__badge['{count}'], window.__longest,
          Math.round(performance.timeOrigin + window.__coord.lastEventAt), window.__ws.last,
          window.__ws.frames, Math.round(window.__ws.busy), window.__coord.connects, Math.round(window.__ws.drawing)]"
    ));
    let lag = |v: &Value| v.as_i64().unwrap() - last_commit;
    report(
        &format!("burst of {sent} sends ({:.0}/s) → drawn after the last commit", sent as f64 / took.as_secs_f64()),
        format!("row {} ms, badge {} ms", lag(&seen[0]), lag(&seen[1])),
    );
    report("  … its last frame reached the page's script", format!("{} ms", lag(&seen[4])));
    report("  … its last event applied by the page", format!("{} ms", lag(&seen[3])));
    report(
        "  … frames received, the page's time handling them, reconnects",
        format!("{}, {} ms, {}", seen[5], seen[6], seen[7].as_i64().unwrap() - connects),
    );
    report("  … the page's time in animation-frame callbacks (drawing)", format!("{} ms", seen[8]));
    report(
        "  the page meanwhile: longest task, views read again",
        format!("{:.0} ms, {}", seen[2].as_f64().unwrap_or(0.0), refetches(&mut b) - before),
    );
    let page = b.eval(
        "(() => { const r = (x) => Math.round(x), f = window.__loaf, calls = {};
           for (const [m, n] of Object.entries(window.__coord.rpc.counts)) if (n > (window.__calls[m] || 0)) calls[m] = n - (window.__calls[m] || 0);
           const draws = Object.fromEntries(Object.entries(window.__coord.live.draws).map(([k, d]) => [k, `${d.n} in ${r(d.ms)} ms`]));
           const scripts = Object.fromEntries(Object.entries(f.scripts).map(([k, v]) => [k, r(v)]));
           return {callbacks: window.__ws.callbacks, draws, calls, long_frames: f.n, long_frames_ms: r(f.ms), style_layout_ms: r(f.layout), scripts}; })()",
    );
    report("  … animation-frame callbacks run", page["callbacks"].to_string());
    report("  … draws by view (count, time)", page["draws"].to_string());
    report("  … calls the page made", page["calls"].to_string());
    report(
        "  … long animation frames: count, time, of it style and layout",
        format!("{}, {} ms, {} ms", page["long_frames"], page["long_frames_ms"], page["style_layout_ms"]),
    );
    report("  … their scripts' time by invoker (ms)", page["scripts"].to_string());
    report("  load average after the burst", load_average());
    drop(b);
    d.signal("TERM");
}
