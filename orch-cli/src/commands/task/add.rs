//! `orch task add`: a task in a run's graph.

use super::prelude::*;
use std::path::PathBuf;

use coord_cli::usage::one_of;

/// Add a task to a run.
#[derive(clap::Args)]
#[command(
    after_help = "Example:\n  orch task add --run R1 --id T2 --title \"Post CRUD\" --depends-on T1 --assign-to backend --priority high"
)]
pub struct Args {
    /// The run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    /// Task id, unique within the run (letters, digits, '.', '_', '-').
    #[arg(long)]
    pub id: String,
    /// What to do, in a line.
    #[arg(long)]
    pub title: String,
    /// The details (text; see --body-file for a file).
    #[arg(long, conflicts_with = "body_file")]
    pub body: Option<String>,
    /// Read the body from a file (`-` for stdin).
    #[arg(long, value_name = "PATH")]
    pub body_file: Option<PathBuf>,
    /// Acceptance criteria, passed to the worker.
    #[arg(long)]
    pub acceptance: Option<String>,
    /// Tasks this one depends on, comma-separated.
    #[arg(long, value_delimiter = ',', value_name = "T0,T2")]
    pub depends_on: Vec<String>,
    /// The worker to dispatch to by default.
    #[arg(long, value_name = "AGENT")]
    pub assign_to: Option<String>,
    /// Role hint for launchers.
    #[arg(long)]
    pub role: Option<String>,
    /// Priority in the ready queue (default normal).
    #[arg(long, value_parser = one_of(Priority::ALL))]
    pub priority: Option<Priority>,
    /// code (default: gets a git worktree) or thread (an inbox thread only).
    #[arg(long, value_parser = one_of(TaskKind::ALL))]
    pub kind: Option<TaskKind>,
    /// Attempts allowed, retries included (default 3).
    #[arg(long, value_name = "N")]
    pub max_attempts: Option<u32>,
    /// This task's own verify command for the merge queue, over the run's (`""`: none).
    #[arg(long, value_name = "COMMAND")]
    pub verify: Option<String>,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let p = TaskAddParams {
            run_id: self.run,
            task_id: self.id,
            title: self.title,
            body: body(self.body, self.body_file.as_deref())?,
            acceptance: self.acceptance,
            depends_on: self.depends_on,
            assign_to: self.assign_to,
            role: self.role,
            priority: self.priority,
            kind: self.kind,
            max_attempts: self.max_attempts,
            verify: self.verify,
        };
        let v = ctx.client().await?.task_add(p).await?;
        ctx.print(&v, || render::task(&v));
        Ok(Outcome::Done)
    }
}
