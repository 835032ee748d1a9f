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
        let v = ctx.client().await?.council_list(RunRef { run_id: self.run }).await?;
        ctx.print(&v, || render::councils(&v.councils));
        Ok(Outcome::found(&v.councils))
    }
}
