//! `inbox claim`: take the lease on a thread.

use super::*;

/// Take the lease on a thread: exclusive ownership until it expires.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  inbox claim --agent backend --thread thr_... --lease-seconds 900 --json")]
pub struct Args {
    #[command(flatten)]
    pub a: LeaseArgs,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let a = self.a;
        if a.lease_token.is_some() {
            return Err(CliError::Invalid("claim takes no --lease-token: it grants a new one".into()));
        }
        let p = ClaimParams { agent: ctx.agent()?, thread_id: a.thread, lease_seconds: a.lease_seconds };
        let r = ctx.client().await?.claim(p).await?;
        leased(ctx, "claimed", r)
    }
}
