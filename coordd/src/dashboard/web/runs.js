// Runs: the run list, the selected run's task graph (status by colour, worker and attempt),
// blocked tasks with their whole question and an answer box (the overseer answers, as
// themselves, what is addressed to the lead), failed tasks with their reason, and council
// progress, and the worker sessions a launcher (`coord-launch`) started for the run's attempts
// (client, worker, pid, running time or how it ended, the log's last lines), redrawn on
// `launch.started` and `launch.exited`; a running session's last lines follow its
// `launch.tail` events in place (the event carries the session: nothing is read again). A task's status change is applied to the model in place: the node, the
// counters, the run's state and the side panel are redrawn from it at once. Failed and
// blocked tasks carry Retry, Reassign and Cancel (`actions.js`); every task links to its
// thread's conversation, and `#runs/RUN/TASK` selects a run and its task. The run's state
// counts the open control requests of its tasks (`control.requests`). A picked code task's
// diff shows under the graph, to comment on, approve or send back (`review.js`). While the view is
// hidden an event that would change it only marks it, and the runs and the selected run are
// read again when it shows.

import { h, fill, clock, since, coalesce, perFrame, errorText } from './dom.js';
import { draw, sub } from './graph.js';
import { taskActions } from './actions.js';
import { place, threadLink, taskHref } from './links.js';
import * as review from './review.js';

/// Task events whose only effect on the graph is a node's status.
const STATUS_ONLY = new Set(['task.ready', 'task.in_progress', 'task.done', 'task.cancelled']);

