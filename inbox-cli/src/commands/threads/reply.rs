//! `inbox reply`: reply inside a thread (an answer to a blocked thread resumes it).

use super::*;

/// Reply inside a thread (an answer to a blocked thread resumes it).
#[derive(clap::Args)]
#[command(after_help = "Example:\n  inbox reply --from lead --thread thr_... --summary \"Use email/password\"")]
pub struct Args {
    /// Sender (default: --agent).
    #[arg(long)]
    pub from: Option<String>,
    /// Recipient (default: the thread's assignee, or its creator when the assignee replies).
    #[arg(long)]
    pub to: Option<String>,
    /// The thread.
    #[arg(long, value_name = "THREAD_ID")]
    pub thread: String,
    /// The reply's kind (default: answer).
    #[arg(long, value_parser = one_of(MessageKind::ALL))]
    pub kind: Option<MessageKind>,
    #[command(flatten)]
    pub content: Content,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let a = self;
        let p = ReplyParams {
            from: ctx.agent_or(a.from, "from")?,
            to: a.to,
            thread_id: a.thread,
            kind: a.kind,
            message: content(a.content)?,
        };
        let r = ctx.client().await?.reply(p).await?;
        posted(ctx, "replied", r)
    }
}
