//! `orch merge`: merge done code tasks into the run's integration branch.

use super::prelude::*;

/// Merge done code tasks into the run's integration branch (a conflict opens a
/// resolution task, exit 20). In a run with a verify command they join the merge queue
/// instead, where `orch merge-queue` verifies each on the merge result before it lands.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  orch merge --run R1              # every done task waiting to be merged\n  orch merge --run R1 --task T1"
)]
pub struct Args {
    /// The run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    /// Only this task (default: every done task waiting to be merged).
    #[arg(long, value_name = "TASK_ID")]
    pub task: Option<String>,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let v = ctx.client().await?.merge(MergeParams { run_id: self.run, task_id: self.task }).await?;
        ctx.print(&v, || {
            if !v.merged.is_empty() || v.queued.is_empty() {
                render::merges(&v.merged);
            }
            crate::render_queue::queued(&v.queued);
        });
        Ok(if v.merged.iter().any(|m| m.state == MergeState::Conflict) {
            Outcome::Conflict
        } else if !v.queued.is_empty() {
            Outcome::Done
        } else {
            Outcome::found(&v.merged)
        })
    }
}