export function create(ctx, root) {
  let runs = [];
  let selected = null;
  let graph = null;
  let picked = null;
  /// run_id -> its open control requests (permission, plan, shutdown).
  let requests = new Map();
  /// An event came that the view did not apply while hidden: read again when it shows.
  let stale = false;
  const list = h('ul', { class: 'runs' });
  const head = h('div', { class: 'run-head' });
  const canvas = h('div', { class: 'canvas' });
  const side = h('aside', { class: 'side' });
  /// The picked task's diff and review, under the graph (`review.js`).
  const reviewer = review.create(ctx);
  fill(root, h('div', { class: 'runs-layout' }, h('nav', { class: 'run-list' }, h('h2', {}, 'Runs'), list), h('div', { class: 'run-main' }, head, canvas, reviewer.root), side));

  const loadRuns = coalesce(async () => {
    const [r, open] = await Promise.all([ctx.rpc.call('orch.runList'), ctx.rpc.call('control.requests', {})]);
    runs = r.runs;
    requests = new Map();
    for (const q of open.requests) if (q.run_id) requests.set(q.run_id, (requests.get(q.run_id) || 0) + 1);
    if (!selected || !runs.some((r) => r.run_id === selected)) {
      const active = runs.filter((r) => r.status === 'active');
      const next = (active[active.length - 1] || runs[runs.length - 1] || {}).run_id || null;
      if (next !== selected) { selected = next; picked = null; }
    }
    // The head's run state counts the open requests too.
    if (graph && graph.run.run_id === selected) drawHead(); else drawList();
  });

  const loadRun = coalesce(async () => {
    if (!selected) { graph = null; drawRun(); return; }
    graph = await ctx.rpc.call('view.run', { run_id: selected });
    drawRun();
  });
  const refreshRun = perFrame(loadRun);
  const refreshRuns = perFrame(loadRuns);

  function drawList() {
    fill(list, runs.length ? runs.map((r) => h('li', {
      class: r.run_id === selected ? 'selected' : '', dataset: { run: r.run_id },
      onclick: () => { selected = r.run_id; picked = null; drawList(); loadRun(); },
    }, runPill(r, graph && graph.run.run_id === r.run_id ? graph.tasks : null, requests.get(r.run_id)), ' ', h('b', {}, r.run_id), ' ', r.goal)) : h('li', { class: 'muted' }, 'No runs yet.'));
  }

  function drawRun() {
    if (!graph) {
      fill(head, h('p', { class: 'muted' }, 'Create a run with `orch run create`.'));
      fill(canvas); fill(side);
      return;
    }
    drawHead();
    fill(canvas, graph.tasks.length ? draw(graph.tasks, (id) => { picked = id; drawSide(); }) : h('p', { class: 'muted' }, 'No tasks.'));
    drawSide();
  }

  /// The run's title, its state and the count of tasks in each status.
  function drawHead() {
    const counts = {};
    for (const t of graph.tasks) counts[t.task.status] = (counts[t.task.status] || 0) + 1;
    fill(head, h('h2', {}, `${graph.run.run_id}: ${graph.run.goal}`),
      h('div', { class: 'counts' }, runPill(graph.run, graph.tasks, requests.get(graph.run.run_id)),
        Object.entries(counts).map(([k, n]) => h('span', { class: `pill st-${k}`, dataset: { count: k } }, `${k} ${n}`))));
    drawList();
  }

  function drawSide() {
    const blocked = graph.tasks.filter((t) => t.task.status === 'blocked');
    const failed = graph.tasks.filter((t) => t.task.status === 'failed');
    const task = picked && graph.tasks.find((t) => t.task.task_id === picked);
    reviewer.show(graph.run.run_id, task || null);
    fill(side,
      task ? detail(task) : null,
      h('h3', {}, `Blocked (${blocked.length})`),
      blocked.length ? blocked.map(blockedCard) : h('p', { class: 'muted' }, 'Nothing is blocked.'),
      h('h3', {}, `Failed (${failed.length})`),
      failed.length ? failed.map((t) => h('div', { class: 'card failed', dataset: { task: t.task.task_id } },
        taskTitle(t),
        h('p', { class: 'reason' }, t.failure ? (t.failure.summary + (t.failure.body ? `\n${t.failure.body}` : '')) : 'no reason recorded'),
        h('small', { class: 'muted' }, `attempt ${t.task.attempt} of ${t.task.max_attempts} · ${t.worker || ''}`),
        t.task.attempt < t.task.max_attempts ? h('small', { class: 'retries' }, ' · will be retried') : null,
        taskActions(ctx, graph.run.run_id, t))) : h('p', { class: 'muted' }, 'Nothing failed.'),
      h('h3', {}, `Councils (${graph.councils.length})`),
      graph.councils.map(councilCard),
      usagePart(graph.usage),
      h('h3', {}, `Sessions (${(graph.sessions || []).length})`),
      (graph.sessions || []).length ? [...graph.sessions].reverse().map(sessionCard) : h('p', { class: 'muted' }, 'No sessions launched (coord-launch starts them).'));
  }

  function detail(t) {
    return h('div', { class: 'card detail' },
      h('b', {}, `${t.task.task_id} · ${t.task.title}`),
      h('dl', {},
        h('dt', {}, 'status'), h('dd', {}, t.task.status),
        h('dt', {}, 'worker'), h('dd', {}, t.worker || '—'),
        h('dt', {}, 'assign to'), h('dd', {}, t.task.assign_to || '—'),
        h('dt', {}, 'attempt'), h('dd', {}, `${t.task.attempt} of ${t.task.max_attempts}`),
        h('dt', {}, 'depends on'), h('dd', {}, t.task.depends_on.join(', ') || '—'),
        h('dt', {}, 'thread'), h('dd', {}, threadLink(t.thread_id) || '—'),
        h('dt', {}, 'usage'), h('dd', {}, usageOf(graph.usage, 'tasks', t.task.task_id))),
      t.task.body ? h('p', { class: 'body' }, t.task.body) : null,
      taskActions(ctx, graph.run.run_id, t));
  }

  // Tokens and cost (view.run's `usage`, launch.usage): the run against its budget, then
  // per task and agent.
  function amount(u) {
    const tokens = u.input_tokens + u.output_tokens + u.cache_read_tokens + u.cache_write_tokens;
    return `$${u.cost_usd.toFixed(2)} · ${tokens} tokens (in ${u.input_tokens}, out ${u.output_tokens}, cache ${u.cache_read_tokens}/${u.cache_write_tokens})`;
  }

  function usageOf(usage, list, key) {
    const row = usage && (usage[list] || []).find((r) => r.key === key);
    return row ? amount(row.usage) : '—';
  }

  function usagePart(usage) {
    if (!usage || (!usage.tasks.length && !usage.budget.max_cost_usd && !usage.budget.max_tokens)) return null;
    const b = usage.budget;
    const limits = [b.max_cost_usd != null ? `$${b.max_cost_usd.toFixed(2)}` : null, b.max_tokens != null ? `${b.max_tokens} tokens` : null].filter(Boolean);
    return h('div', { class: 'card usage' + (usage.over_budget ? ' failed' : '') },
      h('b', {}, `Usage: ${amount(usage.usage)}`),
      limits.length ? h('p', {}, `budget ${limits.join(', ')}${usage.over_budget ? ' — reached: nothing more is started' : ''}`) : null,
      [...usage.tasks.map((r) => ['task', r]), ...usage.agents.map((r) => ['agent', r])].map(([what, r]) =>
        h('small', { class: 'muted', style: 'display:block' }, `${what} ${r.key}: ${amount(r.usage)}`)));
  }

  function blockedCard(t) {
    const box = h('textarea', { rows: 2, placeholder: `Answer as ${ctx.overseer}…`, 'aria-label': `answer ${t.task.task_id}` });
    const status = h('small', { class: 'muted' });
    const send = async () => {
      const text = box.value.trim();
      if (!text) return;
      status.textContent = 'sending…';
      try {
        await ctx.rpc.call('orch.answer', { run_id: graph.run.run_id, task_id: t.task.task_id, from: ctx.overseer, summary: firstLine(text), body: text });
        box.value = '';
        status.textContent = 'answered';
      } catch (e) {
        status.textContent = errorText(e);
      }
    };
    box.addEventListener('keydown', (e) => { if (e.key === 'Enter' && !e.shiftKey) { e.preventDefault(); send(); } });
    const q = t.question;
    return h('div', { class: 'card blocked', dataset: { task: t.task.task_id } },
      taskTitle(t), h('small', { class: 'muted' }, ` ${t.worker || ''} ${q ? clock(q.created_at) : ''}`),
      h('p', { class: 'question' }, q ? q.summary + (q.body ? `\n${q.body}` : '') : 'blocked (no question recorded)'),
      q ? payloadOf(q) : null,
      q && q.artifacts && q.artifacts.length ? h('ul', { class: 'artifacts' }, q.artifacts.map((a) => h('li', {}, h('code', {}, a.path), ` ${a.kind}`))) : null,
      box, h('button', { onclick: send }, 'Answer'), status,
      taskActions(ctx, graph.run.run_id, t));
  }

  /// A card's title: the task (its link selects it here) and its thread's conversation.
  function taskTitle(t) {
    return h('div', { class: 'task-title' },
      h('a', { href: taskHref(graph.run.run_id, t.task.task_id), class: 'task-link' }, h('b', {}, `${t.task.task_id} · ${t.task.title}`)),
      t.thread_id ? [' ', threadLink(t.thread_id, 'thread')] : null);
  }

  function councilCard(c) {
    const brainstormed = c.members.filter((m) => m.brainstorm_done).length;
    const voted = c.members.filter((m) => m.vote_done).length;
    return h('div', { class: 'card council', dataset: { council: c.council_id } },
      h('b', {}, `${c.council_id} · ${c.topic}`), ' ', h('span', { class: `pill ph-${c.phase}` }, c.phase),
      h('div', {}, `brainstorm ${brainstormed}/${c.members.length} · votes ${voted}/${c.members.length}`),
      c.groups.length ? h('ul', {}, c.groups.map((g) => h('li', {}, `${g.title}: ${g.verdict} (${g.approve}✓ ${g.reject}✗ ${g.abstain}–)`))) : null);
  }

  /// Apply a task's new status to the model and redraw what shows it: its node, the
  /// counters, the run's state and the side panel (a task that left `blocked` loses its
  /// card and answer box at once).
  function patchTask(ev) {
    if (!graph) return;
    const t = graph.tasks.find((x) => x.task.task_id === ev.task_id);
    if (!t) return;
    if (t.task.status === ev.task_status) return;
    t.task.status = ev.task_status;
    if (ev.task_status !== 'blocked') t.question = null;
    const g = canvas.querySelector(`g.node[data-task="${CSS.escape(ev.task_id)}"]`);
    if (g) {
      g.setAttribute('class', `node st-${ev.task_status}`);
      const subText = g.querySelector('text.sub');
      if (subText) subText.textContent = sub(t);
    }
    drawHead();
    drawSide();
  }

  /// A `launch.tail` event's session replaces the one shown, and the side panel is redrawn;
  /// `false` when the view does not hold it (then the run is read again).
  function patchSession(ev) {
    const s = ev.payload_json && ev.payload_json.session;
    const list = graph && graph.sessions;
    const i = s && list ? list.findIndex((x) => x.session_id === s.session_id) : -1;
    if (i < 0) return false;
    list[i] = s;
    drawSide();
    return true;
  }

  /// `#runs/RUN/TASK`: select the run and pick the task.
  function onRoute() {
    const [tab, run, task] = place();
    if (tab !== 'runs' || !run) return;
    const other = run !== selected;
    selected = run;
    picked = task || null;
    if (other) { drawList(); loadRun(); } else if (graph) drawSide();
  }
  window.addEventListener('hashchange', onRoute);

  return {
    async load() {
      onRoute();
      await loadRuns();
      await loadRun();
    },
    selected: () => selected,
    onEvent(ev) {
      if (root.hidden) {
        stale = stale || ev.event_type.startsWith('run.') || Boolean(ev.message && ev.message.type) || Boolean(selected && ev.run_id === selected);
        return;
      }
      if (ev.event_type.startsWith('run.') || (ev.message && ev.message.type)) {
        refreshRuns().then(() => { if (selected && (!graph || graph.run.run_id !== selected)) refreshRun(); });
      }
      if (!selected || ev.run_id !== selected) return;
      reviewer.onEvent(ev);
      if (ev.task_status && ev.task_id) patchTask(ev);
      if (ev.event_type === 'launch.tail' && patchSession(ev)) return;
      const orch = /^(task|run|council|launch)\./.test(ev.event_type);
      if (orch && !STATUS_ONLY.has(ev.event_type)) refreshRun();
    },
    shown() {
      if (!stale) return;
      stale = false;
      refreshRuns().then(() => refreshRun());
    },
  };
}

