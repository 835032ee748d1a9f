//! `inbox control`: send one typed control message (any type; known types' payloads are
//! checked).

use super::*;

/// Send one typed control message (any type; known types' payloads are checked).
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  inbox --agent lead control --type mode_set_request --to backend --payload '{\"mode\":\"plan\"}'\n  inbox --agent w1 control --type permission_request --run R1 --payload '{\"request_id\":\"p1\",\"tool_name\":\"Bash\",\"input\":{\"command\":\"git push\"}}'"
)]
pub struct Args {
    /// The message type: permission_request, permission_response, idle_notification,
    /// task_assignment, shutdown_request, shutdown_approved, shutdown_rejected,
    /// mode_set_request, team_permission_update, plan_approval_request,
    /// plan_approval_response, or any other name (passed through untouched).
    #[arg(long = "type", value_name = "TYPE")]
    pub msg_type: String,
    /// The recipient (default: a response goes to the requester; otherwise the --run's
    /// creator, else the policy's lead).
    #[arg(long)]
    pub to: Option<String>,
    /// The payload: a JSON object, stored as given.
    #[arg(long, value_name = "JSON", default_value = "{}")]
    pub payload: String,
    /// One-line summary (default: made from the type and payload).
    #[arg(long)]
    pub summary: Option<String>,
    /// Add a notice to this open thread instead of opening one.
    #[arg(long, value_name = "THREAD_ID")]
    pub thread: Option<String>,
    /// The run the message is about (a request's lead is its creator).
    #[arg(long, value_name = "RUN_ID")]
    pub run: Option<String>,
    /// The task the message is about.
    #[arg(long, value_name = "TASK_ID")]
    pub task: Option<String>,
    /// urgent, high, normal (default) or low.
    #[arg(long)]
    pub priority: Option<Priority>,
    /// Your own message id (msg_ + 26 base32hex characters): sending it again is harmless.
    #[arg(long, value_name = "ID")]
    pub message_id: Option<String>,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let a = self;
        let mut p = params(ctx, MessageType::from_name(&a.msg_type), json_object("payload", &a.payload)?)?;
        (p.to, p.summary, p.thread_id, p.run_id, p.task_id, p.priority, p.message_id) =
            (a.to, a.summary, a.thread, a.run, a.task, a.priority, a.message_id);
        send(ctx, p).await?;
        Ok(Outcome::Done)
    }
}
