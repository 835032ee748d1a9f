//! `inbox update`: report progress (in_progress) or a block (blocked) on a thread you hold.

use super::*;

/// Report progress (in_progress) or a block (blocked) on a thread you hold.
#[derive(clap::Args)]
#[command(
    after_help = "Example:\n  inbox update --agent backend --thread thr_... --status blocked --summary \"Need auth decision\" --json"
)]
pub struct Args {
    /// The thread.
    #[arg(long, value_name = "THREAD_ID")]
    pub thread: String,
    /// in_progress (default) or blocked.
    #[arg(long, value_parser = one_of(ThreadStatus::ALL))]
    pub status: Option<ThreadStatus>,
    /// Refuse unless this is the current lease's token (fences off stale processes).
    #[arg(long)]
    pub lease_token: Option<String>,
    #[command(flatten)]
    pub content: Content,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let a = self;
        let p = UpdateParams {
            agent: ctx.agent()?,
            thread_id: a.thread,
            status: a.status,
            lease_token: a.lease_token,
            message: content(a.content)?,
        };
        let r = ctx.client().await?.update(p).await?;
        let wait = (r.thread.status == ThreadStatus::Blocked).then(|| {
            format!(
                "wait for the answer: inbox wait-reply --thread {} --after-event {}",
                r.thread.thread_id, r.event_id
            )
        });
        let out = posted(ctx, "updated", r);
        if let Some(line) = wait.filter(|_| !ctx.json) {
            println!("{line}");
        }
        out
    }
}
