// Review: the diff of the task picked in the Runs view (`#runs/R1/T2`), under its graph.
// Files and hunks with their old and new line numbers (`orch.diff`, against the task's base
// or the integration tip); a line's number opens a comment box (`orch.reviewComment`, as
// the overseer), and the comments show under their lines, sent or not yet. "Request
// changes" sends the unsent ones to the worker as one message with `file:line` anchors
// (`orch.reviewRequestChanges`: a done task goes back to its worker); "Approve" lets a run
// that requires approval merge it (`orch.reviewApprove`). The task's merge candidate says
// where it stands in the merge queue, and a failed verify's last lines. Lines wrap rather
// than widen the page, so it reads on a phone. Events about the task re-read it, at most
// once per frame.

import { h, fill, perFrame, errorText } from './dom.js';

/// Events that change what the panel shows of its task.
const TASK_EVENTS = new Set([
  'task.commented', 'task.approved', 'task.changes_requested', 'task.merge_queued', 'task.verifying',
  'task.verify_failed', 'task.merged', 'task.merge_conflict', 'task.done', 'task.dispatched', 'task.failed',
]);

export function create(ctx) {
  const root = h('section', { class: 'review', hidden: true });
  /// The task shown: { run, task (GraphTask) }.
  let shown = null;
  let against = 'base';
  let diff = null;
  let error = null;
  /// `path:side:line` of the comment box open, if any.
  let boxAt = null;
  const status = h('small', { class: 'muted review-status' });

  const load = perFrame(async () => {
    if (!shown) return;
    try {
      const p = { run_id: shown.run, task_id: shown.task.task.task_id, against };
      const d = await ctx.rpc.call('orch.diff', p);
      // Follow the pages of a large diff.
      while (d.truncated) {
        const next = await ctx.rpc.call('orch.diff', { ...p, after: d.next_after });
        d.files.push(...next.files);
        d.truncated = next.truncated;
        d.next_after = next.next_after;
      }
      diff = d;
      error = null;
    } catch (e) {
      diff = null;
      error = errorText(e);
    }
    draw();
  });

  function draw() {
    if (!shown) { root.hidden = true; return; }
    root.hidden = false;
    const t = shown.task;
    fill(root,
      h('div', { class: 'review-head' },
        h('h3', {}, `Review ${t.task.task_id}`),
        candidateLine(t.candidate),
        h('span', { class: 'group' },
          ['base', 'integration'].map((a) => h('button', {
            class: a === against ? 'toggle on' : 'toggle', dataset: { against: a },
            onclick: () => { against = a; load(); },
          }, a === 'base' ? 'its changes' : 'against integration')))),
      actions(),
      error ? h('p', { class: 'error' }, error) : null,
      diff ? files(diff) : (error ? null : h('p', { class: 'muted' }, 'reading the diff…')));
  }

  function actions() {
    const why = h('input', { type: 'text', class: 'summary', placeholder: 'what to change (optional)', 'aria-label': 'request changes summary' });
    const act = (label, method, params) => async (e) => {
      const buttons = e.target.closest('.review-actions').querySelectorAll('button');
      for (const b of buttons) b.disabled = true;
      status.textContent = `${label}…`;
      status.classList.remove('error');
      try {
        const r = await ctx.rpc.call(method, params());
        status.textContent = r.returned
          ? `${label}: sent back to ${r.returned.assigned_to} as attempt ${r.returned.attempt}`
          : `${label}: done${r.comments && r.comments.length ? ` (${r.comments.length} comment(s) sent)` : ''}`;
      } catch (err) {
        status.textContent = errorText(err);
        status.classList.add('error');
      } finally {
        for (const b of buttons) b.disabled = false;
      }
    };
    const base = () => ({ run_id: shown.run, task_id: shown.task.task.task_id });
    return h('div', { class: 'review-actions' },
      why,
      h('button', { class: 'request-changes deny', onclick: act('request changes', 'orch.reviewRequestChanges', () => ({ ...base(), summary: why.value.trim() || undefined })) }, 'Request changes'),
      h('button', { class: 'approve', onclick: act('approve', 'orch.reviewApprove', base) }, 'Approve'),
      status);
  }

  function files(d) {
    if (!d.files.length) return h('p', { class: 'muted' }, `No changes on ${d.branch}.`);
    return h('div', { class: 'diff', dataset: { attempt: String(d.attempt) } },
      h('p', { class: 'muted small' }, `${d.branch}, attempt ${d.attempt}: ${d.files.length} file(s)`),
      d.files.map((f) => h('div', { class: 'diff-file', dataset: { path: f.path } },
        h('div', { class: 'diff-file-head' }, h('b', {}, f.path), ' ',
          h('span', { class: `pill fs-${f.status}` }, f.status), ' ',
          h('span', { class: 'adds' }, `+${f.additions}`), ' ', h('span', { class: 'dels' }, `-${f.deletions}`),
          f.old_path ? h('small', { class: 'muted' }, ` from ${f.old_path}`) : null),
        f.binary ? h('p', { class: 'muted' }, 'binary file') : null,
        f.hunks.map((hk) => h('div', { class: 'hunk' },
          h('div', { class: 'hunk-head' }, hk.header),
          hk.lines.map((l) => line(d, f, l)))),
        f.truncated ? h('p', { class: 'muted' }, 'cut here: the rest is in `orch diff`') : null)));
  }

  function line(d, f, l) {
    const side = l.origin === '-' ? 'old' : 'new';
    const n = side === 'old' ? l.old_line : l.new_line;
    const at = `${f.path}:${side}:${n}`;
    const notes = d.comments.filter((c) => c.path === f.path && c.side === side && c.line === n);
    const kind = l.origin === '+' ? 'add' : l.origin === '-' ? 'del' : 'ctx';
    return [
      h('div', { class: `diff-line ${kind}`, dataset: { path: f.path, side, line: String(n), new: String(l.new_line ?? ''), old: String(l.old_line ?? '') } },
        h('button', { class: 'ln', title: `comment on ${f.path}:${n}`, 'aria-label': `comment on ${f.path} line ${n}`, onclick: () => { boxAt = boxAt === at ? null : at; draw(); } },
          `${l.old_line ?? ''}`, h('span', {}, `${l.new_line ?? ''}`)),
        h('code', {}, `${l.origin}${l.text}`)),
      notes.map((c) => h('div', { class: `comment${c.sent_in ? ' sent' : ''}`, dataset: { comment: c.comment_id } },
        h('b', {}, c.author), ' ', h('small', { class: 'muted' }, c.sent_in ? 'sent' : 'not sent yet'), h('p', {}, c.body))),
      boxAt === at ? commentBox(d, f, side, n) : null,
    ];
  }

  function commentBox(d, f, side, n) {
    const box = h('textarea', { rows: 2, class: 'comment-body', placeholder: `Comment on ${f.path}:${n} as ${ctx.overseer}…`, 'aria-label': `comment on ${f.path}:${n}` });
    const out = h('small', { class: 'muted' });
    const send = async () => {
      const body = box.value.trim();
      if (!body) return;
      out.textContent = 'saving…';
      try {
        await ctx.rpc.call('orch.reviewComment', { run_id: d.run_id, task_id: d.task_id, attempt: d.attempt, path: f.path, line: n, side, body });
        boxAt = null;
        load();
      } catch (e) {
        out.textContent = errorText(e);
      }
    };
    box.addEventListener('keydown', (e) => { if (e.key === 'Enter' && !e.shiftKey) { e.preventDefault(); send(); } });
    queueMicrotask(() => box.focus());
    return h('div', { class: 'comment-box' }, box, h('button', { onclick: send }, 'Comment'), out);
  }

  return {
    root,
    /// Show the review of `task` (a GraphTask of `runId`), or nothing for a task without a
    /// branch to diff (not dispatched, or a thread task).
    show(runId, task) {
      const has = task && task.task.kind === 'code' && task.task.attempt > 0;
      const same = shown && has && shown.run === runId && shown.task.task.task_id === task.task.task_id;
      shown = has ? { run: runId, task } : null;
      if (!has) { diff = null; draw(); return; }
      if (same) { draw(); return; }
      diff = null;
      boxAt = null;
      status.textContent = '';
      draw();
      load();
    },
    onEvent(ev) {
      if (shown && ev.run_id === shown.run && ev.task_id === shown.task.task.task_id && TASK_EVENTS.has(ev.event_type)) load();
    },
  };
}

/// Where the task's merge stands, in a line.
function candidateLine(c) {
  if (!c) return null;
  const where = c.position ? ` #${c.position}` : '';
  const why = c.reason ? `: ${c.reason}` : '';
  return h('div', { class: `candidate qs-${c.state}`, dataset: { state: c.state } },
    h('span', { class: `pill qs-${c.state}` }, `${c.state.replace('_', ' ')}${where}`),
    h('small', {}, ` attempt ${c.attempt}${c.verify ? ` · verify: ${c.verify}` : ''}${why}`),
    c.state === 'failed' && c.output ? h('pre', { class: 'log-tail' }, c.output) : null);
}
