//! `orch review comment`: a comment on one line of a task's diff.

use super::prelude::*;

/// Comment on a line of a task's diff (`orch diff` shows the lines). The comments go to
/// the worker with `orch review request-changes`.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  orch review comment --run R1 --task T2 --file src/lib.rs --line 12 --body \"handle the empty case\"\n  orch review comment --run R1 --task T2 --file README.md --line 3 --old --body \"keep this line\""
)]
pub struct Args {
    #[command(flatten)]
    pub task: TaskArg,
    /// The file, as `orch diff` names it.
    #[arg(long, value_name = "PATH")]
    pub file: String,
    /// The line (in the new file; with --old, in the old one).
    #[arg(long, value_name = "N")]
    pub line: u32,
    /// The line is a removed one (its number in the old file).
    #[arg(long)]
    pub old: bool,
    /// The comment.
    #[arg(long)]
    pub body: String,
    /// The attempt (default: the task's current one).
    #[arg(long, value_name = "N")]
    pub attempt: Option<u32>,
    /// Who writes it (default: the run's creator).
    #[arg(long = "as", value_name = "AGENT")]
    pub author: Option<String>,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let p = ReviewCommentParams {
            run_id: self.task.run,
            task_id: self.task.task,
            attempt: self.attempt,
            path: self.file,
            line: self.line,
            side: self.old.then(|| "old".to_string()),
            body: self.body,
            author: self.author,
        };
        let v = ctx.client().await?.review_comment(p).await?;
        ctx.print(&v, || println!("{} on {}:{} by {} ({})", v.comment_id, v.path, v.line, v.author, v.task_id));
        Ok(Outcome::Done)
    }
}
