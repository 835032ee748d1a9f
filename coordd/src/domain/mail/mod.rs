//! Mail: every message's per-recipient copy and its state, built on the inbox's threads
//! and messages rather than a second message store.
//!
//! - [`copies`]: the copies themselves: addressing a send, one copy per recipient,
//!   read/ack (unread, then read, then acked), listing, and each copy's delivery state.
//! - [`delivery`]: the session mailbox: delivering queued copies into a running session,
//!   counting them, reminding once, withdrawal.
//! - [`peers`]: linked peer tasks, which `send` can address.

pub mod copies;
pub mod delivery;
pub mod peers;

#[cfg(test)]
mod tests;
