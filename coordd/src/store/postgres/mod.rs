//! The PostgreSQL backend: several `coordd` instances (one per host) on one database.
//! Every domain rule runs on it unchanged; what differs is how transactions, event ids and
//! the event bus work across instances (`docs/scaling.md` has the design and its proof).
//!
//! - [`open`]: connecting, migrating, the read pool, and the [`Store`](crate::store::Store)
//!   implementation [`PgStore`].
//! - [`writer`]: the group-committing writer of this instance; its transactions take one
//!   database-wide write lock (writers of all instances run one at a time, as SQLite's one
//!   writer does) and take event ids from a locked counter row (ids commit in order).
//! - [`notify`]: after those commits, one small `NOTIFY` with the newest id, outside every
//!   write transaction and shared by batches that commit faster than it is sent.
//! - [`follow`]: publishing on this instance's bus in id order, each event once, whoever
//!   committed it; the dedicated listening connection, the poll when it is down, and the
//!   duties lock (background duties run on one instance).
//! - [`catchup`]: what a publisher reads of other instances' commits, in one statement.
//! - [`listen`]: the follower's listening and duties connections, woken by the server
//!   alone (no timer).
//! - [`migrations`]: the schema, mirroring SQLite's.
//! - [`tx`]: [`tx::PgTx`], the repositories over one connection, with the SQL in the
//!   per-domain files beside it (`threads`, `events`, `mail`, `agents`, `orch`,
//!   `councils`, `requests`, `search`), as in `store/sqlite/`.
//! - [`client`]: a connection used synchronously, with statements sent pipelined.
//! - [`conn`]: one connection with its statement cache; names derived from the schema.
//! - [`deferred`]: the inserts of a send (event, thread, message, mail) and the batch's
//!   `last_seen_at` updates, held back while a batch runs and sent as one statement.
//! - [`cache`]: what the writer's transaction has read of settings and agents, kept for
//!   the rest of it.

mod agents;
pub mod cache;
pub mod catchup;
mod client;
pub mod conn;
mod councils;
pub mod deferred;
mod events;
pub mod follow;
pub mod import;
mod launch;
pub mod listen;
mod mail;
pub mod migrations;
pub mod notify;
mod open;
mod orch;
mod queue;
mod requests;
mod search;
mod threads;
pub mod tx;
mod usage;
pub mod writer;

pub use open::{PgStore, redact};
