//! `orch council start`: open the brainstorm threads of a council review.

use super::prelude::*;
use std::path::PathBuf;

/// Start a council: brainstorm threads for each reviewer.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  orch council start --run R1 --topic \"Review the auth design\" --body-file design.md\n  orch council start --run R1 --topic \"Is T2 ready to merge?\" --review-task T2   # the brief carries T2's diff"
)]
pub struct Args {
    /// The run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    /// What to review, in a line.
    #[arg(long)]
    pub topic: String,
    /// The material to review, from a file (`-` for stdin).
    #[arg(long, value_name = "PATH")]
    pub body_file: Option<PathBuf>,
    /// Reviewers, comma-separated (default: reviewer-1,reviewer-2,reviewer-3).
    #[arg(long, value_delimiter = ',')]
    pub reviewers: Vec<String>,
    /// Review this task's diff: the brief carries it (cut past 64 KiB) and says how to read
    /// it whole (`orch diff`).
    #[arg(long, value_name = "TASK_ID")]
    pub review_task: Option<String>,
}

/// Most bytes of a diff a council's brief carries.
const BRIEF_DIFF_BYTES: usize = 64 * 1024;

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let c = ctx.client().await?;
        let mut text = body(None, self.body_file.as_deref())?;
        if let Some(task) = &self.review_task {
            let p = DiffParams { run_id: self.run.clone(), task_id: task.clone(), ..Default::default() };
            let d = c.diff(p).await?;
            let mut diff = crate::render_queue::diff_text(&d);
            if diff.len() > BRIEF_DIFF_BYTES || d.truncated {
                let mut cut = BRIEF_DIFF_BYTES.min(diff.len());
                while !diff.is_char_boundary(cut) {
                    cut -= 1;
                }
                diff.truncate(cut);
                diff.push_str("\n… (cut here: read the whole diff with the command above)\n");
            }
            let brief = format!(
                "Review the work of task {task} (attempt {}, branch {}): read its diff with \
                 `orch diff --run {} --task {task}` (`--against integration` for what merging it changes). \
                 Name the file and line (`path:line`) in each recommendation. The diff:\n\n{diff}",
                d.attempt, d.branch, self.run
            );
            text = Some(match text {
                Some(t) if !t.is_empty() => format!("{t}\n\n{brief}"),
                _ => brief,
            });
        }
        let p = CouncilStartParams { run_id: self.run, topic: self.topic, body: text, reviewers: self.reviewers };
        let v = c.council_start(p).await?;
        ctx.print(&v, || render::council(&v, false));
        Ok(Outcome::Done)
    }
}
