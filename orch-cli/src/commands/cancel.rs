//! `orch cancel`: cancel one task, or the whole run.

use super::prelude::*;

/// Cancel one task, or the whole run.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  orch cancel --run R1 --task T3 --reason \"out of scope\"")]
pub struct Args {
    /// The run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    /// Only this task (default: the whole run).
    #[arg(long, value_name = "TASK_ID")]
    pub task: Option<String>,
    /// Why (given to the workers whose threads are cancelled).
    #[arg(long)]
    pub reason: String,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let p = CancelTaskParams { run_id: self.run, task_id: self.task, reason: self.reason };
        let v = ctx.client().await?.orch_cancel(p).await?;
        ctx.print(&v, || render::graph(&v));
        Ok(Outcome::Done)
    }
}
