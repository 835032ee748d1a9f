//! Operations that span domains, composed in one visible place. Domains never call each
//! other; an operation here calls them in order inside one transaction:
//!
//! - [`messages`]: every message-writing call = inbox (the message and its event) + mail
//!   (one copy per recipient; an unknown recipient recorded as an agent) + orch reconcile
//!   (the thread's task, run or council follows it). Also opening a thread for orch.
//! - [`orch`]: dispatch's record, answer, cancel and council start, which open, answer or
//!   cancel inbox threads through [`messages`].
//! - [`returns`]: a done task sent back to its worker (the merge queue, a review): the
//!   candidate's outcome, then the new attempt through [`orch`] (or the task's failure).
//! - [`agents`]: mail and reservation calls that strict mode limits to registered agents.
//! - [`status`]: the `inbox.status` summary, which reads reservations and mail.
//! - [`control`]: typed control messages, whose recipient may come from the run or the
//!   permission policy, and whose requests are recorded beside the message.
//! - [`launch`]: a launched session's end, failing its attempt's thread when still open.
//! - [`usage`]: a launched session's usage and a run's or session's budget, which only the
//!   run's owner may report or change.
//! - [`settings`]: `inbox.init`, the project's settings and roles, checked against the
//!   roles in force.
//! - [`shutdown`]: a shutdown request's run, task and expiry; what approving one stops,
//!   and the lead's idle notification.
//! - [`view`]: the `view.*` read models (agents, a run's graph, the mail timeline), each
//!   joining several domains in one read.
//!
//! Each function takes the open transaction and `now`.

pub mod agents;
pub mod control;
pub mod launch;
pub mod messages;
pub mod orch;
pub mod returns;
pub mod settings;
pub mod shutdown;
pub mod status;
pub mod usage;
pub mod view;

#[cfg(test)]
mod tests;
