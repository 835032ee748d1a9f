// Reservations: the active ones, their history, and who holds a given path. A reservation
// event reads them again (once per animation frame); while the view is hidden it only marks
// them, and they are read when the view shows.

import { h, fill, clock, since, coalesce, perFrame, errorText } from './dom.js';

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
  const head = (last) => h('thead', {}, h('tr', {}, ['scope', 'agent', 'task', 'kind', 'state', 'since', last].map((c) => h('th', {}, c))));
  fill(root, h('h2', {}, 'Reservations'),
    h('div', { class: 'toolbar' }, 'Who holds ', path, ' ', h('button', { onclick: ask }, 'Ask')), holders,
    h('h3', {}, 'Active'), h('table', { class: 'cards' }, head('expires'), active),
    h('h3', {}, 'History'), h('table', { class: 'cards history' }, head('released'), history));

  // The last column: when an active one expires; when a past one was released (or, for
  // one that ran out, expired).
  const row = (r) => {
    const cell = (label, attrs, ...c) => h('td', { ...attrs, dataset: { label } }, ...c);
    const ended = r.state === 'active' ? r.expires_at : (r.released_at || r.expires_at);
    const last = r.state === 'active' ? 'expires' : (r.released_at ? 'released' : 'expired');
    return h('tr', { dataset: { reservation: r.reservation_id } },
      cell('scope', {}, h('code', {}, r.scope)), cell('agent', {}, r.agent_id), cell('task', {}, r.task_id), cell('kind', {}, r.shared ? 'shared' : 'exclusive'),
      cell('state', {}, h('span', { class: `pill rs-${r.stale ? 'stale' : r.state}` }, r.stale ? 'stale' : r.state)),
      cell('since', {}, since(r.created_at)), cell(last, { class: 'ended', title: ended }, clock(ended)));
  };

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

  const refresh = perFrame(load);
  let stale = false;

  return {
    load,
    onEvent(ev) {
      if (!ev.event_type.startsWith('reservation.')) return;
      if (root.hidden) stale = true; else refresh();
    },
    shown() {
      if (stale) refresh();
      stale = false;
    },
  };
}
