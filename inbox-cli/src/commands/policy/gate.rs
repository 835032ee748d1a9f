//! `inbox policy gate`: gate a tool pattern (Claude Code rule syntax): Bash(git push*),
//! Write(src/**), mcp__*.

use super::*;

/// Gate a tool pattern (Claude Code rule syntax): Bash(git push*), Write(src/**), mcp__*.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  inbox --agent lead policy gate 'Bash(git push*)' --for 'w*' --approver lead")]
pub struct Args {
    /// The pattern, e.g. 'Bash(git push*)'.
    pub rule: String,
    /// Only for these agents (globs, repeatable; default every agent).
    #[arg(long = "for", value_name = "AGENT")]
    pub agents: Vec<String>,
    /// Who approves (default: the lead).
    #[arg(long)]
    pub approver: Option<String>,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let a = self;
        edit(ctx, |p| {
            p.rules.retain(|r| !(r.tool == a.rule && r.agents == a.agents));
            p.rules.push(PolicyRule { tool: a.rule.clone(), agents: a.agents.clone(), approver: a.approver.clone() });
            Ok(())
        })
        .await
    }
}
