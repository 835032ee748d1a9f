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
        let v = ctx.client().await?.run_list().await?;
        ctx.print(&v, || render::runs(&v.runs));
        Ok(Outcome::found(&v.runs))
    }
}
