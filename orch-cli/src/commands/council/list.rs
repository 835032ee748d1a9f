//! `orch council list`: a run's councils.

use super::prelude::*;

/// A run's councils, with their phase.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  orch council list --run R1")]
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
        let v = coord_client::pages::all(p, |p| c.council_list(p)).await?;
        ctx.print(&v, || render::councils(&v.councils));
        Ok(Outcome::found(&v.councils))
    }
}
