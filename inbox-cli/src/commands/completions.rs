//! `inbox completions`: print a shell completion script (bash, zsh, fish, elvish, powershell).

use coord_cli::{Command, Ctx, Outcome, Res};

/// Print a shell completion script (bash, zsh, fish, elvish, powershell).
#[derive(clap::Args)]
#[command(after_help = "Example:\n  inbox completions bash > ~/.local/share/bash-completion/completions/inbox")]
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
