//! `orch task assign`: the worker of a task's next dispatch.

use super::prelude::*;

/// Give a task to another worker for its next dispatch (a live attempt moves with
/// `orch reassign`).
#[derive(clap::Args)]
#[command(after_help = "Example:\n  orch task assign --run R1 --task T2 --to backend-2")]
pub struct Args {
    #[command(flatten)]
    pub task: TaskArg,
    /// The worker.
    #[arg(long, value_name = "AGENT")]
    pub to: String,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let TaskArg { run, task } = self.task;
        let p = TaskEditParams { run_id: run, task_id: task, assign_to: Some(self.to), ..Default::default() };
        let v = ctx.client().await?.task_edit(p).await?;
        ctx.print(&v, || render::task(&v));
        Ok(Outcome::Done)
    }
}
