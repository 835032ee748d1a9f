//! coordd: the per-project coordination daemon. It owns the project's store (SQLite, or a
//! PostgreSQL database shared by one daemon per host) and serves the JSON-RPC protocol of
//! `coord-proto` over a local socket. See `docs/ARCHITECTURE.md`.
//!
//! From the outside in: [`daemon`] runs the process (lock, socket, signals); [`net`] holds
//! the connections (the transport speaking newline-delimited JSON-RPC on one connection,
//! each connection's outbox and the daemon-wide output budget, the caller of a call, the
//! activity counters); [`api`] handles each namespace of the protocol; [`ops`] composes the
//! domains for operations that span several; [`domain`] holds every rule, written once
//! against the repository traits of [`store`], which `store::sqlite` and `store::postgres`
//! implement. [`services`] are the async steps around git and the background duties;
//! [`workspace`] writes worktrees and session files. [`core`] ties the store, the [`time`]
//! clock and the [`bus`] together for the handlers ([`weight`] estimates an event's size
//! for the bus and the rules alike); [`progress`] is the lossy in-memory
//! feed of progress lines from tool subprocesses. [`private`] keeps the project's local
//! files readable by their owner only. [`dashboard`] serves the same method table over a
//! WebSocket to the web dashboard, with its embedded page. [`cli`] is the `coordd`
//! binary's own part: its commands besides the daemon and the registry of running daemons.

pub mod api;
pub mod bound;
pub mod bus;
pub mod cli;
pub mod core;
pub mod daemon;
pub mod dashboard;
pub mod domain;
pub mod error;
pub mod host;
pub mod ids;
pub mod lockfile;
pub mod net;
pub mod ops;
pub mod private;
pub mod progress;
pub mod services;
pub mod store;
pub mod time;
pub mod weight;
#[cfg(windows)]
pub mod windows;
pub mod workspace;
