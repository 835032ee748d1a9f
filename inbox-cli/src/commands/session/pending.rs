//! `inbox pending`: count your queued messages (pending, and how many are urgent).

use super::*;

/// Count your queued messages (pending, and how many are urgent). Never delivers.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  inbox pending --agent backend --json     # {\"pending\": 2, \"urgent\": 0}")]
pub struct Args {
    #[command(flatten)]
    pub a: MailboxArgs,
}

impl Command for Args {
    fn read_only(&self) -> bool {
        true
    }

    async fn run(self, ctx: &Ctx) -> Res {
        let a = self.a;
        let p = PendingParams { agent: ctx.agent.clone(), task_id: a.task, remind: false };
        let r = ctx.client().await?.mail_pending(p).await?;
        ctx.print(&json!({"pending": r.pending, "urgent": r.urgent}), || {
            println!("{} pending ({} urgent)", r.pending, r.urgent)
        });
        Ok(Outcome::Done)
    }
}
