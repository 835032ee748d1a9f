//! `orch review request-changes`: the comments go to the worker.

use super::prelude::*;

/// Send the task's unsent comments to its worker as one message with `file:line` anchors:
/// a done task not merged yet goes back to its worker (a new attempt from its branch); a
/// live one gets the message in its thread.
#[derive(clap::Args)]
#[command(
    after_help = "Example:\n  orch review comment --run R1 --task T2 --file src/lib.rs --line 12 --body \"handle the empty case\"\n  orch review request-changes --run R1 --task T2 --summary \"two fixes\""
)]
pub struct Args {
    #[command(flatten)]
    pub task: TaskArg,
    /// The message's first line (default: how many comments).
    #[arg(long)]
    pub summary: Option<String>,
    /// Who reviews (default: the run's creator).
    #[arg(long = "as", value_name = "AGENT")]
    pub author: Option<String>,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let p =
            ReviewParams { run_id: self.task.run, task_id: self.task.task, summary: self.summary, author: self.author };
        let v = ctx.client().await?.review_request_changes(p).await?;
        ctx.print(&v, || crate::render_queue::review(&v));
        Ok(Outcome::Done)
    }
}
