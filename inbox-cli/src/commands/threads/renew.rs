//! `inbox renew`: extend your lease on a thread.

use super::*;

/// Extend your lease on a thread.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  inbox renew --agent backend --thread thr_... --lease-seconds 900")]
pub struct Args {
    #[command(flatten)]
    pub a: LeaseArgs,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let a = self.a;
        let p = RenewParams {
            agent: ctx.agent()?,
            thread_id: a.thread,
            lease_seconds: a.lease_seconds,
            lease_token: a.lease_token,
        };
        let r = ctx.client().await?.renew(p).await?;
        leased(ctx, "renewed", r)
    }
}
