//! `inbox check`: deliver your queued messages (marks them delivered; a message is
//! delivered once).

use super::*;

/// Deliver your queued messages (marks them delivered; a message is delivered once).
#[derive(clap::Args)]
#[command(after_help = "Example:\n  inbox check --agent backend --task T1")]
pub struct Args {
    #[command(flatten)]
    pub a: MailboxArgs,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let a = self.a;
        let p = CheckParams { agent: ctx.agent.clone(), task_id: a.task, ..Default::default() };
        let r = ctx.client().await?.mail_check(p).await?;
        ctx.print(&r, || {
            if r.messages.is_empty() {
                println!("no new messages");
            } else {
                print!("{}", output::agent_context(&r.messages));
            }
        });
        Ok(Outcome::Done)
    }
}
