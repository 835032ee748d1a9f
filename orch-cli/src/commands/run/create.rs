//! `orch run create`: a new run, the unit of a goal's tasks.

use super::prelude::*;

/// Create a run.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  orch run create --goal \"Blog MVP\" --id R1 --auto-merge --auto-retry 1\n  orch run create --goal \"Blog MVP\" --id R1 --auto-merge --verify 'cargo test'   # then: orch merge-queue --run R1\n  orch run create --goal \"Blog MVP\" --max-cost-usd 20"
)]
pub struct Args {
    /// What the run is for.
    #[arg(long)]
    pub goal: String,
    /// Run id (default: R<n>).
    #[arg(long)]
    pub id: Option<String>,
    /// The leader creating it (default: leader).
    #[arg(long, value_name = "AGENT")]
    pub created_by: Option<String>,
    /// Retry each failed task automatically up to N times.
    #[arg(long, value_name = "N")]
    pub auto_retry: Option<u32>,
    /// Merge each code task into the integration branch as soon as it is done (default:
    /// `orch merge`).
    #[arg(long)]
    pub auto_merge: bool,
    /// A command every merge must pass before it lands (`sh -c`, in a scratch worktree of
    /// the merge result), run by `orch merge-queue`.
    #[arg(long, value_name = "COMMAND")]
    pub verify: Option<String>,
    /// Merge a done code task only once a reviewer approved it (`orch review approve`).
    #[arg(long)]
    pub require_approval: bool,
    /// How many times the merge queue sends a task back to its worker before it fails it
    /// (default 2).
    #[arg(long, value_name = "N")]
    pub merge_retries: Option<u32>,
    /// Its budget in US dollars (`orch run budget`): at it, the launch bridge starts and
    /// dispatches nothing more.
    #[arg(long, value_parser = parse_dollars)]
    pub max_cost_usd: Option<f64>,
    /// Its budget in tokens (input, output, cache reads and writes).
    #[arg(long, value_parser = clap::value_parser!(i64).range(1..))]
    pub max_tokens: Option<i64>,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let p = RunCreateParams {
            run_id: self.id,
            goal: self.goal,
            created_by: self.created_by,
            auto_retry: self.auto_retry,
            auto_merge: self.auto_merge,
            verify: self.verify,
            require_approval: self.require_approval,
            merge_retries: self.merge_retries,
        };
        let v = ctx.client().await?.run_create(p).await?;
        let mut out = serde_json::to_value(&v).unwrap_or_default();
        let budget = match (self.max_cost_usd, self.max_tokens) {
            (None, None) => None,
            (c, t) => Some(super::budget::set(ctx, v.run.run_id.clone(), c, t).await?),
        };
        if let Some(b) = &budget {
            out["budget"] = serde_json::to_value(b.budget).unwrap_or_default();
        }
        ctx.print(&out, || {
            println!("created run {} [{}]: {}", v.run.run_id, v.run.status, v.run.goal);
            if let Some(b) = &budget {
                println!("budget: {}", b.usage.spent(&b.budget));
            }
        });
        Ok(Outcome::Done)
    }
}
