//! The `coordd` binary's own pieces, beside the daemon: one file per command the binary
//! runs besides `serve`'s daemon itself ([`serve`] sets up its process), the client side
//! of `status` and `stop` ([`control`], a raw JSON-RPC line on the socket), and the
//! per-user [`registry`] of running daemons behind `coordd list` (the daemon records
//! itself there). `main.rs` parses the command line and calls one of these. Being the
//! binary's, they report errors with `anyhow`.

pub mod check;
pub mod control;
pub mod list;
pub mod migrate;
pub mod registry;
pub mod serve;
pub mod status;
pub mod stop;

use anyhow::Context;

/// A single-threaded runtime for the commands that talk to a daemon.
pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread().enable_all().build().context("cannot start the async runtime")
}
