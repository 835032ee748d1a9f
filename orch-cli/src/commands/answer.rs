//! `orch answer`: answer a blocked task in its thread.

use super::prelude::*;
use std::path::PathBuf;

/// Answer a blocked task in its current thread (wakes the worker's wait-reply).
#[derive(clap::Args)]
#[command(after_help = "Example:\n  orch answer --run R1 --task T2 --summary \"Use email/password\"")]
pub struct Args {
    /// The run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    /// The blocked task.
    #[arg(long, value_name = "TASK_ID")]
    pub task: String,
    /// The answer, in a line.
    #[arg(long)]
    pub summary: String,
    /// The answer's details (text; see --body-file for a file).
    #[arg(long, conflicts_with = "body_file")]
    pub body: Option<String>,
    /// Read the details from a file (`-` for stdin).
    #[arg(long, value_name = "PATH")]
    pub body_file: Option<PathBuf>,
    /// Who answers (default: the run's creator).
    #[arg(long, value_name = "AGENT")]
    pub from: Option<String>,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let message = MessageInput {
            summary: self.summary,
            body: body(self.body, self.body_file.as_deref())?,
            payload_json: None,
            artifacts: vec![],
        };
        let p = AnswerParams { run_id: self.run, task_id: self.task, from: self.from, message };
        let v = ctx.client().await?.answer(p).await?;
        ctx.print(&v, || {
            println!(
                "answered {} in {} -> {} (event {})",
                v.message.message_id, v.thread.thread_id, v.message.to_agent, v.event_id
            )
        });
        Ok(Outcome::Done)
    }
}
