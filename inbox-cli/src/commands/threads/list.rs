//! `inbox list`: list threads with filters, most recently active first.

use super::*;

/// List threads with filters, most recently active first.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  inbox list --status blocked,in_progress --run R1")]
pub struct Args {
    /// Statuses to include, comma-separated (default: all).
    #[arg(long, value_delimiter = ',', value_parser = one_of(ThreadStatus::ALL))]
    pub status: Vec<ThreadStatus>,
    /// Only threads this agent created.
    #[arg(long, value_name = "AGENT")]
    pub created_by: Option<String>,
    /// Only threads assigned to this agent.
    #[arg(long, value_name = "AGENT")]
    pub assigned_to: Option<String>,
    /// Only threads of this run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: Option<String>,
    /// Only threads of this task.
    #[arg(long, value_name = "TASK_ID")]
    pub task: Option<String>,
    /// At most this many threads (default 50).
    #[arg(long)]
    pub limit: Option<u32>,
}

impl Command for Args {
    fn read_only(&self) -> bool {
        true
    }

    async fn run(self, ctx: &Ctx) -> Res {
        let a = self;
        let p = ListParams {
            agent: ctx.agent.clone(),
            statuses: a.status,
            created_by: a.created_by,
            assigned_to: a.assigned_to,
            run_id: a.run,
            task_id: a.task,
            limit: a.limit,
            after: None,
        };
        let c = ctx.client().await?;
        threads(ctx, &coord_client::pages::all(p, |p| c.list(p)).await?);
        Ok(Outcome::Done)
    }
}
