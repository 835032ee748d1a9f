//! `inbox fetch`: list candidate threads assigned to an agent, without claiming them (never
//! writes).

use super::*;

/// List candidate threads assigned to an agent, without claiming them (never writes).
#[derive(clap::Args)]
#[command(after_help = "Example:\n  inbox fetch --agent backend --status pending --json")]
pub struct Args {
    /// Statuses to include, comma-separated (default: pending).
    #[arg(long, value_delimiter = ',', value_parser = one_of(ThreadStatus::ALL))]
    pub status: Vec<ThreadStatus>,
    /// At most this many threads (default 50).
    #[arg(long)]
    pub limit: Option<u32>,
    /// Only threads with messages to you that you have not read.
    #[arg(long)]
    pub unread: bool,
}

impl Command for Args {
    fn read_only(&self) -> bool {
        true
    }

    async fn run(self, ctx: &Ctx) -> Res {
        let a = self;
        let p = FetchParams { agent: ctx.agent()?, statuses: a.status, limit: a.limit, unread: a.unread, after: None };
        let c = ctx.client().await?;
        let r = coord_client::pages::all(p, |p| c.fetch(p)).await?;
        threads(ctx, &r);
        Ok(if r.threads.is_empty() { Outcome::NoMatch } else { Outcome::Done })
    }
}
