//! `orch task list`: a run's tasks.

use super::prelude::*;
use coord_cli::usage::one_of;

/// List a run's tasks.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  orch task list --run R1 --status ready,blocked")]
pub struct Args {
    /// The run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    /// Only these statuses, comma-separated.
    #[arg(long, value_delimiter = ',', value_parser = one_of(TaskStatus::ALL))]
    pub status: Vec<TaskStatus>,
}

impl Command for Args {
    fn read_only(&self) -> bool {
        true
    }

    async fn run(self, ctx: &Ctx) -> Res {
        let p = TaskListParams { run_id: self.run, statuses: self.status, limit: None, after: None };
        let c = ctx.client().await?;
        let v = coord_client::pages::all(p, |p| c.task_list(p)).await?;
        ctx.print(&v, || render::tasks(&v.tasks));
        Ok(Outcome::found(&v.tasks))
    }
}
