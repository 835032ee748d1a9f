// The Agents view's model kept live by events: what an event carries is applied to the
// `view.agents` rows in place (a send's copies raise the recipients' unread counts, a
// delivery lowers them, a reported status, a held thread's new status or lease); what it
// cannot carry (a new lease's subject, which agent runs a task, open requests, failed tasks) makes the
// view read itself again, at most once per animation frame (`live` in dom.js).

/// Thread statuses an agent holds (`view.agents` lists them).
const HELD = new Set(['claimed', 'in_progress', 'blocked']);

/// Apply `ev` to `agents` (the `view.agents` rows) in place; false when the event does not
/// carry what they need, so they must be read again.
export function applyToAgents(agents, ev) {
  const byId = (id) => agents.find((a) => a.agent.agent_id === id);
  const p = ev.payload_json || {};
  // A typed message opens or answers a request: the open requests are read again.
  if (ev.message && ev.message.type) return false;
  // An agent's failed tasks (`failed_tasks`) are not in any event: a task thread that
  // fails, or any change to a task listed as failed (a retry, a reassign), reads them again.
  if (ev.task_id && (ev.thread_status === 'failed' || ev.task_status === 'failed')) return false;
  if (ev.task_id && agents.some((a) => (a.failed_tasks || []).some((f) => f.task_id === ev.task_id && f.run_id === ev.run_id))) return false;
  if (ev.message) return applySend(agents, byId, ev) && applyThread(agents, ev);
  switch (ev.event_type) {
    case 'mail.delivered': {
      const a = byId(ev.actor);
      if (!a) return false;
      a.pending = Math.max(0, a.pending - (p.message_ids || []).length);
      if (a.pending === 0) a.urgent = 0;
      // Whether the delivered copies were urgent is not in the event.
      return a.urgent === 0;
    }
    case 'mail.read':
    case 'mail.acked': {
      // A copy read before its delivery leaves the mailbox; which one it was is not said.
      const a = byId(p.recipient);
      return Boolean(a) && a.pending === 0;
    }
    case 'agent.status': {
      const a = byId(p.agent_id);
      if (!a) return false;
      a.agent = { ...a.agent, status: p.status };
      return true;
    }
    case 'agent.registered': {
      const a = byId(p.agent_id);
      if (!a) return false;
      a.agent = { ...a.agent, ...p };
      return true;
    }
    case 'lease.renewed': {
      const t = heldThread(agents, ev.thread_id);
      if (!t || !t.lease) return false;
      t.lease = { ...t.lease, expires_at: p.expires_at, generation: p.generation, active: true };
      return true;
    }
    case 'mail.withdrawn':
    case 'lease.expired':
    case 'thread.claimed':
      return false;
    default:
      return applyThread(agents, ev);
  }
}

/// A send's copies: each recipient's unread count goes up by one.
function applySend(agents, byId, ev) {
  if (!ev.mail || !byId(ev.actor)) return false;   // no copies named (a message that gave none), or a sender seen first
  const recipients = ev.mail.recipients.map(byId);
  // Mail to a task is in the mailbox of whoever runs it; a new recipient is a new row.
  if (recipients.some((a) => !a)) return false;
  for (const a of recipients) {
    a.pending += 1;
    if (ev.mail.priority === 'urgent') a.urgent += 1;
  }
  return true;
}

function heldThread(agents, threadId) {
  for (const a of agents) {
    const t = a.threads.find((x) => x.thread_id === threadId);
    if (t) return t;
  }
  return null;
}

/// A thread's new status: a held thread's status changes, or it leaves its holder.
function applyThread(agents, ev) {
  const st = ev.thread_status;
  if (!st) return true;
  // Cancelling a request's thread withdraws the request.
  if (st === 'cancelled') return false;
  const holder = agents.find((a) => a.threads.some((t) => t.thread_id === ev.thread_id));
  if (!holder) return !HELD.has(st);   // newly held: its lease and subject are read again
  const t = holder.threads.find((x) => x.thread_id === ev.thread_id);
  if (HELD.has(st) && holder.agent.agent_id === ev.assigned_to) {
    t.status = st;
    return true;
  }
  holder.threads = holder.threads.filter((x) => x !== t);
  if (!holder.threads.length) holder.activity = 'idle';
  return !HELD.has(st);
}
