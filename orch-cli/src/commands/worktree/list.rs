//! `orch worktree list`: the attempt worktrees made on this host.

use super::prelude::*;

/// List attempt worktrees made on this host.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  orch worktree list --run R1")]
pub struct Args {
    /// Only this run's (default: every run's).
    #[arg(long, value_name = "RUN_ID")]
    pub run: Option<String>,
}

impl Command for Args {
    fn read_only(&self) -> bool {
        true
    }

    async fn run(self, ctx: &Ctx) -> Res {
        let client = ctx.client().await?;
        let p = WorktreeParams { run_id: self.run, ..Default::default() };
        let v = coord_client::pages::all(p, |p| client.worktree_list(p)).await?;
        ctx.print(&v, || render::worktrees(&v));
        Ok(Outcome::found(&v.worktrees))
    }
}
