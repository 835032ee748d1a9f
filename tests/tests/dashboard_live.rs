//! The dashboard updates in place (headless Chromium, the real daemon): a send's event adds
//! its timeline row and raises the recipient's unread badge without reading either view
//! again, a burst of events costs at most one re-fetch per view, and what an event cannot
//! carry (a new lease) is read again and shown. The page's calls are counted by method
//! (`window.__coord.rpc.counts`); a test reads them once no re-fetch is waiting
//! (`window.__coord.live.pending`). Skips without Chromium, but fails under `COORD_CI`.

use coord_tests::browser::Browser;
use coord_tests::*;
use serde_json::json;

/// `true` when the agent's unread badge shows `n`.
fn badge(agent: &str, n: u64) -> String {
    format!("document.querySelector('tr[data-agent=\"{agent}\"] .badge.unread')?.dataset.count === '{n}'")
}

/// `true` when the timeline shows the message's copy to `to` in `delivery`.
fn copy(message: &str, to: &str, delivery: &str) -> String {
    format!(
        "document.querySelector('#view-timeline tr[data-message=\"{message}\"] .copy[data-to=\"{to}\"]')\
         ?.dataset.delivery === '{delivery}'"
    )
}

/// Wait until every view has loaded and no re-fetch is waiting.
fn settle(b: &mut Browser) {
    b.wait_for("document.body.dataset.loaded === '1' && window.__coord.live.pending === 0", "the page to settle");
}

/// The page's calls of `view.timeline` and `view.agents` so far, once it has settled.
fn view_calls(b: &mut Browser) -> serde_json::Value {
    settle(b);
    b.eval(
        "(({'view.timeline': t = 0, 'view.agents': a = 0}) => ({timeline: t, agents: a}))(window.__coord.rpc.counts)",
    )
}

/// A page open on the timeline, with `agent` registered and one message from `lead` to it
/// shown (the first send from a sender the page has not seen reads the agents again).
fn page_with_one_message(b: &mut Browser, p: &Project, agent: &str) {
    ok(p, &["agent", "register", "--name", agent, "--role", "worker"]);
    b.open_dashboard(&format!("{}#timeline", dashboard_url(p)));
    b.wait_for("document.getElementById('conn').dataset.state === 'live'", "live");
    let first = message_id(&ok(p, &["send", "--from", "lead", "--to", agent, "--summary", "first"]));
    b.wait_for(&copy(&first, agent, "queued"), "the first message's row");
    b.wait_for(&badge(agent, 1), "the first badge");
    b.wait_for("document.body.dataset.loaded === '1'", "every view loaded");
}

/// Send `n` messages to `to` (the i-th from `from(i)`) while the page holds its events, then
/// hand it every one of them in one go (one task, so no animation frame comes in between);
/// the last send's output.
fn burst(b: &mut Browser, p: &Project, n: u64, to: &str, from: &dyn Fn(u64) -> String) -> serde_json::Value {
    b.eval(
        "(() => { const rpc = window.__coord.rpc; const key = [...rpc.subs.keys()][0];
           window.__apply = rpc.subs.get(key); window.__held = [];
           rpc.subs.set(key, (ev) => { window.__held.push(ev); document.body.dataset.held = window.__held.length; });
           window.__release = () => { rpc.subs.set(key, window.__apply); for (const ev of window.__held) window.__apply(ev); }; })()",
    );
    let mut last = json!(null);
    for i in 0..n {
        last = ok(p, &["send", "--from", &from(i), "--to", to, "--summary", &format!("burst {i}")]);
    }
    let id = last["event_id"].as_i64().unwrap();
    b.wait_for(&format!("window.__held.some((ev) => ev.event_id === {id})"), "the held events");
    b.eval("window.__release()");
    last
}

#[test]
fn a_send_adds_its_row_and_raises_the_badge_without_a_refetch() {
    let Some(mut b) = Browser::launch() else { return };
    let p = Project::new();
    page_with_one_message(&mut b, &p, "bob-1");
    let before = view_calls(&mut b);

    let sent = ok(&p, &["send", "--from", "lead", "--to", "bob-1", "--summary", "please rebase"]);
    let id = message_id(&sent);
    b.wait_for(&copy(&id, "bob-1", "queued"), "the new row");
    b.wait_for(&badge("bob-1", 2), "the badge to show 2");
    let row = b.eval(&format!(
        "document.querySelector('#view-timeline tr[data-message=\"{id}\"]').textContent.includes('please rebase')"
    ));
    assert_eq!(row, json!(true));
    assert_eq!(view_calls(&mut b), before, "neither view was read again");

    ok(&p, &["check", "--agent", "bob-1"]);
    b.wait_for(&copy(&id, "bob-1", "delivered"), "the copy delivered");
    b.wait_for(&badge("bob-1", 0), "the badge cleared");
    assert_eq!(view_calls(&mut b), before, "a delivery is applied in place too");
}

