//! coordd: the per-project coordination daemon. It owns the project's store (SQLite by
//! default, or PostgreSQL) and serves the JSON-RPC protocol of `coord-proto` over a local
//! socket, and over a WebSocket to the web dashboard. See `docs/ARCHITECTURE.md`.
//!
//! From the outside in: [`daemon`] runs the process (lock, socket, signals); the transport
//! speaks newline-delimited JSON-RPC on one connection, with each connection's output
//! queued within its budget and all of them kept within the daemon's; [`api`] handles each
//! namespace of the protocol; [`ops`] composes the domains for operations that span
//! several; [`domain`] holds every rule, written once against the repository traits of
//! [`store`], which `store::sqlite` and `store::postgres` implement. [`services`] are the
//! async steps around git and the background duties; [`workspace`] writes worktrees and
//! session files. [`core`] ties the store, the [`time`] clock and the [`bus`] together for
//! the handlers; [`progress`] is the lossy in-memory feed of progress lines from tool
//! subprocesses. [`private`] keeps the project's local files readable by their owner only;
//! [`dashboard`] serves the same method table over a WebSocket, with its embedded page. The
//! binary's own pieces (`coordd status`, `stop`, `list` and the registry of running daemons)
//! sit beside them.

pub mod activity;
pub mod api;
pub mod bound;
pub mod bus;
pub mod caller;
pub mod control;
pub mod core;
pub mod daemon;
pub mod dashboard;
pub mod domain;
pub mod error;
pub mod host;
pub mod ids;
pub mod lockfile;
pub mod ops;
pub mod outbox;
pub mod private;
pub mod progress;
pub mod registry;
pub mod services;
pub mod shed;
pub mod store;
pub mod time;
pub mod transport;
#[cfg(windows)]
pub mod windows;
pub mod workspace;
