// Links between a task and its thread, the same everywhere: `#threads/ID` opens the
// thread's conversation (the Threads view), `#runs/RUN/TASK` selects the run and its task
// in the Runs view. `place()` reads the hash back.

import { h } from './dom.js';

/// The location of a thread's conversation.
export function threadHref(threadId) {
  return `#threads/${encodeURIComponent(threadId)}`;
}

/// The location of a task in the Runs view.
export function taskHref(runId, taskId) {
  return `#runs/${encodeURIComponent(runId)}/${encodeURIComponent(taskId)}`;
}

/// A link to a thread's conversation (nothing without a thread).
export function threadLink(threadId, text = threadId) {
  if (!threadId) return null;
  return h('a', { href: threadHref(threadId), class: 'thread-link', dataset: { thread: threadId } }, text);
}

/// A link to a task in its run ("R1/T2"); a task without a run is plain text (no graph
/// shows it), and nothing without a task.
export function taskLink(runId, taskId, text = runId ? `${runId}/${taskId}` : taskId) {
  if (!taskId) return null;
  if (!runId) return h('span', { class: 'task-ref' }, text);
  return h('a', { href: taskHref(runId, taskId), class: 'task-link', dataset: { run: runId, task: taskId } }, text);
}

/// The view and its arguments in the location: `#runs/R1/T2` -> ['runs', 'R1', 'T2'].
export function place() {
  const [tab, ...args] = (location.hash || '#runs').slice(1).split('/');
  return [tab, ...args.map((a) => { try { return decodeURIComponent(a); } catch { return a; } })];
}

/// Where a message or thread belongs, as links: "R1/T2" (to the task) and "thread" (to the
/// conversation); a task without a run, or no task, is the thread's link under the task's
/// or the thread's name.
export function whereLinks(m) {
  if (m.task_id && m.run_id) return [taskLink(m.run_id, m.task_id), ' ', threadLink(m.thread_id, 'thread')];
  return threadLink(m.thread_id, m.task_id || m.thread_id) || '';
}
