//! `inbox policy lead`: set the lead: the default approver, and who idle notifications go to.

use super::*;

/// Set the lead: the default approver, and who idle notifications go to.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  inbox --agent lead policy lead lead")]
pub struct Args {
    /// The lead's agent id.
    pub name: String,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        edit(ctx, |p| {
            p.lead = Some(self.name.clone());
            Ok(())
        })
        .await
    }
}
