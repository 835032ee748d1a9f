//! Storage: the seam every domain rule is written against, and the backends behind it.
//!
//! - [`repos`]: the per-domain repository traits (threads, leases, messages, events, mail,
//!   agents, reservations, peers, runs, tasks, attempts, councils), combined into one
//!   transaction interface [`repos::Tx`], and the records they exchange. No SQL crosses it.
//! - [`backend`]: [`backend::Store`], what a backend provides around transactions: a
//!   group-committed write path, consistent reads, facts about itself, shutdown.
//! - [`queue`]: the bounded queue of write jobs in front of each backend's writer thread.
//! - [`group_commit`]: the one group-commit engine both writers run their batches through,
//!   over a small connection trait (begin, savepoint, rollback-to, commit).
//! - [`sqlite`]: the embedded default, one SQLite file in WAL mode.
//! - [`postgres`]: several daemons (one per host) on one PostgreSQL database.

pub mod backend;
pub mod copy;
pub mod group_commit;
#[cfg(test)]
mod group_commit_tests;
pub mod migrate;
pub mod postgres;
pub mod queue;
pub mod repos;
pub mod select;
pub mod sqlite;

pub use backend::{Store, StoreInfo};
pub use repos::Tx;
