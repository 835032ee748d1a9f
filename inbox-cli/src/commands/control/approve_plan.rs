//! `inbox approve-plan`: approve (or --reject) a plan approval request, with feedback.

use super::*;

/// Approve (or --reject) a plan approval request, with feedback.
#[derive(clap::Args)]
#[command(
    after_help = "Example:\n  inbox --agent lead approve-plan --request msg_06c... --reject --feedback \"tests first\""
)]
pub struct Args {
    /// The plan approval request to answer.
    #[arg(long, value_name = "REQUEST_ID")]
    pub request: String,
    /// Reject the plan instead of approving it.
    #[arg(long)]
    pub reject: bool,
    /// What to change, or why.
    #[arg(long)]
    pub feedback: Option<String>,
    /// The permission mode to work in, e.g. acceptEdits or default.
    #[arg(long, value_name = "MODE")]
    pub permission_mode: Option<String>,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let a = self;
        let payload = PlanApprovalResponsePayload {
            request_id: a.request,
            approved: !a.reject,
            feedback: a.feedback,
            permission_mode: a.permission_mode,
        };
        send(ctx, params(ctx, MessageType::PlanApprovalResponse, json!(payload))?).await?;
        Ok(Outcome::Done)
    }
}
