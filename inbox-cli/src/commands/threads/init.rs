//! `inbox init`: create the database and schema (and start the daemon) for this project.

use super::*;

/// Create the database and schema (and start the daemon) for this project.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  inbox init                 # in the project's root; .agents/ is kept out of git\n  \
                  inbox init --require-credentials --lead lead   # lead: a registered agent"
)]
pub struct Args {
    /// Require registration: sends from or to unregistered agents fail (unknown_sender,
    /// unknown_recipient). Stored in the database.
    #[arg(long, conflicts_with = "no_strict_agents")]
    pub strict_agents: bool,
    /// Accept unregistered agents again (they are recorded when first seen).
    #[arg(long)]
    pub no_strict_agents: bool,
    /// Require credentials: every write made as an agent then needs that agent's secret
    /// (COORD_AGENT_SECRET, from `inbox agent register`). Stored in the database.
    #[arg(long, conflicts_with = "no_require_credentials")]
    pub require_credentials: bool,
    /// Stop requiring credentials (needs the lead's or an admin's secret while they are
    /// required).
    #[arg(long)]
    pub no_require_credentials: bool,
    /// The project's lead: with credentials required, only the lead and the admins may
    /// change the policy, these settings and the roster. Needed to require credentials;
    /// changing it later needs the lead's or an admin's secret. `--lead ''` removes it.
    #[arg(long, value_name = "AGENT")]
    pub lead: Option<String>,
    /// An admin, who shares the lead's authority (repeatable; replaces the list).
    #[arg(long = "admin", value_name = "AGENT", conflicts_with = "no_admins")]
    pub admins: Vec<String>,
    /// Remove every admin.
    #[arg(long)]
    pub no_admins: bool,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let a = self;
        let p = InitParams {
            strict_agents: flag_pair(a.strict_agents, a.no_strict_agents),
            require_credentials: flag_pair(a.require_credentials, a.no_require_credentials),
            lead: a.lead,
            admins: (a.no_admins || !a.admins.is_empty()).then_some(a.admins),
        };
        let r = ctx.client().await?.init(p).await?;
        let on_off = |b: bool| if b { "on" } else { "off" };
        ctx.print(&r, || {
            println!(
                "initialized {} (schema v{}, {} journal)\ndaemon socket {}\nstrict agents {}\nrequire credentials {}\nlead {}\nadmins {}",
                r.db,
                r.schema_version,
                r.journal_mode,
                r.socket,
                on_off(r.strict_agents),
                on_off(r.require_credentials),
                r.lead.as_deref().unwrap_or("(none)"),
                if r.admins.is_empty() { "(none)".to_string() } else { r.admins.join(", ") }
            )
        });
        Ok(Outcome::Done)
    }
}
