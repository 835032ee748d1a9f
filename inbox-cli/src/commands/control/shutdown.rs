//! `inbox shutdown`: ask an agent to shut down.

use super::*;

/// Ask an agent to shut down. The session's next hook that reaches the daemon answers
/// (Claude Code: after its current tool, which ends the session; Codex: the same hooks,
/// but Codex runs none while its model polls a command through write_stdin, and none
/// after a command that is still running, so the answer may wait for its Stop hook); an
/// MCP session can answer with `respond`. coord-launch stops the session once approved,
/// or after its --shutdown-grace-seconds unanswered.
/// The request carries the run and task of the thread the agent holds (or --run,
/// --task) and stops only that task's session; it expires after --expires-in seconds
/// (default 300). Once approved, or stopped unanswered by coord-launch, the task's thread
/// is blocked ("worker stopped"), its lease released, and you get an idle notification
/// with reason shutdown.
#[derive(clap::Args)]
#[command(
    after_help = "Example:\n  inbox --agent lead shutdown --to w1 --reason \"run finished\" --wait --timeout-seconds 120"
)]
pub struct Args {
    /// The agent to shut down.
    #[arg(long)]
    pub to: String,
    /// The run of the work to stop (default: that of the thread the agent holds).
    #[arg(long, value_name = "RUN_ID")]
    pub run: Option<String>,
    /// Stop only the session of this task (default: the task of the thread the agent
    /// holds; with none, any session of the agent).
    #[arg(long, value_name = "TASK_ID")]
    pub task: Option<String>,
    /// The request expires after this many seconds unanswered (default 300): it never
    /// stops a later session.
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub expires_in: Option<u64>,
    /// Why (the session sees it when it stops).
    #[arg(long)]
    pub reason: Option<String>,
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
        let payload =
            ShutdownRequestPayload { reason: a.reason, expires_in_seconds: a.expires_in, ..Default::default() };
        let mut p = params(ctx, MessageType::ShutdownRequest, json!(payload))?;
        (p.to, p.run_id, p.task_id) = (Some(a.to), a.run, a.task);
        if !a.wait {
            send(ctx, p).await?;
            return Ok(Outcome::Done);
        }
        let r = ctx.client().await?.control_send(p).await?;
        let answers = [MessageType::ShutdownApproved, MessageType::ShutdownRejected];
        wait_answer(ctx, &r, &answers, a.timeout_seconds, |m| m.msg_type.as_deref() == Some("shutdown_approved")).await
    }
}
