//! `inbox show`: show one thread with its full history and artifacts.

use super::*;

/// Show one thread with its full history and artifacts.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  inbox show --thread thr_... --agent backend   # also marks it read for backend")]
pub struct Args {
    /// The thread.
    #[arg(long, value_name = "THREAD_ID")]
    pub thread: String,
}

impl Command for Args {
    fn read_only(&self) -> bool {
        true
    }

    async fn run(self, ctx: &Ctx) -> Res {
        let a = self;
        let thread_id = a.thread.clone();
        let c = ctx.client().await?;
        let p = ShowParams { thread_id: a.thread, after_event: None };
        let r = coord_client::pages::all(p, |p| c.show(p)).await?;
        if let Some(agent) = &ctx.agent {
            c.mark_read(MarkReadParams { agent: agent.clone(), thread_id }).await?;
        }
        ctx.print(&r, || {
            output::thread_header(&r.thread);
            println!();
            for m in &r.messages {
                output::message_block(m);
            }
        });
        Ok(Outcome::Done)
    }
}
