//! `inbox policy clear`: remove every rule (the lead and timeout stay).

use super::*;

/// Remove every rule (the lead and timeout stay).
#[derive(clap::Args)]
#[command(after_help = "Example:\n  inbox --agent lead policy clear")]
pub struct Args {}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        edit(ctx, |p| {
            p.rules.clear();
            Ok(())
        })
        .await
    }
}
