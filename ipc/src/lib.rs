//! coord-ipc: where a project's coordd daemon lives and how to reach it. The daemon and every
//! client use this one crate, so they always compute the same paths and speak the same
//! framing.
//!
//! - [`paths`]: project root discovery, the database, and the socket, lock and log files
//!   beside it (with a short fallback socket path when the natural one is too long).
//! - [`socket`]: the local-socket name for a path, and connecting to it.
//! - [`codec`]: newline-delimited framing with a maximum line length, for both ends.

pub mod codec;
pub mod paths;
pub mod socket;

pub use codec::{Frame, LineCodec};
pub use paths::ProjectPaths;
