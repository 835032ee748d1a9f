//! `orch council`: council review, where reviewers brainstorm, then vote.

mod list;
mod report;
mod start;
mod status;

use super::prelude;
use prelude::*;

coord_cli::subcommands! {
    /// The subcommands of `orch council`.
    pub enum Cmd {
        Start(start::Args),
        List(list::Args),
        Status(status::Args),
        Report(report::Args),
    }
}

/// One council of a run.
#[derive(clap::Args)]
pub struct Which {
    /// The run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    /// The council.
    #[arg(long, value_name = "COUNCIL_ID")]
    pub council: String,
}

impl Which {
    /// `council status`, or with `report` the groups, tallies and verdicts too.
    async fn show(self, ctx: &Ctx, report: bool) -> Res {
        let client = ctx.client().await?;
        let p = CouncilRef { run_id: self.run, council_id: self.council, after_group: None };
        let v = coord_client::pages::all(p, |p| client.council_show(p)).await?;
        ctx.print(&v, || render::council(&v, report));
        Ok(Outcome::Done)
    }
}
