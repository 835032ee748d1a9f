//! `inbox ack`: acknowledge a message in your mail (only a recipient may).

use super::*;

/// Acknowledge a message in your mail (only a recipient may).
#[derive(clap::Args)]
#[command(after_help = "Example:\n  inbox ack --agent backend --message msg_...")]
pub struct Args {
    #[command(flatten)]
    pub a: MailMsgArgs,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let a = self.a;
        let p = MailRef { agent: ctx.agent()?, message_id: a.message };
        let r = ctx.client().await?.mail_ack(p).await?;
        mail_changed(ctx, &r);
        Ok(Outcome::Done)
    }
}
