//! `inbox dashboard`: serve the live web dashboard from the daemon and print its URL.

use coord_cli::{Command, Ctx, Outcome, Res};

/// Serve the live web dashboard from the daemon and print its URL.
#[derive(clap::Args)]
#[command(
    long_about = coord_cli::dashboard::ABOUT,
    after_help = "Examples:\n  inbox dashboard --open\n  inbox dashboard --port 8080\n  inbox dashboard --stop"
)]
pub struct Args {
    #[command(flatten)]
    pub dashboard: coord_cli::dashboard::DashboardArgs,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        coord_cli::dashboard::command(ctx.client().await?, &self.dashboard, ctx.json, &ctx.command).await?;
        Ok(Outcome::Done)
    }
}
