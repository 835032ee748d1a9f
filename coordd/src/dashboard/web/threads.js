// Threads: the project's threads, most recently active first, and the conversation of the
// one picked (`#threads/ID`, the link every other view uses for a thread): every message
// in order, who sent it to whom, its kind, type, category and ack request, its summary and
// body, its whole structured payload (a question's options, a permission request's tool
// call) and its artifacts with their metadata. The thread's task links back to its run. An
// event on the open thread reloads its conversation; a thread event reloads the list (each
// at most once per animation frame). While the view is hidden nothing is read: an event
// that would reload the list or the conversation marks it, and it is read when the view
// shows. Reading here marks nothing read: the overseer only looks.

import { h, fill, clock, since, coalesce, perFrame, timed, errorText } from './dom.js';
import { place, threadHref, taskLink } from './links.js';

/// Threads listed at most (`inbox.list`'s limit).
const LIST_LIMIT = 200;

export function create(ctx, root) {
  let threads = [];
  let selected = null;
  let shown = null;
  /// What events changed while the view was hidden: read again when it shows.
  let stale = { list: false, thread: false };
  const filter = h('input', { type: 'text', class: 'search', placeholder: 'filter: subject, agent, R1/T2…', 'aria-label': 'filter threads' });
  const list = h('ul', { class: 'thread-list' });
  const convo = h('div', { class: 'conversation' });
  fill(root, h('div', { class: 'threads-layout' },
    h('nav', { class: 'thread-nav' }, h('h2', {}, 'Threads'), filter, list),
    convo));
  filter.addEventListener('input', () => drawList());

  const loadList = coalesce(async () => {
    threads = (await ctx.rpc.call('inbox.list', { limit: LIST_LIMIT })).threads;
    timed('threads', drawList)();
  });
  const loadThread = coalesce(async () => {
    if (!selected) { shown = null; drawThread(); return; }
    try {
      shown = await ctx.rpc.call('inbox.show', { thread_id: selected });
    } catch (e) {
      shown = { error: errorText(e) };
    }
    drawThread();
  });
  const refreshList = perFrame(loadList);
  const refreshThread = perFrame(loadThread);

  function drawList() {
    const q = filter.value.trim().toLowerCase();
    const match = (t) => !q || [t.thread_id, t.subject, t.created_by, t.assigned_to, t.run_id ? `${t.run_id}/${t.task_id}` : t.task_id]
      .some((x) => (x || '').toLowerCase().includes(q));
    const rows = threads.filter(match);
    fill(list, rows.length ? rows.map((t) => h('li', { class: t.thread_id === selected ? 'selected' : '', dataset: { thread: t.thread_id } },
      h('a', { href: threadHref(t.thread_id) }, h('span', { class: `pill st-${t.status}` }, t.status), ' ', t.subject || t.thread_id),
      h('div', { class: 'muted small' }, `${t.created_by} → ${t.assigned_to || '—'} · `, since(t.updated_at),
        t.task_id ? [' · ', taskLink(t.run_id, t.task_id)] : null)))
      : h('li', { class: 'muted' }, threads.length ? 'No thread matches.' : 'No threads yet.'));
  }

  function drawThread() {
    if (!selected) { fill(convo, h('p', { class: 'muted' }, 'Pick a thread to read its conversation.')); return; }
    if (!shown) { fill(convo, h('p', { class: 'muted' }, 'loading…')); return; }
    if (shown.error) { fill(convo, h('p', { class: 'error' }, shown.error)); return; }
    const t = shown.thread;
    fill(convo,
      h('div', { class: 'thread-head', dataset: { thread: t.thread_id } },
        h('h2', {}, t.subject || t.thread_id),
        h('div', {}, h('span', { class: `pill st-${t.status}` }, t.status), ' ', h('span', { class: 'pill' }, t.priority), ' ',
          h('small', { class: 'muted' }, `${t.created_by} → ${t.assigned_to || '—'} · ${t.thread_id}`),
          t.task_id ? [' · task ', taskLink(t.run_id, t.task_id)] : null)),
      h('ol', { class: 'messages' }, shown.messages.map(message)),
      shown.messages.length ? null : h('p', { class: 'muted' }, 'No messages.'));
  }

  function onRoute() {
    const [tab, id] = place();
    if (tab !== 'threads') return;
    const next = id || null;
    if (next === selected) return;
    selected = next;
    shown = null;
    drawList();
    drawThread();
    loadThread();
  }
  window.addEventListener('hashchange', onRoute);

  return {
    async load() {
      onRoute();
      await Promise.all([loadList(), loadThread()]);
    },
    onEvent(ev) {
      if (!ev.thread_id) return;
      const list = /^(thread|message|lease)\./.test(ev.event_type) || Boolean(ev.message);
      const thread = ev.thread_id === selected;
      if (root.hidden) {
        stale = { list: stale.list || list, thread: stale.thread || thread };
        return;
      }
      if (list) refreshList();
      if (thread) refreshThread();
    },
    shown() {
      if (stale.list) refreshList();
      if (stale.thread) refreshThread();
      stale = { list: false, thread: false };
    },
  };
}

/// One message of the conversation, whole.
function message(m) {
  const payload = m.payload_json && typeof m.payload_json === 'object' && Object.keys(m.payload_json).length ? m.payload_json : null;
  return h('li', { class: `msg k-${m.kind}`, dataset: { message: m.message_id, kind: m.kind } },
    h('div', { class: 'msg-head' },
      h('b', {}, m.from_agent), ` → ${m.to_agent || '—'} `, h('span', { class: `pill kind k-${m.kind}` }, m.kind),
      m.type ? h('span', { class: 'pill type' }, m.type) : null,
      m.category ? h('span', { class: 'pill category' }, m.category) : null,
      m.requires_ack ? h('span', { class: 'pill ack' }, 'ack required') : null,
      ' ', h('small', { class: 'muted', title: m.created_at }, clock(m.created_at))),
    h('p', { class: 'summary' }, m.summary),
    m.body ? h('p', { class: 'body' }, m.body) : null,
    payload ? h('pre', { class: 'payload' }, JSON.stringify(payload, null, 2)) : null,
    m.artifacts && m.artifacts.length ? h('ul', { class: 'artifacts' }, m.artifacts.map(artifact)) : null);
}

function artifact(a) {
  const meta = a.metadata_json && typeof a.metadata_json === 'object' && Object.keys(a.metadata_json).length ? a.metadata_json : null;
  return h('li', { dataset: { artifact: a.artifact_id } }, h('code', { class: 'path' }, a.path), ' ', h('span', { class: 'pill' }, a.kind),
    meta ? h('pre', { class: 'payload' }, JSON.stringify(meta, null, 2)) : null);
}
