//! coordd: the per-project coordination daemon. It owns the project's SQLite database and
//! serves the JSON-RPC protocol of `coord-proto` over a local socket.
//!
//! Layout: [`daemon`] runs the process (lock, socket, signals); [`transport`] speaks
//! newline-delimited JSON-RPC on one connection; [`rpc`] registers every method; [`store`]
//! is the storage seam with [`sqlite`] behind it; [`db`] is the SQLite plumbing (writer,
//! readers, migrations, bus); [`inbox`], [`orch`], [`agents`], [`mail`], [`reservations`],
//! [`status`] and [`events`] are the domain modules.

pub mod agents;
pub mod daemon;
pub mod db;
pub mod error;
pub mod events;
pub mod inbox;
pub mod lockfile;
pub mod mail;
pub mod orch;
pub mod reservations;
pub mod rpc;
pub mod sessions;
pub mod sqlite;
pub mod status;
pub mod store;
pub mod transport;
pub mod util;
