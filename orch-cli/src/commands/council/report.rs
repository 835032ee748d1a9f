//! `orch council report`: a council's groups, tallies and verdicts.

use super::prelude::*;

/// Groups, tallies, verdicts and who proposed what.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  orch council report --run R1 --council C1")]
pub struct Args {
    #[command(flatten)]
    pub council: super::Which,
}

impl Command for Args {
    fn read_only(&self) -> bool {
        true
    }

    async fn run(self, ctx: &Ctx) -> Res {
        self.council.show(ctx, true).await
    }
}
