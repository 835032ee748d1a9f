// Timeline: who sent what to whom and when, with each copy's delivery state (queued,
// delivered, read, acked, withdrawn, expired), its category and whether it needs an ack;
// a broadcast is one row with its recipients. For the whole project or one agent, thread
// or run (menus of the known ones), with "older" paging past the first page and a search
// box (`messages.search`); and the raw event stream as it arrives.
//
// Live in place: a message's event adds its row from the copies the event names (`mail`),
// and `mail.read`, `mail.acked`, `mail.delivered` and `mail.withdrawn` move a copy's
// delivery state; only a message event without its copies (a replay) costs a re-fetch.
// Rows and the live list are drawn at most once per animation frame (once per 100 ms while
// a burst flows), in place: new rows go on top and rows past those kept are dropped. While
// the view is hidden, events change the model only; it is drawn when the view shows.

import { h, fill, clock, errorText, live, whenShown, timed } from './dom.js';
import { whereLinks } from './links.js';

const MAX_EVENTS = 200;
const PAGE = 200;
/// Events shown from before the page opened.
const BACKLOG = 50;

/// Copies of one message sent at once (a broadcast) collapse into one row.
export function collapse(items) {
  const out = [];
  const byMessage = new Map();
  for (const m of items) {
    const row = byMessage.get(m.message_id);
    if (row) { row.copies.push(m); continue; }
    const r = { ...m, copies: [m] };
    byMessage.set(m.message_id, r);
    out.push(r);
  }
  return out;
}

/// The copies (timeline items) a message's live event describes, in the timeline's order;
/// null when the event does not name them (a replayed event: read them back).
export function copiesOf(ev) {
  const m = ev.message;
  if (!m || !ev.mail) return null;
  return [...ev.mail.recipients].sort().map((to) => ({
    message_id: m.message_id, thread_id: m.thread_id, run_id: ev.run_id, task_id: ev.task_id,
    from_agent: m.from_agent, to_agent: to, category: m.category ?? null, subject: '',
    summary: m.summary, body: m.body, kind: m.kind, requires_ack: !!m.requires_ack, state: 'unread',
    priority: ev.mail.priority, delivery: 'queued', created_at: m.created_at, delivered_at: null,
    read_at: null, acked_at: null, expires_at: ev.mail.expires_at ?? null, withdrawn_at: null, event_id: ev.event_id,
  }));
}

/// A queued copy whose expiry has passed shows as expired (no event says so).
function deliveryNow(c, now = Date.now()) {
  return c.delivery === 'queued' && c.expires_at && Date.parse(c.expires_at) <= now ? 'expired' : c.delivery;
}

/// Apply a mail event to the copies of `row` (one message): true when one changed.
export function applyMail(row, ev) {
  const p = ev.payload_json || {};
  const at = ev.created_at;
  let changed = false;
  for (const c of row.copies) {
    if (ev.event_type === 'mail.delivered') {
      if (!(p.recipients || []).includes(c.to_agent) || deliveryNow(c) !== 'queued') continue;
      c.delivery = 'delivered';
      c.delivered_at = at;
    } else if (ev.event_type === 'mail.withdrawn') {
      if (deliveryNow(c) !== 'queued') continue;
      c.delivery = 'withdrawn';
      c.withdrawn_at = at;
    } else {
      if (c.to_agent !== p.recipient || c.delivery === 'withdrawn') continue;
      const acked = ev.event_type === 'mail.acked';
      c.state = acked ? 'acked' : 'read';
      c.delivery = c.state;
      c.read_at = c.read_at || at;
      if (acked) c.acked_at = at;
      c.delivered_at = c.delivered_at || at;
    }
    changed = true;
  }
  return changed;
}

