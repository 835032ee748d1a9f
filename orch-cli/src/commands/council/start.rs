//! `orch council start`: open the brainstorm threads of a council review.

use super::prelude::*;
use std::path::PathBuf;

/// Start a council: brainstorm threads for each reviewer.
#[derive(clap::Args)]
#[command(
    after_help = "Example:\n  orch council start --run R1 --topic \"Review the auth design\" --body-file design.md"
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
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let p = CouncilStartParams {
            run_id: self.run,
            topic: self.topic,
            body: body(None, self.body_file.as_deref())?,
            reviewers: self.reviewers,
        };
        let v = ctx.client().await?.council_start(p).await?;
        ctx.print(&v, || render::council(&v, false));
        Ok(Outcome::Done)
    }
}
