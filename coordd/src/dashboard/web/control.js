// Control requests: messages of kind `control` in the stream, newest first. A request type
// listed in HANDLERS gets approve and deny buttons; the others are shown as they are.
//
// Typed control requests (permission, plan approval, shutdown) are being added to the
// protocol separately. Wiring one is one entry in HANDLERS: how to recognise it in a
// message's payload, and which call answers it.

import { h, fill, clock, coalesce, errorText } from './dom.js';

/// payload type -> { label, approve(ctx, msg, ev), deny(ctx, msg, ev) }.
export const HANDLERS = {};

/// The type of a control message, from its payload.
function typeOf(msg) {
  const p = msg && msg.payload_json;
  return (p && (p.type || p.control)) || 'control';
}

export function create(ctx, root) {
  const items = new Map();   // message_id -> {ev, msg, answered}
  const list = h('div', { class: 'control-list' });
  fill(root, h('h2', {}, 'Control requests'), list);

  function draw() {
    const all = [...items.values()].sort((a, b) => b.ev.event_id - a.ev.event_id);
    const open = all.filter((x) => HANDLERS[typeOf(x.msg)] && !x.answered).length;
    ctx.setBadge('tab-control', open);
    fill(list, all.length ? all.map(card) : h('p', { class: 'muted' }, 'No control messages.'));
  }

  function card(x) {
    const type = typeOf(x.msg);
    const handler = HANDLERS[type];
    const status = h('small', { class: 'muted' });
    const act = (verb) => async () => {
      try {
        await handler[verb](ctx, x.msg, x.ev);
        x.answered = verb;
        draw();
      } catch (e) {
        status.textContent = errorText(e);
      }
    };
    return h('div', { class: 'card control', dataset: { message: x.msg.message_id, type } },
      h('b', {}, handler ? handler.label : type), ' ', h('small', { class: 'muted' }, `${clock(x.ev.created_at)} · ${x.msg.from_agent} → ${x.msg.to_agent || ''}`),
      h('p', {}, x.msg.summary), x.msg.body ? h('p', { class: 'body' }, x.msg.body) : null,
      handler && !x.answered ? [h('button', { onclick: act('approve') }, 'Approve'), ' ', h('button', { class: 'deny', onclick: act('deny') }, 'Deny')] : null,
      x.answered ? h('span', { class: 'pill' }, x.answered) : null, status);
  }

  function add(ev) {
    if (!ev.message || ev.message.kind !== 'control') return false;
    items.set(ev.message.message_id, items.get(ev.message.message_id) || { ev, msg: ev.message, answered: null });
    return true;
  }

  const load = coalesce(async () => {
    const r = await ctx.rpc.call('events.list', { kinds: ['control'], limit: 500 });
    for (const ev of r.events) add(ev);
    draw();
  });

  return {
    load,
    onEvent(ev) {
      if (add(ev)) draw();
    },
  };
}
