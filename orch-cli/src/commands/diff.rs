//! `orch diff`: a task's diff for review, with the review comments under their lines.

use super::prelude::*;
use coord_cli::usage::one_of;

/// Show a task's diff: its attempt's branch against where it left the integration branch
/// (`--against base`, the default: what the task changed), or against the integration
/// tip (`--against integration`: what merging it would change there).
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  orch diff --run R1 --task T2\n  orch diff --run R1 --task T2 --against integration --path src/lib.rs\n  orch diff --run R1 --task T2 --attempt 1 --json"
)]
pub struct Args {
    /// The run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    /// The task.
    #[arg(long, value_name = "TASK_ID")]
    pub task: String,
    /// The attempt (default: the task's current one).
    #[arg(long, value_name = "N")]
    pub attempt: Option<u32>,
    /// base (default) or integration.
    #[arg(long, value_parser = one_of(DiffAgainst::ALL))]
    pub against: Option<DiffAgainst>,
    /// Only this file.
    #[arg(long, value_name = "PATH")]
    pub path: Option<String>,
}

impl Command for Args {
    fn read_only(&self) -> bool {
        true
    }

    async fn run(self, ctx: &Ctx) -> Res {
        let c = ctx.client().await?;
        let p = DiffParams {
            run_id: self.run,
            task_id: self.task,
            attempt: self.attempt,
            against: self.against,
            path: self.path,
            after: None,
        };
        // A diff too large for one reply comes in pages: follow them.
        let mut d = c.diff(p.clone()).await?;
        while d.truncated {
            let next = c.diff(DiffParams { after: d.next_after.clone(), ..p.clone() }).await?;
            d.files.extend(next.files);
            (d.truncated, d.next_after) = (next.truncated, next.next_after);
        }
        ctx.print(&d, || crate::render_queue::diff(&d));
        Ok(Outcome::found(&d.files))
    }
}
