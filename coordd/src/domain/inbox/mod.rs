//! The inbox domain: threads, messages, leases, artifacts and read marks.
//!
//! - [`thread`]: loading a thread as the caller sees it, and [`thread::append`], the one
//!   way a message is added (with its event).
//! - [`lease`]: claim, renew, the holder check every worker action goes through, release.
//! - [`messages`]: what `send`, `update`, `reply`, `done`/`fail` and `cancel` append.
//! - [`read`]: the queries (`fetch`, `list`, `show`) and `markRead`.
//! - [`control`]: typed control messages (what `control.send` appends, by type role) and
//!   the requests they open and answer.

pub mod control;
pub mod lease;
pub mod messages;
pub mod read;
pub mod shutdown;
pub mod thread;

#[cfg(test)]
mod control_tests;
#[cfg(test)]
mod model_tests;
#[cfg(test)]
mod tests;
