//! `orch task edit`: change a task.

use super::prelude::*;
use std::path::PathBuf;

use coord_cli::usage::one_of;

/// Change a task: its text and kind before it is dispatched; its worker, priority,
/// role and attempt limit until it is done; its verify command until it is merged.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  orch task edit --run R1 --task T2 --title \"Post CRUD + tests\" --priority urgent")]
pub struct Args {
    /// The run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    /// The task.
    #[arg(long, value_name = "TASK_ID")]
    pub task: String,
    /// A new title (before dispatch).
    #[arg(long)]
    pub title: Option<String>,
    /// A new body (before dispatch).
    #[arg(long, conflicts_with = "body_file")]
    pub body: Option<String>,
    /// Read the new body from a file (`-` for stdin).
    #[arg(long, value_name = "PATH")]
    pub body_file: Option<PathBuf>,
    /// New acceptance criteria (before dispatch).
    #[arg(long)]
    pub acceptance: Option<String>,
    /// A new priority.
    #[arg(long, value_parser = one_of(Priority::ALL))]
    pub priority: Option<Priority>,
    /// The worker for its next dispatch.
    #[arg(long, value_name = "AGENT")]
    pub assign_to: Option<String>,
    /// A new role hint.
    #[arg(long)]
    pub role: Option<String>,
    /// A new kind (before dispatch).
    #[arg(long, value_parser = one_of(TaskKind::ALL))]
    pub kind: Option<TaskKind>,
    /// A new attempt limit (at least the attempts used).
    #[arg(long, value_name = "N")]
    pub max_attempts: Option<u32>,
    /// Its own verify command for the merge queue, over the run's (`""`: none for this
    /// task); also while its merge waits.
    #[arg(long, value_name = "COMMAND")]
    pub verify: Option<String>,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let p = TaskEditParams {
            run_id: self.run,
            task_id: self.task,
            title: self.title,
            body: body(self.body, self.body_file.as_deref())?,
            acceptance: self.acceptance,
            priority: self.priority,
            assign_to: self.assign_to,
            role: self.role,
            kind: self.kind,
            max_attempts: self.max_attempts,
            verify: self.verify,
        };
        let v = ctx.client().await?.task_edit(p).await?;
        ctx.print(&v, || render::task(&v));
        Ok(Outcome::Done)
    }
}
