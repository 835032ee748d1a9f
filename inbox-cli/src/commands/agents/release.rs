//! `inbox release`: release your reservation of a scope.

use super::*;

/// Release your reservation of a scope.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  inbox release --agent backend --scope \"src/db/**\"")]
pub struct Args {
    /// The scope, exactly as reserved.
    #[arg(long, value_name = "GLOB")]
    pub scope: String,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let a = self;
        let p = ReleaseParams { agent: ctx.agent()?, scope: a.scope };
        let r = ctx.client().await?.release(p).await?;
        ctx.print(&r, || println!("released: {}", output::reservation_line(&r.reservation)));
        Ok(Outcome::Done)
    }
}
