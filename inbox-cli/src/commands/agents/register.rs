//! `inbox agent register`: register an agent id (fails if it exists, unless
//! --force-update).

use super::*;

/// Register an agent id (fails if it exists, unless --force-update).
#[derive(clap::Args)]
#[command(after_help = "Example:\n  inbox agent register --name agent-ui-1 --role ui")]
pub struct Args {
    /// The agent id: lowercase letters and digits in hyphen-joined groups, 3 to 48 long.
    #[arg(long, value_name = "ID")]
    pub name: String,
    /// The agent's role, e.g. ui, backend, reviewer.
    #[arg(long)]
    pub role: String,
    /// A display name (default: the id).
    #[arg(long, value_name = "TEXT")]
    pub display: Option<String>,
    /// Update the display name and role of an existing agent (never renames).
    #[arg(long)]
    pub force_update: bool,
    /// With --force-update: issue a new secret; the old one stops working.
    #[arg(long, requires = "force_update")]
    pub rotate_secret: bool,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let a = self;
        let p = RegisterParams {
            agent_id: a.name,
            role: a.role,
            display_name: a.display,
            force_update: a.force_update,
            rotate_secret: a.rotate_secret,
        };
        let r = ctx.client().await?.agent_register(p).await?;
        ctx.print(&r, || {
            output::agent_block(&r.agent);
            if let Some(secret) = &r.secret {
                println!("  secret {secret}");
                println!("  (shown once; the agent's commands read it from {AGENT_SECRET_ENV})");
            }
        });
        Ok(Outcome::Done)
    }
}
