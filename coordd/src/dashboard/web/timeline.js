// Timeline: who sent what to whom and when, with each copy's delivery state (queued,
// delivered, read, acked, withdrawn, expired), for the whole project or one agent, thread
// or run; and the raw event stream as it arrives.

import { h, fill, clock, coalesce, errorText } from './dom.js';

const RELEVANT = /^(mail|thread|message)\./;
const MAX_EVENTS = 200;
/// Events shown from before the page opened.
const BACKLOG = 50;

export function create(ctx, root) {
  let filter = {};
  const by = h('select', {}, ['all', 'agent', 'thread_id', 'run_id'].map((k) => h('option', { value: k }, k === 'all' ? 'whole project' : k.replace('_id', ''))));
  const value = h('input', { type: 'text', placeholder: 'name or id', class: 'filter-value' });
  const error = h('small', { class: 'muted' });
  const apply = () => {
    filter = by.value === 'all' || !value.value.trim() ? {} : { [by.value]: value.value.trim() };
    load();
  };
  by.addEventListener('change', apply);
  value.addEventListener('keydown', (e) => { if (e.key === 'Enter') apply(); });
  const list = h('tbody');
  const events = h('ol', { class: 'events', reversed: true });
  fill(root, h('h2', {}, 'Timeline'), h('div', { class: 'toolbar' }, 'Show ', by, ' ', value, ' ', h('button', { onclick: apply }, 'Apply'), ' ', error),
    h('table', { class: 'timeline' }, h('thead', {}, h('tr', {}, ['time', 'from', 'to', 'kind', 'message', 'thread', 'delivery'].map((c) => h('th', {}, c)))), list),
    h('h3', {}, 'Live events'), events);

  let shown = 0;   // newest event in the live list
  function show(ev) {
    if (ev.event_id <= shown) return;
    shown = ev.event_id;
    events.prepend(h('li', { value: ev.event_id, dataset: { event: ev.event_id } },
      h('span', { class: 'muted' }, clock(ev.created_at)), ' ', h('code', {}, ev.event_type), ' ', ev.actor ? h('b', {}, ev.actor) : null, ' ', ev.summary));
    while (events.children.length > MAX_EVENTS) events.lastChild.remove();
  }

  const load = coalesce(async () => {
    const backlog = shown === 0 && ctx.cursor() > 0
      ? ctx.rpc.call('events.list', { after_event: Math.max(0, ctx.cursor() - BACKLOG), limit: BACKLOG })
      : null;
    const view = ctx.rpc.call('view.timeline', { ...filter, limit: 200 });
    if (backlog) {
      const r = await backlog;
      for (const ev of r.events) if (ev.event_id <= ctx.cursor()) show(ev);
    }
    try {
      const v = await view;
      error.textContent = '';
      fill(list, v.items.length ? v.items.map(row) : h('tr', {}, h('td', { colspan: 7, class: 'muted' }, 'No messages.')));
    } catch (e) {
      error.textContent = errorText(e);
    }
  });

  function row(m) {
    const when = m.delivered_at && m.delivery === 'delivered' ? ` at ${clock(m.delivered_at)}` : '';
    return h('tr', { dataset: { message: m.message_id, to: m.to_agent } },
      h('td', { title: m.created_at }, clock(m.created_at)), h('td', {}, m.from_agent), h('td', {}, m.to_agent),
      h('td', {}, m.kind, m.priority === 'urgent' ? h('span', { class: 'pill urgent' }, 'urgent') : null),
      h('td', { class: 'summary' }, m.summary), h('td', {}, h('small', { class: 'muted' }, m.task_id ? `${m.run_id}/${m.task_id}` : m.thread_id)),
      h('td', {}, h('span', { class: `pill dl-${m.delivery}` }, m.delivery), h('small', { class: 'muted' }, when)));
  }

  return {
    load,
    onEvent(ev) {
      show(ev);
      if (RELEVANT.test(ev.event_type)) load();
    },
  };
}
