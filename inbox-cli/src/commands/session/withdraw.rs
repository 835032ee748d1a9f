//! `inbox withdraw`: take back a message you sent that was not delivered yet.

use super::*;

/// Take back a message you sent that was not delivered yet.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  inbox withdraw --agent lead --message msg_...")]
pub struct Args {
    #[command(flatten)]
    pub a: MailMsgArgs,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let a = self.a;
        let p = MailRef { agent: ctx.agent()?, message_id: a.message };
        let r = ctx.client().await?.mail_withdraw(p).await?;
        ctx.print(&r, || println!("withdrew {} from {}", r.message_id, r.recipients.join(", ")));
        Ok(Outcome::Done)
    }
}
