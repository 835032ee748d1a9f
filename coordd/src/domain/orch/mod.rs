//! The orch domain: runs, the task graph, attempts and council reviews, kept beside the
//! inbox's threads in the same store. orch never talks to workers: a dispatch *is* an inbox
//! thread, whose ordinary inbox changes drive the task (reconcile).
//!
//! - [`model`]: loading and saving runs and tasks, their events, and the run's status.
//! - [`plan`]: runs, tasks, dependencies (cycles refused), the ready queue, cancel.
//! - [`attempts`]: what dispatch, retry and reassign record, `answer`'s target, `blocked`.
//! - [`reconcile`]: a thread's change → its attempt, task and run.
//! - [`merge`]: stacked tasks: the integration branch, merges and their conflicts.
//! - [`edit`]: editing, assigning and removing tasks.
//! - [`council`]: the two-phase, three-reviewer council review.
//! - [`queue`]: the merge queue: a candidate per done attempt, its review, its place and
//!   its verification; [`returns`]: failures back to the worker; [`review`]: comments,
//!   approval, requested changes.

pub mod attempts;
pub mod council;
pub mod edit;
pub mod merge;
pub mod model;
pub mod plan;
pub mod queue;
pub mod reconcile;
pub mod returns;
pub mod review;

#[cfg(test)]
mod tests;
