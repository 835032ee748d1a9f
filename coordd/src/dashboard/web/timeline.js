// Timeline: who sent what to whom and when, with each copy's delivery state (queued,
// delivered, read, acked, withdrawn, expired), its category and whether it needs an ack;
// a broadcast is one row with its recipients. For the whole project or one agent, thread
// or run (menus of the known ones), with "older" paging past the first page and a search
// box (`messages.search`); and the raw event stream as it arrives.

import { h, fill, clock, coalesce, perFrame, errorText } from './dom.js';
import { whereLinks } from './links.js';

const RELEVANT = /^(mail|thread|message)\./;
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

export function create(ctx, root) {
  let filter = {};
  let items = [];      // the copies shown, newest first
  let more = false;    // older copies exist
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

  let shown = 0;   // newest event in the live list
  function show(ev) {
    if (ev.event_id <= shown) return;
    shown = ev.event_id;
    events.prepend(h('li', { value: ev.event_id, dataset: { event: ev.event_id } },
      h('span', { class: 'muted' }, clock(ev.created_at)), ' ', h('code', {}, ev.event_type), ' ', ev.actor ? h('b', {}, ev.actor) : null, ' ', ev.summary));
    while (events.children.length > MAX_EVENTS) events.lastChild.remove();
  }

  function drawRows() {
    const rows = collapse(items);
    fill(list, rows.length ? rows.map(row) : h('tr', {}, h('td', { colspan: 7, class: 'muted' }, 'No messages.')));
    older.hidden = !more;
  }

  const load = coalesce(async () => {
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
      items = v.items;
      more = v.items.length === PAGE;
      drawRows();
    } catch (e) {
      error.textContent = errorText(e);
    }
  });
  const refresh = perFrame(async () => { if (!search.value.trim()) await load(); });

  async function loadOlder() {
    if (!items.length) return;
    const before = Math.min(...items.map((m) => m.event_id));
    try {
      const v = await ctx.rpc.call('view.timeline', { ...filter, limit: PAGE, before_event: before });
      items = items.concat(v.items);
      more = v.items.length === PAGE;
      drawRows();
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

  function row(m) {
    const cell = (label, attrs, ...c) => h('td', { ...attrs, dataset: { label } }, ...c);
    const to = m.copies.length > 1
      ? h('span', { class: 'recipients', title: m.copies.map((c) => c.to_agent).join(', ') }, `${m.copies.length} recipients: ${m.copies.map((c) => c.to_agent).join(', ')}`)
      : m.to_agent;
    return h('tr', { dataset: { message: m.message_id, to: m.to_agent, copies: m.copies.length } },
      cell('time', { title: m.created_at }, clock(m.created_at)), cell('from', {}, m.from_agent), cell('to', {}, to),
      cell('kind', {}, m.kind, m.category ? h('span', { class: 'pill category' }, m.category) : null,
        m.requires_ack ? h('span', { class: 'pill ack', title: 'the recipient must acknowledge it' }, 'ack required') : null,
        m.priority === 'urgent' ? h('span', { class: 'pill urgent' }, 'urgent') : null),
      cell('message', { class: 'summary' }, m.summary), cell('thread', {}, h('small', { class: 'muted id' }, whereLinks(m))),
      cell('delivery', {}, m.copies.map((c) => h('span', { class: 'copy' },
        m.copies.length > 1 ? h('small', {}, `${c.to_agent} `) : null,
        h('span', { class: `pill dl-${c.delivery}` }, c.delivery),
        h('small', { class: 'muted' }, c.delivered_at && c.delivery === 'delivered' ? ` at ${clock(c.delivered_at)}` : '')))));
  }

  return {
    load,
    onEvent(ev) {
      show(ev);
      if (RELEVANT.test(ev.event_type)) refresh();
    },
  };
}
