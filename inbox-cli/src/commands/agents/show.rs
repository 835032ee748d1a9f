//! `inbox agent show`: show one agent (--agent ID).

use super::*;

/// Show one agent (--agent ID).
#[derive(clap::Args)]
#[command(after_help = "Example:\n  inbox agent show --agent agent-ui-1")]
pub struct Args {}

impl Command for Args {
    fn read_only(&self) -> bool {
        true
    }

    async fn run(self, ctx: &Ctx) -> Res {
        let p = AgentRef { agent_id: ctx.agent()? };
        let a = ctx.client().await?.agent_show(p).await?;
        ctx.print(&json!({ "agent": a }), || output::agent_block(&a));
        Ok(Outcome::Done)
    }
}
