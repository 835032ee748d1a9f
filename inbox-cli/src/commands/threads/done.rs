//! `inbox done`: finish a thread you hold, with its result.

use super::*;

/// Finish a thread you hold, with its result.
#[derive(clap::Args)]
#[command(
    after_help = "Example:\n  inbox done --agent backend --thread thr_... --summary \"Done\" --body-file result.md --artifact result.md"
)]
pub struct Args {
    #[command(flatten)]
    pub a: FinishArgs,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let a = self.a;
        let p = finish(ctx, a)?;
        let r = ctx.client().await?.done(p).await?;
        posted(ctx, "done", r)
    }
}
