//! `inbox agent heartbeat`: say the agent (--agent ID) is alive, optionally with a new
//! status.

use super::*;

/// Say the agent (--agent ID) is alive, optionally with a new status.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  inbox agent heartbeat --agent agent-ui-1 --status busy")]
pub struct Args {
    /// The agent's new status.
    #[arg(long, value_parser = one_of(AgentStatus::ALL))]
    pub status: Option<AgentStatus>,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let a = self;
        let p = HeartbeatParams { agent_id: ctx.agent()?, status: a.status };
        let r = ctx.client().await?.agent_heartbeat(p).await?;
        ctx.print(&r, || output::agent_block(&r.agent));
        Ok(Outcome::Done)
    }
}
