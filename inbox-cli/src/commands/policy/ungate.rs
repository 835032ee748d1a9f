//! `inbox policy ungate`: remove every rule with this pattern.

use super::*;

/// Remove every rule with this pattern.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  inbox --agent lead policy ungate 'Bash(git push*)'")]
pub struct Args {
    /// The pattern, as it was gated.
    pub rule: String,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        edit(ctx, |p| {
            let before = p.rules.len();
            p.rules.retain(|r| r.tool != self.rule);
            if p.rules.len() == before {
                return Err(CliError::Invalid(format!("no rule '{}' in the policy", self.rule)));
            }
            Ok(())
        })
        .await
    }
}
