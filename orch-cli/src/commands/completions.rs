//! `orch completions`: a shell completion script.

use super::prelude::*;

/// Print a shell completion script (bash, zsh, fish, elvish, powershell).
#[derive(clap::Args)]
#[command(after_help = "Example:\n  orch completions zsh > ~/.zfunc/_orch")]
pub struct Args {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let _ = ctx;
        coord_cli::usage::completions(<crate::cli::Cli as clap::CommandFactory>::command(), self.shell);
        Ok(Outcome::Done)
    }
}
