//! The session mailbox commands of `inbox`, one file each: check, pending, withdraw and
//! peer link (the session hooks are in `crate::hooks`).

pub mod check;
pub mod peer_link;
pub mod pending;
pub mod withdraw;

use coord_cli::CliError;
use coord_proto::api::MailApiClient;
use coord_proto::types::*;
use serde_json::json;

use crate::commands::args::*;
use crate::output;
use coord_cli::{Command, Ctx, Outcome, Res};

coord_cli::subcommands! {
    /// The subcommands of `inbox peer`.
    pub enum Peer {
        Link(peer_link::Args),
    }
}
