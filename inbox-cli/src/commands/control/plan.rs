//! `inbox plan`: ask the lead to approve your plan (--wait for the answer).

use super::*;

/// Ask the lead to approve your plan (--wait for the answer).
#[derive(clap::Args)]
#[command(after_help = "Example:\n  inbox --agent w1 plan --plan-file plan.md --run R1 --task T1 --wait")]
pub struct Args {
    /// The plan, as text.
    #[arg(long, required_unless_present = "plan_file", conflicts_with = "plan_file")]
    pub plan: Option<String>,
    /// Read the plan from a file (`-` for stdin).
    #[arg(long, value_name = "PATH")]
    pub plan_file: Option<PathBuf>,
    /// The lead (default: the --run's creator, else the policy's lead).
    #[arg(long)]
    pub to: Option<String>,
    /// Your run (also $COORD_RUN).
    #[arg(long, value_name = "RUN_ID", env = "COORD_RUN")]
    pub run: Option<String>,
    /// Your task (also $COORD_TASK).
    #[arg(long, value_name = "TASK_ID", env = "COORD_TASK")]
    pub task: Option<String>,
    /// Wait for the answer (exit 0 approved, 20 rejected, 10 no answer in time).
    #[arg(long)]
    pub wait: bool,
    /// With --wait: give up after this many seconds (exit 10).
    #[arg(long, requires = "wait", value_parser = clap::value_parser!(u64).range(0..=MAX_TIMEOUT))]
    pub timeout_seconds: Option<u64>,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let a = self;
        let plan = body(a.plan, a.plan_file.as_deref())?.unwrap_or_default();
        let payload = PlanApprovalRequestPayload { request_id: String::new(), plan };
        let mut p = params(ctx, MessageType::PlanApprovalRequest, json!(payload))?;
        (p.to, p.run_id, p.task_id) = (a.to, a.run, a.task);
        if !a.wait {
            send(ctx, p).await?;
            return Ok(Outcome::Done);
        }
        let r = ctx.client().await?.control_send(p).await?;
        let approved = |m: &Message| m.payload_json.get("approved") == Some(&Value::Bool(true));
        wait_answer(ctx, &r, &[MessageType::PlanApprovalResponse], a.timeout_seconds, approved).await
    }
}
