//! `inbox cancel`: cancel a thread (releases any lease).

use super::*;

/// Cancel a thread (releases any lease).
#[derive(clap::Args)]
#[command(after_help = "Example:\n  inbox cancel --agent lead --thread thr_... --reason \"superseded\"")]
pub struct Args {
    /// The thread.
    #[arg(long, value_name = "THREAD_ID")]
    pub thread: String,
    /// Why the thread is cancelled.
    #[arg(long)]
    pub reason: String,
    #[command(flatten)]
    pub artifacts: ArtifactArgs,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let a = self;
        let p = CancelParams {
            agent: ctx.agent()?,
            thread_id: a.thread,
            reason: a.reason,
            artifacts: artifacts(a.artifacts)?,
        };
        let r = ctx.client().await?.cancel(p).await?;
        posted(ctx, "cancelled", r)
    }
}
