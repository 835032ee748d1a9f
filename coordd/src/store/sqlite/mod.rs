//! The SQLite backend: one database file in WAL mode, owned by one daemon.
//!
//! - [`open`]: opening (WAL, pragmas), migrating, the read-only connection pool, and the
//!   [`Store`](crate::store::Store) implementation.
//! - [`writer`]: the single group-committing writer thread; `checkpoint`: the thread that
//!   copies the WAL into the database beside it.
//! - `read_only`: serving reads, refusing writes, when the disk is too full to open the
//!   database for writing; the next write after space returns reopens it.
//! - [`migrations`]: the append-only schema history.
//! - [`check`]: `coordd check`, verifying a database file without changing it.
//! - [`tx`]: [`tx::SqliteTx`], the repositories' implementation over one connection, with
//!   the row mapping in the per-domain files beside it.

mod agents;
pub mod check;
mod checkpoint;
mod councils;
mod events;
pub mod export;
mod launch;
mod mail;
pub mod migrations;
mod open;
mod orch;
mod queue;
mod read_only;
mod requests;
mod search;
mod threads;
pub mod tx;
mod usage;
pub mod writer;

#[cfg(test)]
pub mod testing;

pub use open::SqliteStore;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod writer_tests;
