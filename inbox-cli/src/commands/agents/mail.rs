//! `inbox mail`: your mail, messages addressed to you (--agent), newest first, with their
//! state.

use super::*;

/// Your mail: messages addressed to you (--agent), newest first, with their state.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  inbox mail --agent backend --state unread")]
pub struct Args {
    /// Only mail in this read state (withdrawn mail is in none).
    #[arg(long, value_parser = one_of(MailState::ALL))]
    pub state: Option<MailState>,
    /// Only mail about this task.
    #[arg(long, value_name = "TASK_ID")]
    pub task: Option<String>,
    /// At most this many (default 50, at most 500).
    #[arg(long)]
    pub limit: Option<u32>,
}

impl Command for Args {
    fn read_only(&self) -> bool {
        true
    }

    async fn run(self, ctx: &Ctx) -> Res {
        let a = self;
        let p = MailParams { agent: ctx.agent()?, state: a.state, task_id: a.task, limit: a.limit, before_event: None };
        let c = ctx.client().await?;
        let r = coord_client::pages::all(p, |p| c.mail_list(p)).await?;
        ctx.print(&r, || output::mail_table(&r.mail));
        Ok(Outcome::Done)
    }
}
