//! `orch blocked`: the blocked tasks and their questions.

use super::prelude::*;

/// List blocked tasks with their questions.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  orch blocked --run R1")]
pub struct Args {
    /// The run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
}

impl Command for Args {
    fn read_only(&self) -> bool {
        true
    }

    async fn run(self, ctx: &Ctx) -> Res {
        let c = ctx.client().await?;
        let p = RunPageParams { run_id: self.run, after: None };
        let v = coord_client::pages::all(p, |p| c.blocked(p)).await?;
        ctx.print(&v, || render::blocked(&v.blocked));
        Ok(Outcome::found(&v.blocked))
    }
}
