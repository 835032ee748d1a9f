//! `orch reassign`: move a live task to another worker.

use super::prelude::*;

/// Move a live task to another worker (cancels the current thread, links its history).
#[derive(clap::Args)]
#[command(after_help = "Example:\n  orch reassign --run R1 --task T2 --to backend-2")]
pub struct Args {
    /// The run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    /// The live task.
    #[arg(long, value_name = "TASK_ID")]
    pub task: String,
    /// The new worker.
    #[arg(long, value_name = "AGENT")]
    pub to: String,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let p = ReassignParams { run_id: self.run, task_id: self.task, to: Some(self.to) };
        let v = ctx.client().await?.reassign(p).await?;
        ctx.print(&v, || render::dispatches(&v.dispatches));
        Ok(Outcome::Done)
    }
}