#[test]
fn a_burst_of_sends_is_applied_in_place() {
    let Some(mut b) = Browser::launch() else { return };
    let p = Project::new();
    page_with_one_message(&mut b, &p, "bob-2");
    let before = view_calls(&mut b);
    let n = 30;
    let last = burst(&mut b, &p, n, "bob-2", &|_| "lead".into());

    b.wait_for(&copy(&message_id(&last), "bob-2", "queued"), "the last row");
    b.wait_for(&badge("bob-2", n + 1), "the badge to count the burst");
    let rows = b.eval("document.querySelectorAll('#view-timeline tbody tr[data-message]').length");
    assert_eq!(rows, json!(n + 1), "one row per message");
    assert_eq!(view_calls(&mut b), before, "no view was read again");
}

#[test]
fn a_burst_of_events_the_page_cannot_apply_costs_one_refetch() {
    let Some(mut b) = Browser::launch() else { return };
    let p = Project::new();
    page_with_one_message(&mut b, &p, "bob-3");
    let before = view_calls(&mut b);
    // Each from a sender the page has never seen: the agents view must read the new rows.
    let n = 20;
    burst(&mut b, &p, n, "bob-3", &|i| format!("new-{i}"));

    b.wait_for(&badge("bob-3", n + 1), "the badge to count the burst");
    b.wait_for("document.querySelector('tr[data-agent=\"new-19\"]') !== null", "the new senders' rows");
    let after = view_calls(&mut b);
    assert_eq!(after["agents"], before["agents"].as_i64().unwrap() + 1, "one re-fetch for {n} events: {after}");
    assert_eq!(after["timeline"], before["timeline"], "the rows came in the events");
}

#[test]
fn a_claim_is_read_again_and_shows_the_thread_and_its_lease() {
    let Some(mut b) = Browser::launch() else { return };
    let p = Project::new();
    page_with_one_message(&mut b, &p, "bob-4");
    let before = view_calls(&mut b);
    let thr = thread_id(&ok(&p, &["send", "--from", "lead", "--to", "bob-4", "--summary", "rebase the branch"]));
    ok(&p, &["claim", "--agent", "bob-4", "--thread", &thr]);

    let row = "tr[data-agent=\"bob-4\"]";
    b.wait_for(
        &format!("document.querySelector('{row} td[data-label=\"current thread\"]')?.textContent.includes('rebase the branch')"),
        "the held thread",
    );
    let cells = b.eval(&format!(
        "[document.querySelector('{row} td[data-label=\"current thread\"] .pill').textContent,
          document.querySelector('{row} td[data-label=\"lease left\"]').textContent.endsWith('left'),
          document.querySelector('{row}').dataset.need]"
    ));
    assert_eq!(cells, json!(["claimed", true, "busy"]), "the lease a claim's event does not carry");
    let after = view_calls(&mut b);
    assert_eq!(after["agents"], before["agents"].as_i64().unwrap() + 1, "read again once: {after}");
}

/// More sends than the daemon's event bus holds, from eight clients at once, while the page
/// is live: whether its subscription kept up or fell behind and replayed from the store,
/// the page ends showing the 200 newest messages in order and the whole unread count, and
/// reads its timeline again at most once per reconnect (replayed events carry their copies
/// as live ones do, so none needs a re-fetch).
#[test]
fn a_burst_larger_than_the_event_bus_is_drawn_whole() {
    use coord_proto::api::InboxApiClient;
    use coord_proto::types::{MessageInput, MessageResult, SendParams};
    let Some(mut b) = Browser::launch() else { return };
    let p = Project::new();
    page_with_one_message(&mut b, &p, "bob-1");
    let before = view_calls(&mut b);
    let connects = b.eval("window.__coord.connects").as_i64().unwrap();

    let (writers, per) = (8, coordd::bus::BUS_CAPACITY / 8 + 25);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut sent: Vec<MessageResult> = rt.block_on(async {
        let c = p.client().await;
        let one = |w: usize, i: usize| SendParams {
            from: "lead".into(),
            to: "bob-1".into(),
            message: MessageInput { summary: format!("burst {w}/{i}"), ..Default::default() },
            ..Default::default()
        };
        let c = &c;
        let all = futures::future::join_all((0..writers).map(|w| async move {
            let mut out = Vec::with_capacity(per);
            for i in 0..per {
                out.push(c.send(one(w, i)).await.unwrap());
            }
            out
        }));
        all.await.into_iter().flatten().collect()
    });
    assert!(sent.len() > coordd::bus::BUS_CAPACITY);
    sent.sort_by_key(|r| std::cmp::Reverse(r.event_id));
    let newest: Vec<&str> = sent.iter().take(200).map(|r| r.message.message_id.as_str()).collect();

    b.wait_for(&badge("bob-1", sent.len() as u64 + 1), "the whole unread count");
    b.wait_for(&copy(newest[0], "bob-1", "queued"), "the newest message's row");
    let after = view_calls(&mut b);
    let shown =
        b.eval("[...document.querySelectorAll('#view-timeline tr[data-message]')].map((r) => r.dataset.message)");
    let shown: Vec<&str> = shown.as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert_eq!(shown, newest, "the 200 newest messages, newest first");
    let reconnects = b.eval("window.__coord.connects").as_i64().unwrap() - connects;
    let timeline = after["timeline"].as_i64().unwrap() - before["timeline"].as_i64().unwrap();
    assert!(timeline <= reconnects, "timeline read again {timeline} times with {reconnects} reconnects");
}

