//! `orch retry`: a new attempt for a failed or cancelled task.

use super::prelude::*;

/// Open a new attempt for a failed or cancelled task (new thread, fresh worktree).
#[derive(clap::Args)]
#[command(after_help = "Example:\n  orch retry --run R1 --task T2 --to backend-2")]
pub struct Args {
    /// The run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    /// The failed or cancelled task.
    #[arg(long, value_name = "TASK_ID")]
    pub task: String,
    /// Another worker (default: the previous attempt's).
    #[arg(long, value_name = "AGENT")]
    pub to: Option<String>,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let v = ctx.client().await?.retry(RetryParams { run_id: self.run, task_id: self.task, to: self.to }).await?;
        ctx.print(&v, || render::dispatches(&v.dispatches));
        Ok(Outcome::Done)
    }
}
