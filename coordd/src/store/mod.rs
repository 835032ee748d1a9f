//! Storage: the seam every domain rule is written against, and the backends behind it.
//!
//! - [`repos`]: the per-domain repository traits (threads, leases, messages, events, mail,
//!   agents, reservations, peers, runs, tasks, attempts, councils, …) and the transaction
//!   interface [`repos::Tx`] that hands them out one at a time; [`records`]: the records
//!   they exchange. No SQL crosses it.
//! - [`rows`]: the column lists and row mappings both backends share; [`within`]: list
//!   reads that stop at the reply's byte budget, over either backend's row stream.
//! - [`backend`]: [`backend::Store`], what a backend provides around transactions: a
//!   group-committed write path, consistent reads, facts about itself, shutdown.
//! - [`queue`]: the bounded queue of write jobs in front of each backend's writer thread.
//! - [`group_commit`]: the one group-commit engine both writers run their batches through,
//!   over a small connection trait (begin, savepoint, rollback-to, commit).
//! - [`sqlite`]: the embedded default, one SQLite file in WAL mode.
//! - [`postgres`]: several daemons (one per host) on one PostgreSQL database.

pub mod assemble;
pub mod backend;
pub mod copy;
pub mod group_commit;
#[cfg(test)]
mod group_commit_tests;
pub mod merge_rows;
pub mod migrate;
pub mod postgres;
pub mod queue;
pub mod records;
pub mod repos;
pub mod rows;
pub mod select;
pub mod sqlite;
pub mod within;

pub use backend::{Store, StoreInfo};
pub use repos::Tx;
