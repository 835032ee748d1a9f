//! `inbox fail`: fail a thread you hold, saying why.

use super::*;

/// Fail a thread you hold, saying why.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  inbox fail --agent backend --thread thr_... --summary \"Migrations do not apply\"")]
pub struct Args {
    #[command(flatten)]
    pub a: FinishArgs,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let a = self.a;
        let p = finish(ctx, a)?;
        let r = ctx.client().await?.fail(p).await?;
        posted(ctx, "failed", r)
    }
}