/// A launched session, newest first in the side panel: its task and attempt (links to the
/// task and its thread), state, client, mode (`live` or `one_shot`),
/// worker and pid, how long it has run or how it ended, and its log's last lines (while it
/// runs, the last its launcher reported; the log's path until it reports any).
function sessionCard(s) {
  const ended = s.exit_code != null ? `exit ${s.exit_code}` : s.signal != null ? `signal ${s.signal}` : s.state;
  return h('div', { class: `card session ss-${s.state}`, dataset: { session: s.session_id, task: s.task_id, state: s.state } },
    h('a', { href: taskHref(s.run_id, s.task_id), class: 'task-link' }, h('b', {}, `${s.task_id} · attempt ${s.attempt}`)), ' ',
    h('span', { class: `pill ss-${s.state}` }, s.state), ' ', threadLink(s.thread_id, 'thread'),
    h('div', { class: 'muted' }, `${s.client} · ${s.mode || 'one_shot'} · @${s.agent} · pid ${s.pid}`),
    h('div', { class: 'how' }, s.state === 'running' ? h('span', {}, 'running for ', since(s.started_at)) : `${ended}${s.reason ? ` · ${s.reason}` : ''}`),
    s.log_tail ? h('pre', { class: 'log-tail' }, s.log_tail) : h('small', { class: 'muted log' }, s.log_path));
}

