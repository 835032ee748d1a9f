// Agents, by who needs attention: blocked, an open request, failed, busy, idle, offline.
// Each row: the derived state and the agent's own reported status, its current threads,
// the time left on its lease, last seen, its open requests, its unread badge (queued mail
// in its session mailbox, live), and a "send to session" box: Enter queues a message from
// the overseer, delivered at the session's next hook (`inbox check`); "urgent" raises its
// priority. An agent whose task failed (and stands failed: `failed_tasks`) is "failed",
// with links to those tasks. A thread links to its conversation, a task to its run.
// While the view is hidden its model stays live, but only the tab's badge and the drawn
// rows' unread badges are kept current; the rest is drawn when the view shows.

import { h, fill, since, until, live, timed, errorText } from './dom.js';
import { firstLine } from './runs.js';
import { taskLink, threadLink } from './links.js';
import { applyToAgents } from './agents_live.js';

/// Attention order: a lower rank comes first.
const RANK = { blocked: 0, request: 1, failed: 2, busy: 3, idle: 4, offline: 5 };

/// What an agent needs from the lead, from its view row and its open requests.
export function attention(a, requests) {
  if (a.threads.some((t) => t.status === 'blocked')) return 'blocked';
  if (requests > 0) return 'request';
  if ((a.failed_tasks || []).length) return 'failed';
  if (a.agent.status === 'offline' || a.activity === 'stale') return 'offline';
  if (a.activity === 'busy') return 'busy';
  return 'idle';
}

const COLUMNS = ['agent', 'needs', 'reported', 'current thread', 'lease left', 'last seen', 'requests', 'unread', 'send to session'];

