//! `orch council status`: a council's phase and who has answered.

use super::prelude::*;

/// The council's phase and who has answered.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  orch council status --run R1 --council C1")]
pub struct Args {
    #[command(flatten)]
    pub council: super::Which,
}

impl Command for Args {
    fn read_only(&self) -> bool {
        true
    }

    async fn run(self, ctx: &Ctx) -> Res {
        self.council.show(ctx, false).await
    }
}
