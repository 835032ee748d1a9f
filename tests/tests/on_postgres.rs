//! The end-to-end suites again, every daemon on PostgreSQL: this binary's name selects the
//! backend (see `coord_tests::pg::backend`; `COORD_TEST_STORE=postgres` runs every suite on
//! it instead). Each project gets a database of its own on one server per binary.

#[path = "agents.rs"]
mod agents;
#[path = "authority.rs"]
mod authority;
#[path = "authority_table.rs"]
mod authority_table;
#[path = "client.rs"]
mod client;
#[path = "control.rs"]
mod control;
#[path = "daemon.rs"]
mod daemon;
#[path = "daemon_inbox.rs"]
mod daemon_inbox;
#[path = "exit_codes.rs"]
mod exit_codes;
#[path = "identity.rs"]
mod identity;
#[path = "launch.rs"]
mod launch;
#[path = "leases.rs"]
mod leases;
#[path = "mailbox.rs"]
mod mailbox;
#[path = "mcp.rs"]
mod mcp;
#[path = "orch.rs"]
mod orch;
#[path = "orch_edit.rs"]
mod orch_edit;
#[path = "permission.rs"]
mod permission;
#[path = "progress.rs"]
mod progress;
#[path = "raw_socket.rs"]
mod raw_socket;
#[path = "reply_bounds.rs"]
mod reply_bounds;
#[path = "reservations.rs"]
mod reservations;
#[path = "search.rs"]
mod search;
#[path = "stacked.rs"]
mod stacked;
#[path = "views.rs"]
mod views;
#[path = "waits.rs"]
mod waits;
#[path = "worker_flow.rs"]
mod worker_flow;
