//! `inbox man`: print the manual page (roff).

use coord_cli::{CliError, Command, Ctx, Outcome, Res};

/// Print the manual page (roff).
#[derive(clap::Args)]
#[command(after_help = "Example:\n  inbox man | man -l -")]
pub struct Args {}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let _ = ctx;
        coord_cli::usage::man(<crate::cli::Cli as clap::CommandFactory>::command())
            .map(|()| Outcome::Done)
            .map_err(|e| CliError::Internal(format!("cannot write the man page: {e}")))
    }
}
