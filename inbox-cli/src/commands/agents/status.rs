//! `inbox status`: the coordination summary: active reservations, unacked messages,
//! counts by state.

use super::*;

/// Coordination summary: active reservations, unacked messages, counts by state.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  inbox status --task T1")]
pub struct Args {
    /// Only this task's reservations and mail.
    #[arg(long, value_name = "TASK_ID")]
    pub task: Option<String>,
}

impl Command for Args {
    fn read_only(&self) -> bool {
        true
    }

    async fn run(self, ctx: &Ctx) -> Res {
        let a = self;
        let p = StatusParams { task_id: a.task, agent: ctx.explicit_agent() };
        let r = ctx.client().await?.status(p).await?;
        ctx.print(&r, || output::status(&r));
        Ok(Outcome::Done)
    }
}
