// Control requests (protocol §3.59): permission requests, plan approvals and shutdown
// requests, from `control.requests`, newest first. The overseer answers, always as
// themselves, what is addressed to the lead or to them: such an open request gets Approve
// and Deny (with an optional reason) and, when a gated call waits on it, its countdown to
// the policy's timeout. A request addressed to anyone else (a shutdown request to a
// worker) is theirs to answer and shows no buttons. An answered card keeps who answered
// and their reason. A typed message in the stream, or an event on a request's thread,
// refreshes the list (once per animation frame); while the view is hidden only the tab's
// badge (open requests) is updated, and the cards are drawn when it shows. A card links to
// its task (in its run) and to the thread the request was sent in.

import { h, fill, clock, coalesce, perFrame, until, whenShown, errorText } from './dom.js';
import { taskLink, threadLink } from './links.js';

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

/// The reason or feedback an answer carries.
function answerReason(m) {
  const p = (m && m.payload_json) || {};
  return p.reason || p.feedback || '';
}

export function create(ctx, root) {
  let requests = [];
  /// Who leads: the policy's lead and every run's creator. The overseer answers for them.
  let leads = new Set();
  let timeout = 0;
  const threads = new Set();
  const list = h('div', { class: 'control-list' });
  fill(root, h('h2', {}, 'Control requests'), list);

  const badge = () => ctx.setBadge('tab-control', requests.filter((r) => r.status === 'open').length);
  const view = whenShown({
    visible: () => !root.hidden,
    draw() {
      badge();
      fill(list, requests.length ? requests.map(card) : h('p', { class: 'muted' }, 'No control requests.'));
    },
    glance: badge,
  });

  function card(r) {
    const handler = HANDLERS[r.type];
    const mine = r.to === ctx.overseer || leads.has(r.to);
    const status = h('small', { class: 'muted status' });
    const reason = h('input', { class: 'reason', placeholder: 'reason or feedback (optional)' });
    const act = (approve) => async () => {
      const [type, payload] = handler.answer(r, approve, reason.value.trim());
      try {
        await ctx.rpc.call('control.send', { from: ctx.overseer, type, payload });
        status.textContent = approve ? 'approved' : 'denied';
        refresh();
      } catch (e) {
        status.textContent = errorText(e);
      }
    };
    const response = r.response
      ? [h('b', { class: 'answerer' }, r.response.from_agent), ` · ${r.response.type || r.response.kind}: ${r.response.summary}`,
        answerReason(r.response) ? h('span', { class: 'answer-reason' }, ` — “${answerReason(r.response)}”`) : null]
      : null;
    const gated = r.status === 'open' && r.type === 'permission_request' && timeout > 0;
    const deadline = gated ? new Date(Date.parse(r.created_at) + timeout * 1000).toISOString() : null;
    return h('div', { class: `card control ${r.status}`, dataset: { request: r.request_id, type: r.type } },
      h('b', {}, handler ? handler.label : r.type), ' ',
      h('small', { class: 'muted' }, `${clock(r.created_at)} · ${r.from} → ${r.to}`, r.task_id ? [' · ', taskLink(r.run_id, r.task_id)] : null,
        r.thread_id ? [' · ', threadLink(r.thread_id, 'thread')] : null), ' ',
      h('span', { class: 'pill' }, r.status), deadline ? [' ', h('small', { class: 'countdown' }, 'the call times out: ', until(deadline, 'timed out'))] : null,
      h('p', {}, r.summary), detail(r) ? h('p', { class: 'body' }, detail(r)) : null,
      handler && r.status === 'open' && mine
        ? [reason, ' ', h('button', { class: 'approve', onclick: act(true) }, 'Approve'), ' ', h('button', { class: 'deny', onclick: act(false) }, 'Deny')]
        : null,
      handler && r.status === 'open' && !mine ? h('p', { class: 'muted not-mine' }, `for ${r.to} to answer`) : null,
      response ? h('p', { class: 'muted response' }, response) : null, status);
  }

  const load = coalesce(async () => {
    const [r, policy, runs] = await Promise.all([
      ctx.rpc.call('control.requests', { include_closed: true, limit: 200 }),
      ctx.rpc.call('policy.get'),
      ctx.rpc.call('orch.runList'),
    ]);
    leads = new Set(runs.runs.map((x) => x.created_by));
    if (policy.policy.lead) leads.add(policy.policy.lead);
    timeout = policy.policy.timeout_seconds || 0;
    requests = r.requests;
    threads.clear();
    for (const q of requests) threads.add(q.thread_id);
    view.paint();
  });

  const refresh = perFrame(load);

  return {
    load,
    onEvent(ev) {
      if ((ev.message && ev.message.type) || threads.has(ev.thread_id) || /^(policy|run)\./.test(ev.event_type)) refresh();
    },
    shown: view.shown,
  };
}
