//! `orch review approve`: a done task's work may merge.

use super::prelude::*;

/// Approve a done task's work: in a run created with --require-approval it may merge now
/// (through the merge queue; at once under --auto-merge).
#[derive(clap::Args)]
#[command(after_help = "Example:\n  orch review approve --run R1 --task T2 --summary \"looks good\"")]
pub struct Args {
    #[command(flatten)]
    pub task: TaskArg,
    /// A word for the record.
    #[arg(long)]
    pub summary: Option<String>,
    /// Who approves (default: the run's creator).
    #[arg(long = "as", value_name = "AGENT")]
    pub author: Option<String>,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let p =
            ReviewParams { run_id: self.task.run, task_id: self.task.task, summary: self.summary, author: self.author };
        let v = ctx.client().await?.review_approve(p).await?;
        ctx.print(&v, || crate::render_queue::review(&v));
        Ok(Outcome::Done)
    }
}
