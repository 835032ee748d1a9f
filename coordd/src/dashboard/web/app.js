// The dashboard: one WebSocket to the daemon (the same JSON-RPC protocol as every other
// client), one events.subscribe from a cursor, and views that apply each event to their
// model in place, re-fetching only what an event cannot carry, at most once per animation
// frame. Only the view shown draws; a hidden one draws what it missed when it shows.
// Nothing polls: after a disconnect (a daemon restart) it reconnects and subscribes again
// from its cursor, so no event is missed. After a few failed attempts it stops (the daemon
// may serve a new port and token now) and says what to run.

import { Rpc } from './rpc.js';
import { tickAges, liveStats, onFrame } from './dom.js';
import * as runs from './runs.js';
import * as agents from './agents.js';
import * as timeline from './timeline.js';
import * as reservations from './reservations.js';
import * as control from './control.js';
import * as threads from './threads.js';

/// The person's identity when they send or answer from the page, until the daemon names it
/// (`dashboard.status`: `orch dashboard --as NAME`).
const OVERSEER = 'overseer';
const MAX_BACKOFF_MS = 2000;
/// Failed attempts in a row after which the page stops retrying: the daemon may have come
/// back on another port with another token, and the old port may belong to anyone now.
const MAX_FAILURES = 6;

const rpc = new Rpc(new URL('ws', location.href).href.replace(/^http/, 'ws'));
const ctx = {
  rpc,
  overseer: OVERSEER,
  /// The newest event applied so far.
  cursor: () => cursor,
  setBadge(id, n) {
    const el = document.getElementById(id);
    if (!el) return;
    el.textContent = String(n);
    el.hidden = !n;
  },
};

const views = {
  runs: runs.create(ctx, document.getElementById('view-runs')),
  agents: agents.create(ctx, document.getElementById('view-agents')),
  timeline: timeline.create(ctx, document.getElementById('view-timeline')),
  reservations: reservations.create(ctx, document.getElementById('view-reservations')),
  control: control.create(ctx, document.getElementById('view-control')),
  threads: threads.create(ctx, document.getElementById('view-threads')),
};

/// Newest event applied; a reconnect resumes after it.
let cursor = null;
const state = { connects: 0, events: 0, gaps: 0, ready: null, lastEventAt: null };
window.__coord = state;
// The browser tests reach the client through it (to hand it what a daemon may send).
state.rpc = rpc;
// What the live views re-fetched (a test waits for `pending` to be 0, then counts calls).
state.live = liveStats;

function setConn(s, text) {
  const el = document.getElementById('conn');
  el.dataset.state = s;
  el.textContent = text;
  // What the page shows is as of the last event while it is not live: dimmed.
  document.body.classList.toggle('stale', s !== 'live');
}

/// The header's event number, written once per frame (not once per event of a burst).
const drawCursor = onFrame(() => { document.getElementById('cursor').textContent = `event ${cursor}`; });

function onEvent(ev) {
  if (cursor !== null && ev.event_id !== cursor + 1) state.gaps += ev.event_id - cursor - 1;
  cursor = Math.max(cursor ?? 0, ev.event_id);
  state.events += 1;
  state.cursor = cursor;
  state.lastEventAt = performance.now();
  drawCursor();
  for (const v of Object.values(views)) v.onEvent(ev);
}

async function start() {
  setConn('connecting', state.connects ? 'reconnecting…' : 'connecting…');
  await rpc.connect();
  state.connects += 1;
  const info = await rpc.call('dashboard.status');
  ctx.overseer = info.overseer || OVERSEER;
  document.getElementById('who').textContent = `as ${ctx.overseer}`;
  if (cursor === null) {
    const hello = await rpc.call('system.hello');
    cursor = hello.last_event_id;
    state.cursor = cursor;
  }
  // The stream resumes after the cursor while the views read their state: an event that
  // commits in between arrives and redraws a view that may already show it. The visible
  // view comes first; the first render is complete when it is drawn.
  state.timings = { connected: performance.now() };
  const loads = {};
  for (const [name, v] of Object.entries(views)) {
    loads[name] = v.load().then(() => { state.timings[name] = performance.now(); });
  }
  await Promise.all([rpc.subscribe({ after_event: cursor }, onEvent), loads[currentTab()]]);
  setConn('live', 'live');
  document.getElementById('cursor').textContent = `event ${cursor}`;
  if (state.ready === null) {
    state.ready = performance.now();
    document.body.dataset.ready = '1';
  }
  await Promise.all(Object.values(loads));
  state.loaded = performance.now();
  document.body.dataset.loaded = '1';
}

let backoff = 100;
async function run() {
  for (let failures = 0; ; ) {
    try {
      await start();
      backoff = 100;
      return;
    } catch (e) {
      failures += 1;
      state.failures = failures;
      if (failures >= MAX_FAILURES) {
        rpc.close();
        setConn('gone', 'disconnected');
        document.getElementById('gone').hidden = false;
        return;
      }
      setConn('down', 'daemon unreachable — retrying');
      await new Promise((r) => setTimeout(r, backoff));
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
    }
  }
}

rpc.onclose = () => {
  setConn('down', 'disconnected — reconnecting');
  run();
};

function currentTab() {
  const tab = (location.hash || '#runs').slice(1).split('/')[0];
  return views[tab] ? tab : 'runs';
}

/// Show the current tab's view; it draws what changed while it was hidden (a hidden view
/// keeps its model and its tab's badge only).
function route() {
  const name = currentTab();
  for (const sec of document.querySelectorAll('main > section')) sec.hidden = sec.dataset.view !== name;
  for (const a of document.querySelectorAll('#tabs a')) a.classList.toggle('active', a.dataset.tab === name);
  views[name].shown();
}

window.addEventListener('hashchange', route);
route();
setInterval(tickAges, 1000);
run();
