//! The agents layer of `inbox`, one file per command: the agent registry (`agent
//! register|list|show|heartbeat`, listed in [`Agent`]), mail with read/ack, file-scope
//! reservations and the status summary, one call each. Only an `--agent` given on the
//! command line (not `COORD_AGENT`) narrows the `reservations` and `status` filters.

pub mod ack;
pub mod heartbeat;
pub mod list;
pub mod mail;
pub mod read;
pub mod register;
pub mod release;
pub mod reservations;
pub mod reserve;
pub mod show;
pub mod status;

use coord_cli::CliError;
use coord_cli::usage::one_of;
use coord_proto::api::{AgentsApiClient, InboxApiClient, MailApiClient};
use coord_proto::types::*;
use serde_json::json;

use crate::commands::args::*;
use crate::output;
use coord_cli::{Command, Ctx, Outcome, Res};

coord_cli::subcommands! {
    /// The subcommands of `inbox agent`.
    pub enum Agent {
        Register(register::Args),
        List(list::Args),
        Show(show::Args),
        Heartbeat(heartbeat::Args),
    }
}

/// A message read or acked (or already so).
fn mail_changed(ctx: &Ctx, r: &MailItemResult) {
    ctx.print(r, || {
        let m = &r.mail;
        let change = if r.event_id.is_some() { "now" } else { "already" };
        println!("{} is {change} {} for {}", m.message_id, m.state, m.to_agent);
        output::mail_block(m);
    });
}
