//! `orch worktree prune`: remove the worktrees of finished attempts.

use super::prelude::*;

/// Remove worktrees of finished attempts (made on this host) whose work is merged or
/// empty; says what it kept and why.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  orch worktree prune --run R1")]
pub struct Args {
    /// Only this run's (default: every run's).
    #[arg(long, value_name = "RUN_ID")]
    pub run: Option<String>,
    /// Also remove worktrees with unmerged commits or uncommitted changes (never live ones).
    #[arg(long)]
    pub force: bool,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let p = WorktreeParams { run_id: self.run, force: self.force, ..Default::default() };
        let v = ctx.client().await?.worktree_prune(p).await?;
        ctx.print(&v, || render::worktrees(&v));
        Ok(Outcome::Done)
    }
}
