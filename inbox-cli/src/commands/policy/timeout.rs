//! `inbox policy timeout`: seconds a gated hook waits for the answer before the session's own permission flow decides.

use super::*;

/// Seconds a gated hook waits for the answer before the session's own permission flow decides.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  inbox --agent lead policy timeout 300")]
pub struct Args {
    /// Seconds, 1 to 3600.
    #[arg(value_parser = clap::value_parser!(u64).range(1..=coord_proto::types::MAX_PERMISSION_TIMEOUT))]
    pub seconds: u64,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        edit(ctx, |p| {
            p.timeout_seconds = self.seconds;
            Ok(())
        })
        .await
    }
}
