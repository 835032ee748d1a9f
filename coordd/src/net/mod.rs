//! The daemon's connections: [`transport`] speaks newline-delimited JSON-RPC on one local
//! socket connection and runs every call as its [`caller`]; [`outbox`] queues what a
//! connection has to write within its budget, and [`shed`] keeps all connections together
//! within the daemon's; [`activity`] counts connections, subscriptions and the last call,
//! for `system.hello` and the idle timeout. [`socket_file`] watches the socket file, so a
//! removed one is made again.

pub mod activity;
pub mod caller;
pub mod outbox;
pub mod shed;
pub mod socket_file;
pub mod transport;
