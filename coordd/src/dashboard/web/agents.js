// Agents: each agent's activity (busy, idle, stale), its current threads and lease age,
// last seen, its unread badge (queued mail in its session mailbox, live), and a "send to
// session" box: Enter queues a message from the overseer, delivered at the session's next
// hook (`inbox check`); "urgent" raises its priority.

import { h, fill, since, coalesce, errorText } from './dom.js';
import { firstLine } from './runs.js';

/// Events that can change an agent's row: mail, threads and leases, the registry.
const RELEVANT = /^(mail|thread|message|lease|agent)\./;

export function create(ctx, root) {
  let view = { agents: [] };
  const rows = new Map();   // agent_id -> row element
  const body = h('tbody');
  fill(root, h('h2', {}, 'Agents'), h('table', { class: 'agents' },
    h('thead', {}, h('tr', {}, ['agent', 'state', 'current thread', 'lease age', 'last seen', 'unread', 'send to session'].map((c) => h('th', {}, c)))),
    body));

  const load = coalesce(async () => {
    view = await ctx.rpc.call('view.agents', {});
    draw();
  });

  function draw() {
    const seen = new Set();
    let total = 0;
    for (const a of view.agents) {
      if (a.agent.agent_id === ctx.overseer) continue;
      seen.add(a.agent.agent_id);
      total += a.pending;
      let row = rows.get(a.agent.agent_id);
      if (!row) {
        row = makeRow(a.agent.agent_id);
        rows.set(a.agent.agent_id, row);
      }
      update(row, a);
      body.append(row);   // keeps the order of the view (sorted by id)
    }
    for (const [id, row] of rows) if (!seen.has(id)) { row.remove(); rows.delete(id); }
    if (!view.agents.length) fill(body, h('tr', {}, h('td', { colspan: 7, class: 'muted' }, 'No agents yet.')));
    ctx.setBadge('tab-pending', total);
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
    const cells = {
      name: h('td', { class: 'name' }), state: h('td'), thread: h('td'), lease: h('td'), seen: h('td'),
      badge: h('td', {}, h('span', { class: 'badge unread' })),
      send: h('td', { class: 'send-cell' }, input, h('label', {}, urgent, ' urgent'), status),
    };
    const row = h('tr', { dataset: { agent: id } }, Object.values(cells));
    row.cells_ = cells;
    return row;
  }

  function update(row, a) {
    const c = row.cells_;
    fill(c.name, h('b', {}, a.agent.agent_id), a.agent.role ? h('small', { class: 'muted' }, ` ${a.agent.role}`) : null);
    fill(c.state, h('span', { class: `pill act-${a.activity}` }, a.activity));
    const t = a.threads[0];
    fill(c.thread, t ? [h('span', { class: `pill st-${t.status}` }, t.status), ' ', t.subject,
      h('small', { class: 'muted' }, ` ${t.task_id ? `${t.run_id}/${t.task_id}` : t.thread_id}`),
      a.threads.length > 1 ? h('small', { class: 'muted' }, ` +${a.threads.length - 1} more`) : null] : h('span', { class: 'muted' }, '—'));
    fill(c.lease, t && t.lease ? since(t.lease.claimed_at) : '—');
    fill(c.seen, a.agent.last_seen_at ? since(a.agent.last_seen_at) : h('span', { class: 'muted' }, 'never'));
    const badge = c.badge.firstChild;
    badge.textContent = String(a.pending);
    badge.dataset.count = String(a.pending);
    badge.classList.toggle('zero', a.pending === 0);
    badge.classList.toggle('urgent', a.urgent > 0);
    badge.title = `${a.pending} queued${a.urgent ? `, ${a.urgent} urgent` : ''}`;
  }

  return {
    load,
    onEvent(ev) {
      if (RELEVANT.test(ev.event_type)) load();
    },
  };
}
