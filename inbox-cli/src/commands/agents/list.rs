//! `inbox agent list`: list agents, sorted by id.

use super::*;

/// List agents, sorted by id.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  inbox agent list                 # registered agents and those only seen at work\n  inbox agent list --registered --status busy"
)]
pub struct Args {
    /// Only agents with this role.
    #[arg(long)]
    pub role: Option<String>,
    /// Only agents in this status.
    #[arg(long, value_parser = one_of(AgentStatus::ALL))]
    pub status: Option<AgentStatus>,
    /// Only registered agents (by default the list also shows agents that wrote or were
    /// written to without registering, marked unregistered).
    #[arg(long)]
    pub registered: bool,
    /// Accepted for older scripts: unregistered agents are listed by default now.
    #[arg(long, hide = true, conflicts_with = "registered")]
    pub all: bool,
}

impl Command for Args {
    fn read_only(&self) -> bool {
        true
    }

    async fn run(self, ctx: &Ctx) -> Res {
        let a = self;
        let p = AgentListParams { role: a.role, status: a.status, include_unregistered: !a.registered, after: None };
        let c = ctx.client().await?;
        let r = coord_client::pages::all(p, |p| c.agent_list(p)).await?;
        ctx.print(&r, || output::agent_table(&r.agents));
        Ok(Outcome::Done)
    }
}
