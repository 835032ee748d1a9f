// What the overseer can do about a failed or blocked task from the Runs view, through the
// orch methods every client uses (the daemon decides; a refusal shows its error code and
// message under the buttons):
// - a failed task: Retry (`orch.retry`, same worker), Reassign (`orch.retry` to the named
//   worker: a failed task has no live attempt to move) and Cancel (`orch.cancel`);
// - a blocked task: Reassign (`orch.reassign` to the named worker, its question and history
//   go with it) and Cancel. A blocked task cannot be retried (only failed or cancelled ones).

import { h, errorText } from './dom.js';

/// The buttons for `t` (a GraphTask of `runId`), or nothing for other statuses.
export function taskActions(ctx, runId, t) {
  const status = t.task.status;
  if (status !== 'failed' && status !== 'blocked') return null;
  const taskId = t.task.task_id;
  const who = h('input', { type: 'text', class: 'to', placeholder: 'worker', 'aria-label': `reassign ${taskId} to` });
  const why = h('input', { type: 'text', class: 'why', placeholder: 'reason (optional)', 'aria-label': `why cancel ${taskId}` });
  const out = h('small', { class: 'muted action-status' });
  const act = (label, call) => async (e) => {
    const buttons = e.target.closest('.actions').querySelectorAll('button');
    for (const b of buttons) b.disabled = true;
    out.textContent = `${label}…`;
    out.classList.remove('error');
    try {
      await call();
      out.textContent = `${label}: done`;
    } catch (err) {
      out.textContent = errorText(err);
      out.classList.add('error');
    } finally {
      for (const b of buttons) b.disabled = false;
    }
  };
  const base = { run_id: runId, task_id: taskId };
  const to = () => who.value.trim();
  const retry = () => ctx.rpc.call('orch.retry', base);
  const reassign = () => (status === 'failed'
    ? ctx.rpc.call('orch.retry', { ...base, to: to() || undefined })
    : ctx.rpc.call('orch.reassign', { ...base, to: to() || undefined }));
  const cancel = () => ctx.rpc.call('orch.cancel', { ...base, reason: why.value.trim() || `cancelled by ${ctx.overseer} from the dashboard` });
  return h('div', { class: 'actions', dataset: { task: taskId } },
    status === 'failed' ? h('button', { class: 'retry', onclick: act('retry', retry) }, 'Retry') : null,
    h('span', { class: 'group' }, who, h('button', { class: 'reassign', onclick: act('reassign', reassign) }, 'Reassign')),
    h('span', { class: 'group' }, why, h('button', { class: 'cancel deny', onclick: act('cancel', cancel) }, 'Cancel')),
    out);
}
