//! `inbox policy show`: print the policy: its lead, timeout and gated rules.

use super::*;

/// Print the policy: its lead, timeout and gated rules.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  inbox --agent lead policy show --json")]
pub struct Args {}

impl Command for Args {
    fn read_only(&self) -> bool {
        true
    }

    async fn run(self, ctx: &Ctx) -> Res {
        let r = ctx.client().await?.policy_get().await?;
        ctx.print(&r, || print(&r));
        Ok(Outcome::Done)
    }
}
