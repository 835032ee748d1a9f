//! `orch run edit`: a run's merge settings (verify command, approval, automatic merge,
//! merge retries).

use super::prelude::*;

/// Change a run's settings: its verify command, whether merges need approval, automatic
/// merge, and how many times the merge queue sends a task back.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  orch run edit --run R1 --verify 'cargo test --workspace'\n  orch run edit --run R1 --verify ''              # no verify command any more\n  orch run edit --run R1 --require-approval false --auto-merge true"
)]
pub struct Args {
    /// The run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    /// The verify command (`''` removes it).
    #[arg(long, value_name = "COMMAND")]
    pub verify: Option<String>,
    /// Merge only what a reviewer approved (true or false).
    #[arg(long, value_name = "BOOL")]
    pub require_approval: Option<bool>,
    /// Merge done tasks without `orch merge` (true or false).
    #[arg(long, value_name = "BOOL")]
    pub auto_merge: Option<bool>,
    /// How many times the merge queue sends a task back before it fails it.
    #[arg(long, value_name = "N")]
    pub merge_retries: Option<u32>,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let p = RunEditParams {
            run_id: self.run,
            verify: self.verify,
            require_approval: self.require_approval,
            auto_merge: self.auto_merge,
            merge_retries: self.merge_retries,
        };
        let v = ctx.client().await?.run_edit(p).await?;
        ctx.print(&v, || crate::render_queue::run_settings(&v.run));
        Ok(Outcome::Done)
    }
}
