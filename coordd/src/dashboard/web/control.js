// Control requests (protocol §10): permission requests, plan approvals and shutdown
// requests, from `control.requests`, newest first. An open one gets Approve and Deny (with
// an optional reason); the page answers with `control.send` as the request's addressee
// (the person stands in for the lead, as with answering a question). A typed message in
// the stream, or an event on a request's thread, refreshes the list.

import { h, fill, clock, coalesce, errorText } from './dom.js';

/// request type -> { label, answer(request, approve, reason) -> [type, payload] }.
export const HANDLERS = {
  permission_request: {
    label: 'Permission',
    answer: (r, approved, reason) => ['permission_response', withReason({ request_id: r.request_id, approved }, 'reason', reason)],
  },
  plan_approval_request: {
    label: 'Plan approval',
    answer: (r, approved, reason) => ['plan_approval_response', withReason({ request_id: r.request_id, approved }, 'feedback', reason)],
  },
  shutdown_request: {
    label: 'Shutdown',
    answer: (r, approved, reason) => approved
      ? ['shutdown_approved', { request_id: r.request_id }]
      : ['shutdown_rejected', { request_id: r.request_id, reason: reason || '' }],
  },
};

function withReason(payload, field, text) {
  if (text) payload[field] = text;
  return payload;
}

/// What the request asks, in one line (the tool call of a permission request).
function detail(r) {
  const p = r.payload || {};
  if (r.type === 'permission_request' && p.tool_name) {
    return `${p.tool_name} ${JSON.stringify(p.input || {})}`;
  }
  if (r.type === 'plan_approval_request' && p.plan) return p.plan;
  return p.reason || '';
}

export function create(ctx, root) {
  let requests = [];
  const threads = new Set();
  const list = h('div', { class: 'control-list' });
  fill(root, h('h2', {}, 'Control requests'), list);

  function draw() {
    const open = requests.filter((r) => r.status === 'open').length;
    ctx.setBadge('tab-control', open);
    fill(list, requests.length ? requests.map(card) : h('p', { class: 'muted' }, 'No control requests.'));
  }

  function card(r) {
    const handler = HANDLERS[r.type];
    const status = h('small', { class: 'muted status' });
    const reason = h('input', { class: 'reason', placeholder: 'reason or feedback (optional)' });
    const act = (approve) => async () => {
      const [type, payload] = handler.answer(r, approve, reason.value.trim());
      try {
        await ctx.rpc.call('control.send', { from: r.to, type, payload });
        status.textContent = approve ? 'approved' : 'denied';
        load();
      } catch (e) {
        status.textContent = errorText(e);
      }
    };
    const response = r.response ? `${r.response.type || r.response.kind}: ${r.response.summary}` : '';
    return h('div', { class: `card control ${r.status}`, dataset: { request: r.request_id, type: r.type } },
      h('b', {}, handler ? handler.label : r.type), ' ',
      h('small', { class: 'muted' }, `${clock(r.created_at)} · ${r.from} → ${r.to}${r.task_id ? ` · ${r.run_id}/${r.task_id}` : ''}`), ' ',
      h('span', { class: 'pill' }, r.status),
      h('p', {}, r.summary), detail(r) ? h('p', { class: 'body' }, detail(r)) : null,
      handler && r.status === 'open'
        ? [reason, ' ', h('button', { class: 'approve', onclick: act(true) }, 'Approve'), ' ', h('button', { class: 'deny', onclick: act(false) }, 'Deny')]
        : null,
      response ? h('p', { class: 'muted response' }, response) : null, status);
  }

  const load = coalesce(async () => {
    const r = await ctx.rpc.call('control.requests', { include_closed: true, limit: 200 });
    requests = r.requests;
    threads.clear();
    for (const q of requests) threads.add(q.thread_id);
    draw();
  });

  return {
    load,
    onEvent(ev) {
      if ((ev.message && ev.message.type) || threads.has(ev.thread_id)) load();
    },
  };
}
