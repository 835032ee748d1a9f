//! `orch run show`: a run and its tasks.

use super::prelude::*;

/// Show a run and its tasks.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  orch run show --run R1")]
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
        let v = ctx.client().await?.run_show(RunRef { run_id: self.run }).await?;
        ctx.print(&v, || render::graph(&v));
        Ok(Outcome::Done)
    }
}