export function create(ctx, root) {
  let view = { agents: [] };
  let openBy = new Map();   // agent -> open requests it sent
  const rows = new Map();   // agent_id -> row element
  const body = h('tbody');
  fill(root, h('h2', {}, 'Agents'), h('table', { class: 'agents cards' },
    h('thead', {}, h('tr', {}, COLUMNS.map((c) => h('th', {}, c)))),
    body));

  // Events change the model in place (agents_live.js); what they cannot carry is read
  // again, at most once per animation frame.
  const model = live({
    async fetch() {
      const [v, r] = await Promise.all([
        ctx.rpc.call('view.agents', {}),
        ctx.rpc.call('control.requests', {}),
      ]);
      view = v;
      openBy = new Map();
      for (const q of r.requests) openBy.set(q.from, (openBy.get(q.from) || 0) + 1);
      return v.last_event_id;
    },
    apply: (ev) => applyToAgents(view.agents, ev),
    draw: timed('agents', draw),
    visible: () => !root.hidden,
    glance: timed('agents-hidden', glance),
  });
  const load = () => model.load();

  /// The agents shown, each with what it needs, in attention order; the tab's badge counts
  /// those that need the lead.
  function ranked() {
    const list = view.agents
      .filter((a) => a.agent.agent_id !== ctx.overseer)
      .map((a) => ({ a, need: attention(a, openBy.get(a.agent.agent_id) || 0) }))
      .sort((x, y) => RANK[x.need] - RANK[y.need] || x.a.agent.agent_id.localeCompare(y.a.agent.agent_id));
    ctx.setBadge('tab-attention', list.filter((x) => RANK[x.need] <= RANK.failed).length);
    return list;
  }

  /// While the view is hidden: only the tab's badge and the unread badges of the rows
  /// already drawn; the rest is drawn when the view shows.
  function glance() {
    for (const { a } of ranked()) {
      const row = rows.get(a.agent.agent_id);
      if (row) unread(row.cells_.badge.firstChild, a);
    }
  }

  function draw() {
    const seen = new Set();
    const list = ranked();
    for (const { a, need } of list) {
      const id = a.agent.agent_id;
      seen.add(id);
      let row = rows.get(id);
      if (!row) {
        row = makeRow(id);
        rows.set(id, row);
      }
      update(row, a, need);
      body.append(row);   // in attention order
    }
    for (const [id, row] of rows) if (!seen.has(id)) { row.remove(); rows.delete(id); }
    if (!list.length) fill(body, h('tr', {}, h('td', { colspan: COLUMNS.length, class: 'muted' }, 'No agents yet.')));
  }

  /// An agent's unread badge: its queued mail (written only where it changed).
  function unread(badge, a) {
    const count = String(a.pending);
    const title = `${a.pending} queued${a.urgent ? `, ${a.urgent} urgent` : ''}`;
    if (badge.dataset.count === count && badge.title === title) return;
    badge.textContent = count;
    badge.dataset.count = count;
    badge.classList.toggle('zero', a.pending === 0);
    badge.classList.toggle('urgent', a.urgent > 0);
    badge.title = title;
  }

  function makeRow(id) {
    const input = h('input', { class: 'send', type: 'text', placeholder: `message to ${id}…`, 'aria-label': `send to ${id}` });
    const urgent = h('input', { type: 'checkbox', class: 'urgent' });
    const status = h('small', { class: 'send-status muted' });
    input.addEventListener('keydown', async (e) => {
      if (e.key !== 'Enter' || !input.value.trim()) return;
      e.preventDefault();
      const text = input.value.trim();
      input.disabled = true;
      try {
        const params = { from: ctx.overseer, to: id, summary: firstLine(text), body: text, priority: urgent.checked ? 'urgent' : 'normal' };
        await ctx.rpc.call('inbox.send', params);
        input.value = '';
        urgent.checked = false;
        status.textContent = 'queued';
      } catch (err) {
        status.textContent = errorText(err);
      } finally {
        input.disabled = false;
        input.focus();
      }
    });
    const cell = (label, attrs = {}, ...children) => h('td', { ...attrs, dataset: { label } }, ...children);
    const cells = {
      name: cell('agent', { class: 'name' }), need: cell('needs'), reported: cell('reported'), thread: cell('current thread'),
      lease: cell('lease left'), seen: cell('last seen'), requests: cell('requests'),
      badge: cell('unread', {}, h('span', { class: 'badge unread' })),
      send: cell('send', { class: 'send-cell' }, input, h('label', {}, urgent, ' urgent'), status),
    };
    const row = h('tr', { dataset: { agent: id } }, Object.values(cells));
    row.cells_ = cells;
    return row;
  }

  function update(row, a, need) {
    const c = row.cells_;
    row.dataset.need = need;
    fill(c.name, h('b', {}, a.agent.agent_id), a.agent.role ? h('small', { class: 'muted' }, ` ${a.agent.role}`) : null,
      a.agent.registered === false ? h('small', { class: 'muted' }, ' unregistered') : null);
    const failed = a.failed_tasks || [];
    fill(c.need, h('span', { class: `pill need-${need}` }, need === 'request' ? 'open request' : need),
      failed.length ? h('div', { class: 'failed-tasks' }, failed.map((f, i) => [i ? ', ' : '', taskLink(f.run_id, f.task_id), ' ', threadLink(f.thread_id, 'thread')])) : null);
    fill(c.reported, h('span', { class: 'reported' }, a.agent.status || '—'));
    const t = a.threads[0];
    fill(c.thread, t ? [h('span', { class: `pill st-${t.status}` }, t.status), ' ', threadLink(t.thread_id, t.subject || t.thread_id),
      t.task_id ? h('small', { class: 'muted id' }, ' ', taskLink(t.run_id, t.task_id)) : null,
      a.threads.length > 1 ? h('small', { class: 'muted' }, ` +${a.threads.length - 1} more`) : null] : h('span', { class: 'muted' }, '—'));
    fill(c.lease, t && t.lease ? until(t.lease.expires_at) : '—');
    fill(c.seen, a.agent.last_seen_at ? since(a.agent.last_seen_at) : h('span', { class: 'muted' }, 'never'));
    const open = openBy.get(a.agent.agent_id) || 0;
    fill(c.requests, open ? h('a', { href: '#control', class: 'requests' }, String(open)) : h('span', { class: 'muted' }, '0'));
    unread(c.badge.firstChild, a);
  }

  return {
    load,
    onEvent: model.onEvent,
    shown: model.shown,
  };
}