/// The page's calls of `method` so far.
fn calls(b: &mut Browser, method: &str) -> i64 {
    b.eval(&format!("window.__coord.rpc.counts['{method}'] || 0")).as_i64().unwrap()
}

/// A hidden view keeps its model live but does not draw: the Timeline, hidden behind the
/// Agents view, shows a send's row only when it is shown, drawn from its model (not read
/// again).
#[test]
fn a_hidden_view_draws_the_events_it_missed_when_shown() {
    let Some(mut b) = Browser::launch() else { return };
    let p = Project::new();
    ok(&p, &["agent", "register", "--name", "bob-5", "--role", "worker"]);
    b.open_dashboard(&format!("{}#agents", dashboard_url(&p)));
    b.wait_for("document.body.dataset.loaded === '1'", "every view loaded");
    let before = view_calls(&mut b);

    let id = message_id(&ok(&p, &["send", "--from", "lead", "--to", "bob-5", "--summary", "while hidden"]));
    b.wait_for(&badge("bob-5", 1), "the badge on the view shown");
    let row = format!("document.querySelector('#view-timeline tr[data-message=\"{id}\"]') !== null");
    settle(&mut b);
    assert_eq!(b.eval(&row), json!(false), "the hidden Timeline drew nothing");

    b.eval("location.hash = '#timeline'");
    b.wait_for(&copy(&id, "bob-5", "queued"), "the missed row once the Timeline shows");
    assert_eq!(view_calls(&mut b)["timeline"], before["timeline"], "drawn from the model, not read again");
}

/// The hidden Threads view reads nothing while events come: a new thread is read once, when
/// the view shows.
#[test]
fn a_hidden_threads_view_reads_its_list_when_shown() {
    let Some(mut b) = Browser::launch() else { return };
    let p = Project::new();
    page_with_one_message(&mut b, &p, "bob-6");
    let before = calls(&mut b, "inbox.list");

    let sent = ok(&p, &["send", "--from", "lead", "--to", "bob-6", "--summary", "a new thread"]);
    b.wait_for(&copy(&message_id(&sent), "bob-6", "queued"), "the row on the Timeline");
    let item = format!("document.querySelector('#view-threads li[data-thread=\"{}\"]') !== null", thread_id(&sent));
    settle(&mut b);
    assert_eq!(calls(&mut b, "inbox.list"), before, "the hidden Threads view read nothing");
    assert_eq!(b.eval(&item), json!(false));

    b.eval("location.hash = '#threads'");
    b.wait_for(&item, "the new thread once the view shows");
    assert_eq!(calls(&mut b, "inbox.list"), before + 1, "read once, when shown");
}

/// The page's draw scheduling (`onFrame` in dom.js), run on a clock and frames the test
/// controls: a lone ask draws at the next frame; a burst (more than 16 asks) within 100 ms
/// of the last draw waits until 100 ms after it; a burst long after the last draw draws at
/// the next frame. Each entry of the result: the draws made so far after one step.
#[test]
fn a_burst_is_drawn_at_most_once_per_100_ms_and_a_lone_event_at_the_next_frame() {
    let Some(mut b) = Browser::launch() else { return };
    let p = Project::new();
    b.open_dashboard(&dashboard_url(&p));
    b.eval("import('./dom.js').then((m) => { window.__dom = m; })");
    let steps = b.eval(
        "(() => {
           const real = [window.requestAnimationFrame, window.setTimeout, performance.now];
           let now = 1000, frames = [], timers = [], draws = 0;
           window.requestAnimationFrame = (cb) => frames.push(cb);
           window.setTimeout = (cb, ms) => timers.push([now + ms, cb]);
           performance.now = () => now;
           const frame = () => { const f = frames; frames = []; for (const cb of f) cb(now); return draws; };
           const ask = window.__dom.onFrame(() => { draws += 1; now += 10; });
           const out = [];
           try {
             ask(); out.push(frame());                                  // lone: drawn at once
             now += 5; for (let i = 0; i < 20; i += 1) ask();
             out.push(frame());                                         // burst 5 ms after: waits
             out.push(timers.map(([at]) => at - 1010));                 // until 100 ms after the draw ended
             now = timers[0][0]; timers.shift()[1]();
             out.push(frame());                                         // then drawn
             now += 500; for (let i = 0; i < 20; i += 1) ask();
             out.push(frame());                                         // burst long after: at once
             now += 1; ask(); out.push(frame());                        // lone, 1 ms after: at once
           } finally {
             [window.requestAnimationFrame, window.setTimeout, performance.now] = real;
           }
           return out;
         })()",
    );
    assert_eq!(steps, json!([1, 1, [100], 2, 3, 4]));
}
