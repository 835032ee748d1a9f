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
        let c = ctx.client().await?;
        let v = c.run_show(RunRef { run_id: self.run }).await?;
        let v = coord_client::pages::complete_run_view(v, |p| c.task_list(p)).await?;
        ctx.print(&v, || render::graph(&v));
        Ok(Outcome::Done)
    }
}
