//! `orch run finish`: merge the run into its base branch.

use super::prelude::*;

/// Merge the run into its base branch: first every done task still waiting to be
/// merged into the integration branch, then the integration branch (refused while a
/// task runs or a merge is in conflict; nothing moves on a conflict).
#[derive(clap::Args)]
#[command(after_help = "Examples:\n  orch run finish --run R1\n  orch run finish --run R1 --into release")]
pub struct Args {
    /// The run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    /// The branch to merge into (default: the branch the run started from).
    #[arg(long, value_name = "BRANCH")]
    pub into: Option<String>,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let v = ctx.client().await?.run_finish(RunFinishParams { run_id: self.run, into: self.into }).await?;
        ctx.print(&v, || render::finished(&v));
        Ok(Outcome::Done)
    }
}