/// A run's state for a lead: `needs-attention` while a task is blocked or failed with
/// attempts left (it will be retried), or a request of the run waits for an answer
/// (permission, plan approval, shutdown), distinct from `failed` (nothing more will happen).
export function runState(run, tasks, openRequests = 0) {
  if (run.status !== 'active' && run.status !== 'failed') return run.status;
  if (openRequests > 0) return 'needs-attention';
  if (tasks && tasks.some((t) => t.task.status === 'blocked' || (t.task.status === 'failed' && t.task.attempt < t.task.max_attempts))) {
    return 'needs-attention';
  }
  return run.status;
}

function runPill(run, tasks, openRequests = 0) {
  const state = runState(run, tasks, openRequests);
  const title = openRequests ? `${openRequests} open request${openRequests > 1 ? 's' : ''}` : null;
  return h('span', { class: `pill st-${state} run-state`, dataset: { state, requests: String(openRequests || 0) }, title }, state.replace('-', ' '));
}

/// A question's structured payload (options, context), beyond its summary and body.
function payloadOf(q) {
  const p = q.payload_json;
  if (!p || typeof p !== 'object' || !Object.keys(p).length) return null;
  return h('pre', { class: 'payload' }, JSON.stringify(p, null, 2));
}

export function firstLine(text) {
  const line = text.split('\n')[0];
  return line.length > 200 ? line.slice(0, 199) + '…' : line;
}
