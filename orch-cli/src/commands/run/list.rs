//! `orch run list`: every run.

use super::prelude::*;

/// List runs.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  orch run list --json")]
pub struct Args {}

impl Command for Args {
    fn read_only(&self) -> bool {
        true
    }

    async fn run(self, ctx: &Ctx) -> Res {
        let c = ctx.client().await?;
        let v = coord_client::pages::all(RunListParams::default(), |p| c.run_list(p)).await?;
        ctx.print(&v, || render::runs(&v.runs));
        Ok(Outcome::found(&v.runs))
    }
}
