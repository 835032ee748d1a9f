//! The coordd wire contract: the single source of truth for method names, parameters,
//! results, events, error codes and the protocol version.
//!
//! The daemon implements the generated `…ApiServer` traits of [`api`], one per namespace;
//! clients call the generated `…ApiClient` traits. Nothing here touches storage or knows how the daemon works:
//! it only describes what travels over the socket. `docs/protocol.md` documents the same
//! contract for tools written in other languages.

#![deny(missing_docs)]

pub mod api;
pub mod authority;
pub mod error;
mod exit;
pub mod openrpc;
pub mod types;

pub use error::{AppError, ErrorCode};
pub use exit::{Exit, LaunchExit};

/// Version of the wire protocol. Bumped on any incompatible change to a method, its params,
/// its result, an event or an error code. Clients refuse to talk to a daemon whose
/// protocol version differs from theirs.
pub const PROTOCOL_VERSION: u32 = 1;

/// The largest request line the daemon accepts, in bytes (16 MiB). A longer line is refused
/// with [`error::REQUEST_TOO_LARGE`] and the connection keeps serving the next line.
pub const MAX_REQUEST_BYTES: usize = 16 * 1024 * 1024;
/// Most bytes (estimated JSON size) of events `events.list` puts in one reply; a single
/// event larger than this is returned alone.
pub const MAX_REPLY_BYTES: usize = 16 * 1024 * 1024;

/// Default lease duration when a claim does not name one (15 minutes).
pub const DEFAULT_LEASE_SECONDS: u64 = 900;

/// Longest lease a claim or renew may ask for (7 days).
pub const MAX_LEASE_SECONDS: u64 = 7 * 24 * 3600;

/// Number of rows returned by list-like methods when `limit` is not given.
pub const DEFAULT_LIMIT: u32 = 50;
/// Largest `limit` accepted by list-like methods.
pub const MAX_LIMIT: u32 = 10_000;

/// Name of the database file inside the project's `.agents/` folder.
pub const DB_FILE: &str = "coord.db";
/// Name of the socket file, created beside the database.
pub const SOCKET_FILE: &str = "coordd.sock";
