//! `orch ready`: the tasks ready to dispatch.

use super::prelude::*;

/// List ready tasks (dependencies done and merged), by priority then age.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  orch ready --run R1")]
pub struct Args {
    /// The run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    /// At most this many (default 50).
    #[arg(long)]
    pub limit: Option<u32>,
}

impl Command for Args {
    fn read_only(&self) -> bool {
        true
    }

    async fn run(self, ctx: &Ctx) -> Res {
        let p = TaskListParams { run_id: self.run, statuses: vec![], limit: self.limit, after: None };
        let c = ctx.client().await?;
        let v = coord_client::pages::all(p, |p| c.ready(p)).await?;
        ctx.print(&v, || render::tasks(&v.tasks));
        Ok(Outcome::found(&v.tasks))
    }
}
