// Small DOM helpers. Text always goes in as text (never parsed as HTML).

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'value') el.value = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

const SVG = 'http://www.w3.org/2000/svg';
export function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v !== undefined && v !== null) el.setAttribute(k, String(v));
  }
  for (const c of children) {
    if (c === undefined || c === null) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/// Replace an element's children.
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/// The local time of day, as `toLocaleTimeString([], { hour12: false })` writes it; one
/// formatter for every call (that method builds a new one each time: ~0.1 ms, which a
/// burst's 200 rows a draw paid 400 times).
const TIME_OF_DAY = new Intl.DateTimeFormat([], { hour: 'numeric', minute: 'numeric', second: 'numeric', hour12: false });

/// "12:03:04" of an RFC 3339 instant, local time.
export function clock(ts) {
  if (!ts) return '';
  return TIME_OF_DAY.format(new Date(ts));
}

/// Age of an instant, "4s", "3m", "2h", "5d".
export function age(ts, now = Date.now()) {
  if (!ts) return '';
  const s = Math.max(0, Math.round((now - Date.parse(ts)) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}

/// An element whose text is the age of `ts`, kept current by `tickAges`.
export function since(ts) {
  return h('span', { class: 'age', dataset: { since: ts || '' }, title: ts || '' }, age(ts));
}

/// An element counting down to `ts` ("4m left", then `over`), kept current by `tickAges`.
export function until(ts, over = 'expired') {
  const el = h('span', { class: 'left', dataset: { until: ts || '', over }, title: ts || '' });
  el.textContent = left(ts, over);
  return el;
}

function left(ts, over, now = Date.now()) {
  if (!ts) return '';
  if (Date.parse(ts) <= now) return over;
  return `${age(new Date(2 * now - Date.parse(ts)).toISOString(), now)} left`;
}

/// Update every age and countdown on the page (a local clock: it asks the daemon nothing).
export function tickAges() {
  const now = Date.now();
  for (const el of document.querySelectorAll('[data-since]')) {
    if (el.dataset.since) el.textContent = age(el.dataset.since, now);
  }
  for (const el of document.querySelectorAll('[data-until]')) {
    if (el.dataset.until) el.textContent = left(el.dataset.until, el.dataset.over, now);
  }
}

/// Run `fn` at most once at a time; a call while it runs schedules one more run after it.
/// The promise returned settles when the runs that include this call are done.
export function coalesce(fn) {
  let running = null;
  let again = false;
  return function run() {
    if (running) { again = true; return running; }
    running = (async () => {
      try {
        do { again = false; await fn(); } while (again);
      } catch (e) {
        console.error(e);
      } finally {
        running = null;
      }
    })();
    return running;
  };
}

/// `fn` (a `coalesce`d load) at most once per animation frame, however many events ask
/// for it meanwhile: a burst of events costs one re-fetch per frame, not one per event.
export function perFrame(fn) {
  const run = coalesce(fn);
  let next = null;
  return function schedule() {
    if (!next) {
      next = new Promise((resolve) => {
        requestAnimationFrame(() => { next = null; run().then(resolve); });
      });
    }
    return next;
  };
}

/// Asks since the last draw above which events are taken to flow as a burst.
const BURST = 16;
/// While a burst flows, a view draws at most once per this many milliseconds.
const BURST_GAP_MS = 100;

/// `fn` (a synchronous draw) at most once per animation frame, however many events ask
/// for it meanwhile; while a burst flows (more than `BURST` asks since the last draw), at
/// most once per `BURST_GAP_MS` after the last draw ended, so the page's main thread is
/// free to take the burst's messages. A lone event is drawn at the next frame.
export function onFrame(fn) {
  let asked = 0;        // asks since the last draw
  let waiting = false;  // a frame or a timer is coming
  let ended = -Infinity;
  function frame() {
    const wait = ended + BURST_GAP_MS - performance.now();
    if (asked > BURST && wait > 0) {
      setTimeout(() => requestAnimationFrame(frame), wait);
      return;
    }
    waiting = false;
    asked = 0;
    try { fn(); } catch (e) { console.error(e); }
    ended = performance.now();
  }
  return function schedule() {
    asked += 1;
    if (waiting) return;
    waiting = true;
    requestAnimationFrame(frame);
  };
}

/// A view's drawing that waits while the view is hidden: `paint()` (and `ask()`, the same
/// at most once per frame: `onFrame`) draws when `visible()`, and otherwise only marks the
/// view dirty and runs `glance()`, a cheap update of what shows outside the view (its tab's
/// badge); `shown()` draws a dirty view at once; `whole()` draws, shown or not.
export function whenShown({ visible, draw, glance = () => {} }) {
  let dirty = false;
  const whole = () => { dirty = false; draw(); };
  const paint = () => {
    if (visible()) whole(); else { dirty = true; glance(); }
  };
  return {
    paint,
    whole,
    ask: onFrame(paint),
    shown() {
      if (dirty) whole();
    },
  };
}

/// What the live views have done: re-fetches asked for and not done yet (`pending`),
/// fetches made (`fetches`) and, by view, the draws made and the milliseconds they took
/// (`draws`), for the tests and the benchmark (`window.__coord.live`).
export const liveStats = { pending: 0, fetches: 0, draws: {} };

/// `fn` (a view's synchronous draw) counted and timed under `name` in `liveStats.draws`.
export function timed(name, fn) {
  return function draw(...args) {
    const start = performance.now();
    try {
      return fn(...args);
    } finally {
      const d = liveStats.draws[name] || (liveStats.draws[name] = { n: 0, ms: 0 });
      d.n += 1;
      d.ms += performance.now() - start;
    }
  };
}

/// Count a re-fetch asked for (+1) or done (-1); the page's `data-refetching` says how
/// many wait, so a test waiting on the DOM sees them end.
function pending(n) {
  liveStats.pending += n;
  document.body.dataset.refetching = String(liveStats.pending);
}

/// A view's model kept live by events. `fetch()` reads the model and resolves to the
/// `last_event_id` it is as of; `apply(ev)` changes the model in place and returns false
/// when the event does not carry what the model needs; `draw()` shows the model. While
/// `visible()` is false, events change the model and only `glance()` runs (`whenShown`);
/// `shown()` draws what they changed meanwhile. A model read (rare: the first load, what
/// an event cannot carry) is drawn whole, shown or not.
///
/// An event the snapshot already holds is skipped; one that arrives while a fetch is in
/// flight is held and applied after it. What cannot be applied is fetched again, at most
/// once per animation frame however many events ask (`perFrame`), and the model is drawn
/// at most once per frame however many events change it (less often while a burst flows:
/// `onFrame`).
export function live({ fetch, apply, draw, visible = () => true, glance }) {
  const load = coalesce(load_);
  const fetchSoon = perFrame(load);
  let scheduled = null;
  /// Ask for a re-fetch; `liveStats.pending` counts those asked for and not done yet.
  function refresh() {
    const p = fetchSoon();
    if (p !== scheduled) {
      scheduled = p;
      pending(1);
      p.finally(() => pending(-1));
    }
    return p;
  }
  let asOf = -1;
  let loading = false;
  let held = [];
  const view = whenShown({ visible, draw, glance });
  async function load_() {
    liveStats.fetches += 1;
    loading = true;
    held = [];
    let missed = false;
    try {
      asOf = await fetch();
      for (const ev of held) if (ev.event_id > asOf && apply(ev) === false) missed = true;
    } finally {
      loading = false;
      held = [];
    }
    view.whole();
    if (missed) refresh();
  }
  return {
    load,
    refresh,
    onEvent(ev) {
      if (loading) { held.push(ev); return; }
      if (ev.event_id <= asOf) return;
      if (apply(ev) === false) refresh();
      else view.ask();
    },
    shown: view.shown,
  };
}

export function errorText(e) {
  if (!e) return 'error';
  const code = e.data && e.data.code ? `${e.data.code}: ` : '';
  return code + (e.message || String(e));
}