export function create(ctx, root) {
  const visible = () => !root.hidden;
  let filter = {};
  let rows = [];               // shown, newest first: one per message, with its copies
  const byMessage = new Map(); // message_id -> row
  let cap = PAGE;              // rows kept: the first page, and every older page loaded
  let more = false;            // older copies exist
  let full = true;             // the next draw redraws every row
  const fresh = new Set();     // rows added since the last draw
  const changed = new Set();   // rows whose copies changed since the last draw
  const shownRows = new Map(); // message_id -> its <tr>
  const by = h('select', { 'aria-label': 'show' }, ['all', 'agent', 'thread_id', 'run_id'].map((k) => h('option', { value: k }, k === 'all' ? 'whole project' : k.replace('_id', ''))));
  const value = h('input', { type: 'text', placeholder: 'name or id', class: 'filter-value', list: 'timeline-known' });
  const known = h('datalist', { id: 'timeline-known' });
  const search = h('input', { type: 'search', placeholder: 'search messages', class: 'search', 'aria-label': 'search messages' });
  const error = h('small', { class: 'muted' });
  const apply = () => {
    filter = by.value === 'all' || !value.value.trim() ? {} : { [by.value]: value.value.trim() };
    search.value = '';
    load();
  };
  by.addEventListener('change', () => { fillKnown(); apply(); });
  value.addEventListener('keydown', (e) => { if (e.key === 'Enter') apply(); });
  value.addEventListener('change', apply);
  search.addEventListener('keydown', (e) => { if (e.key === 'Enter') find(); });
  const list = h('tbody');
  const older = h('button', { class: 'older', onclick: () => loadOlder() }, 'older');
  const events = h('ol', { class: 'events', reversed: true });
  fill(root, h('h2', {}, 'Timeline'),
    h('div', { class: 'toolbar' }, 'Show ', by, ' ', value, known, ' ', h('button', { onclick: apply }, 'Apply'), ' ', search, ' ', error),
    h('table', { class: 'timeline cards' }, h('thead', {}, h('tr', {}, ['time', 'from', 'to', 'kind', 'message', 'thread', 'delivery'].map((c) => h('th', {}, c)))), list),
    older,
    h('h3', {}, 'Live events'), events);

  /// The datalist offers the known agents or runs for the chosen filter.
  async function fillKnown() {
    try {
      if (by.value === 'agent') {
        const v = await ctx.rpc.call('view.agents', {});
        fill(known, v.agents.map((a) => h('option', { value: a.agent.agent_id })));
      } else if (by.value === 'run_id') {
        const r = await ctx.rpc.call('orch.runList');
        fill(known, r.runs.map((x) => h('option', { value: x.run_id }, x.goal)));
      } else {
        fill(known);
      }
    } catch (e) {
      error.textContent = errorText(e);
    }
  }

  // The live event list: events queue here and the newest are drawn once per frame.
  let shown = 0;   // newest event in the live list
  let queued = [];
  const liveList = whenShown({ visible, draw: timed('timeline-events', () => {
    const batch = queued.slice(-MAX_EVENTS);
    queued = [];
    const top = document.createDocumentFragment();
    for (let i = batch.length - 1; i >= 0; i -= 1) {
      const ev = batch[i];
      top.append(h('li', { value: ev.event_id, dataset: { event: ev.event_id } },
        h('span', { class: 'muted' }, clock(ev.created_at)), ' ', h('code', {}, ev.event_type), ' ', ev.actor ? h('b', {}, ev.actor) : null, ' ', ev.summary));
    }
    events.prepend(top);
    while (events.children.length > MAX_EVENTS) events.lastChild.remove();
  }) });
  const drawEvents = liveList.ask;
  function show(ev) {
    if (ev.event_id <= shown) return;
    shown = ev.event_id;
    queued.push(ev);
    if (queued.length > 2 * MAX_EVENTS) queued = queued.slice(-MAX_EVENTS);
    drawEvents();
  }

  /// Replace the rows with `items` (copies, newest first).
  function reset(items, hasMore) {
    rows = collapse(items);
    byMessage.clear();
    for (const r of rows) byMessage.set(r.message_id, r);
    cap = Math.max(PAGE, rows.length);
    more = hasMore;
    full = true;
  }

  /// Does a copy belong in the timeline as filtered (as `view.timeline` decides)?
  function wanted(c) {
    if (filter.agent) return c.to_agent === filter.agent || c.from_agent === filter.agent;
    if (filter.thread_id) return c.thread_id === filter.thread_id;
    if (filter.run_id) return c.run_id === filter.run_id;
    return true;
  }

  /// Apply one event to the rows; false when it needs them read again.
  function applyEvent(ev) {
    if (ev.message) {
      const copies = copiesOf(ev);
      if (!copies) return false;
      const mine = copies.filter(wanted);
      if (!mine.length || byMessage.has(ev.message.message_id)) return true;
      const r = { ...mine[0], copies: mine };
      rows.unshift(r);
      byMessage.set(r.message_id, r);
      fresh.add(r);
      while (rows.length > cap) {
        const gone = rows.pop();
        byMessage.delete(gone.message_id);
        fresh.delete(gone);
        changed.delete(gone);
        more = true;
      }
      return true;
    }
    if (ev.event_type.startsWith('mail.')) {
      const ids = ev.event_type === 'mail.delivered' ? (ev.payload_json?.message_ids || []) : [ev.payload_json?.message_id];
      for (const id of ids) {
        const r = byMessage.get(id);
        if (r && applyMail(r, ev)) changed.add(r);
      }
    }
    return true;
  }

  function draw() {
    if (search.value.trim()) return;   // the search's hits are shown; a clear reads again
    older.hidden = !more;
    if (full || !rows.length) {
      full = false;
      fresh.clear();
      changed.clear();
      shownRows.clear();
      fill(list, rows.length ? rows.map(tr) : h('tr', { class: 'empty' }, h('td', { colspan: 7, class: 'muted' }, 'No messages.')));
      return;
    }
    list.querySelector('tr.empty')?.remove();
    for (const [id, el] of shownRows) if (!byMessage.has(id)) { el.remove(); shownRows.delete(id); }
    for (const r of changed) if (!fresh.has(r)) shownRows.get(r.message_id)?.replaceWith(tr(r));
    // The new rows (added oldest first) go on top, newest first, in one insertion.
    const top = document.createDocumentFragment();
    for (const r of [...fresh].reverse()) top.append(tr(r));
    list.prepend(top);
    fresh.clear();
    changed.clear();
  }

  const model = live({
    async fetch() {
      const backlog = shown === 0 && ctx.cursor() > 0
        ? ctx.rpc.call('events.list', { after_event: Math.max(0, ctx.cursor() - BACKLOG), limit: BACKLOG })
        : null;
      const view = ctx.rpc.call('view.timeline', { ...filter, limit: PAGE });
      if (backlog) {
        const r = await backlog;
        for (const ev of r.events) if (ev.event_id <= ctx.cursor()) show(ev);
      }
      try {
        const v = await view;
        error.textContent = '';
        reset(v.items, v.items.length === PAGE);
        return v.last_event_id;
      } catch (e) {
        error.textContent = errorText(e);
        throw e;
      }
    },
    apply: applyEvent,
    draw: timed('timeline', draw),
    visible,
  });
  const load = () => model.load();

  async function loadOlder() {
    if (!rows.length) return;
    const before = Math.min(...rows.map((m) => m.event_id));
    try {
      const v = await ctx.rpc.call('view.timeline', { ...filter, limit: PAGE, before_event: before });
      for (const r of collapse(v.items)) {
        if (byMessage.has(r.message_id)) continue;
        rows.push(r);
        byMessage.set(r.message_id, r);
      }
      cap = Math.max(cap, rows.length);
      more = v.items.length === PAGE;
      full = true;
      draw();
    } catch (e) {
      error.textContent = errorText(e);
    }
  }

  async function find() {
    const q = search.value.trim();
    if (!q) { load(); return; }
    try {
      const r = await ctx.rpc.call('messages.search', { query: q, ...filter, limit: 100 });
      error.textContent = `${r.hits.length} found`;
      older.hidden = true;
      full = true;
      fill(list, r.hits.length ? r.hits.map((m) => h('tr', { dataset: { message: m.message_id, hit: '1' } },
        h('td', { dataset: { label: 'time' }, title: m.created_at }, clock(m.created_at)), h('td', { dataset: { label: 'from' } }, m.from_agent),
        h('td', { dataset: { label: 'to' } }, m.to_agent), h('td', { dataset: { label: 'kind' } }, m.kind),
        h('td', { class: 'summary', dataset: { label: 'message' } }, m.summary), h('td', { dataset: { label: 'thread' } }, h('small', { class: 'muted id' }, whereLinks(m))),
        h('td', {}, '')))
        : h('tr', {}, h('td', { colspan: 7, class: 'muted' }, `Nothing matches ${q}.`)));
    } catch (e) {
      error.textContent = errorText(e);
    }
  }

  /// A row's element, remembered so a change replaces it in place.
  function tr(m) {
    const el = row(m);
    shownRows.set(m.message_id, el);
    return el;
  }

  function row(m) {
    const cell = (label, attrs, ...c) => h('td', { ...attrs, dataset: { label } }, ...c);
    const to = m.copies.length > 1
      ? h('span', { class: 'recipients', title: m.copies.map((c) => c.to_agent).join(', ') }, `${m.copies.length} recipients: ${m.copies.map((c) => c.to_agent).join(', ')}`)
      : m.to_agent;
    const now = Date.now();
    return h('tr', { dataset: { message: m.message_id, to: m.to_agent, copies: m.copies.length } },
      cell('time', { title: m.created_at }, clock(m.created_at)), cell('from', {}, m.from_agent), cell('to', {}, to),
      cell('kind', {}, m.kind, m.category ? h('span', { class: 'pill category' }, m.category) : null,
        m.requires_ack ? h('span', { class: 'pill ack', title: 'the recipient must acknowledge it' }, 'ack required') : null,
        m.priority === 'urgent' ? h('span', { class: 'pill urgent' }, 'urgent') : null),
      cell('message', { class: 'summary' }, m.summary), cell('thread', {}, h('small', { class: 'muted id' }, whereLinks(m))),
      cell('delivery', {}, m.copies.map((c) => {
        const d = deliveryNow(c, now);
        return h('span', { class: 'copy', dataset: { to: c.to_agent, delivery: d } },
          m.copies.length > 1 ? h('small', {}, `${c.to_agent} `) : null,
          h('span', { class: `pill dl-${d}` }, d),
          h('small', { class: 'muted' }, c.delivered_at && d === 'delivered' ? ` at ${clock(c.delivered_at)}` : ''));
      })));
  }

  return {
    load,
    onEvent(ev) {
      show(ev);
      if (!search.value.trim()) model.onEvent(ev);
    },
    shown() {
      model.shown();
      liveList.shown();
    },
  };
}
