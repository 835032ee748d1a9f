//! `inbox idle`: tell the lead you went idle.

use super::*;

/// Tell the lead you went idle: available, interrupted or failed, and what you finished.
#[derive(clap::Args)]
#[command(
    after_help = "Example:\n  inbox --agent w1 idle --task T1 --completed-status resolved --summary \"schema merged\""
)]
pub struct Args {
    /// available (default), interrupted or failed.
    #[arg(long, default_value = "available")]
    pub reason: IdleReason,
    /// What you did, in one line.
    #[arg(long)]
    pub summary: Option<String>,
    /// The task you finished (also $COORD_TASK).
    #[arg(long, value_name = "TASK_ID", env = "COORD_TASK")]
    pub task: Option<String>,
    /// How it ended: resolved, blocked or failed.
    #[arg(long, value_name = "STATUS")]
    pub completed_status: Option<String>,
    /// Why it failed (with --reason failed).
    #[arg(long)]
    pub failure_reason: Option<String>,
    /// The lead to tell (default: the --run's creator, else the policy's lead).
    #[arg(long)]
    pub to: Option<String>,
    /// Your run (also $COORD_RUN): its creator is the lead told.
    #[arg(long, value_name = "RUN_ID", env = "COORD_RUN")]
    pub run: Option<String>,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let a = self;
        let payload = IdleNotificationPayload {
            idle_reason: a.reason,
            summary: a.summary,
            completed_task_id: a.task.clone(),
            completed_status: a.completed_status,
            failure_reason: a.failure_reason,
        };
        let mut p = params(ctx, MessageType::IdleNotification, json!(payload))?;
        (p.to, p.run_id, p.task_id) = (a.to, a.run, a.task);
        send(ctx, p).await?;
        Ok(Outcome::Done)
    }
}
