//! `orch run budget`: set, remove or show a run's budget (`launch.budgetSet`,
//! `launch.usageShow`).

use super::prelude::*;
use coord_proto::api::LaunchApiClient;

/// Set the run's budget (what its sessions may cost or use in all); at the budget the
/// launch bridge starts and dispatches nothing more, and `orch wait` wakes with
/// `run.budget_reached`. Without a limit: show the run's usage and budget.
#[derive(clap::Args)]
#[command(after_help = "Examples:\n  orch run budget --run R1 --max-cost-usd 20\n  \
                        orch run budget --run R1 --max-tokens 5000000\n  \
                        orch run budget --run R1 --clear\n  orch run budget --run R1          # show")]
pub struct Args {
    /// The run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    /// The most its sessions may cost, in US dollars.
    #[arg(long, value_parser = parse_dollars)]
    pub max_cost_usd: Option<f64>,
    /// The most tokens its sessions may use (input, output, cache reads and writes).
    #[arg(long, value_parser = clap::value_parser!(i64).range(1..))]
    pub max_tokens: Option<i64>,
    /// Remove the budget.
    #[arg(long, conflicts_with_all = ["max_cost_usd", "max_tokens"])]
    pub clear: bool,
}

/// Set the budget of `run_id` (both `None`: remove it).
pub async fn set(
    ctx: &Ctx,
    run_id: String,
    max_cost_usd: Option<f64>,
    max_tokens: Option<i64>,
) -> Result<BudgetSetResult, CliError> {
    let p = BudgetSetParams { run_id, session_id: None, max_cost_usd, max_tokens };
    Ok(ctx.client().await?.budget_set(p).await?)
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        if !self.clear && self.max_cost_usd.is_none() && self.max_tokens.is_none() {
            let r = ctx.client().await?.usage_show(UsageShowParams { run_id: self.run }).await?;
            ctx.print(&r, || crate::usage::print(Some(&r)));
            return Ok(Outcome::Done);
        }
        let v = set(ctx, self.run, self.max_cost_usd, self.max_tokens).await?;
        ctx.print(&v, || {
            let reached = if v.over_budget { " — reached: nothing more is started" } else { "" };
            if v.budget.is_set() {
                println!("run {} budget: {}{reached}", v.run_id, v.usage.spent(&v.budget));
            } else {
                println!("run {} has no budget", v.run_id);
            }
        });
        Ok(Outcome::Done)
    }
}
