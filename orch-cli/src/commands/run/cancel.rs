//! `orch run cancel`: cancel a whole run.

use super::prelude::*;

/// Cancel a run: its unfinished tasks and their threads.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  orch run cancel --run R1 --reason \"goal changed\"")]
pub struct Args {
    /// The run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    /// Why (given to the workers whose threads are cancelled).
    #[arg(long)]
    pub reason: String,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let p = CancelTaskParams { run_id: self.run, task_id: None, reason: self.reason };
        let v = ctx.client().await?.orch_cancel(p).await?;
        ctx.print(&v, || render::graph(&v));
        Ok(Outcome::Done)
    }
}
