//! `inbox read`: mark a message in your mail read (unread -> read; acked stays acked).

use super::*;

/// Mark a message in your mail read (unread -> read; acked stays acked).
#[derive(clap::Args)]
#[command(after_help = "Example:\n  inbox read --agent backend --message msg_...")]
pub struct Args {
    #[command(flatten)]
    pub a: MailMsgArgs,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let a = self.a;
        let p = MailRef { agent: ctx.agent()?, message_id: a.message };
        let r = ctx.client().await?.mail_read(p).await?;
        mail_changed(ctx, &r);
        Ok(Outcome::Done)
    }
}
