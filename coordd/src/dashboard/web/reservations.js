// Reservations: the active ones, their history, and who holds a given path.

import { h, fill, clock, since, coalesce, errorText } from './dom.js';

export function create(ctx, root) {
  const active = h('tbody');
  const history = h('tbody');
  const path = h('input', { type: 'text', placeholder: 'src/lib.rs', class: 'path' });
  const holders = h('div', { class: 'holders' });
  const ask = async () => {
    const p = path.value.trim();
    if (!p) { fill(holders); return; }
    try {
      const r = await ctx.rpc.call('reservations.list', { path: p });
      fill(holders, r.reservations.length ? r.reservations.map((x) => h('div', {}, h('b', {}, x.agent_id), ` holds ${x.scope}${x.shared ? ' (shared)' : ''} until ${clock(x.expires_at)}`))
        : h('p', { class: 'muted' }, `Nobody holds ${p}.`));
    } catch (e) {
      fill(holders, errorText(e));
    }
  };
  path.addEventListener('keydown', (e) => { if (e.key === 'Enter') ask(); });
  const head = () => h('thead', {}, h('tr', {}, ['scope', 'agent', 'task', 'kind', 'state', 'since', 'expires'].map((c) => h('th', {}, c))));
  fill(root, h('h2', {}, 'Reservations'),
    h('div', { class: 'toolbar' }, 'Who holds ', path, ' ', h('button', { onclick: ask }, 'Ask')), holders,
    h('h3', {}, 'Active'), h('table', {}, head(), active),
    h('h3', {}, 'History'), h('table', {}, head(), history));

  const row = (r) => h('tr', { dataset: { reservation: r.reservation_id } },
    h('td', {}, h('code', {}, r.scope)), h('td', {}, r.agent_id), h('td', {}, r.task_id), h('td', {}, r.shared ? 'shared' : 'exclusive'),
    h('td', {}, h('span', { class: `pill rs-${r.stale ? 'stale' : r.state}` }, r.stale ? 'stale' : r.state)),
    h('td', {}, since(r.created_at)), h('td', { title: r.expires_at }, clock(r.released_at || r.expires_at)));

  const load = coalesce(async () => {
    const [a, all] = await Promise.all([
      ctx.rpc.call('reservations.list', {}),
      ctx.rpc.call('reservations.list', { include_history: true, limit: 200 }),
    ]);
    fill(active, a.reservations.length ? a.reservations.map(row) : h('tr', {}, h('td', { colspan: 7, class: 'muted' }, 'None.')));
    const past = all.reservations.filter((r) => r.state !== 'active');
    fill(history, past.length ? past.map(row) : h('tr', {}, h('td', { colspan: 7, class: 'muted' }, 'None.')));
    if (path.value.trim()) await ask();
  });

  return {
    load,
    onEvent(ev) {
      if (ev.event_type.startsWith('reservation.')) load();
    },
  };
}
