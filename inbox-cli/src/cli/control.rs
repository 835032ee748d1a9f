//! The flags of team control: typed messages (`control`), open requests (`requests`),
//! answering them (`permit`, `approve-plan`), `idle`, `shutdown`, `plan`, the permission
//! policy (`policy ...`) and progress lines (`progress`).

use std::path::PathBuf;

use clap::{Args, Subcommand};
use coord_proto::types::{IdleReason, Priority, ProgressType};

use super::waits::MAX_TIMEOUT;

#[derive(Args)]
pub struct ControlArgs {
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

#[derive(Args)]
pub struct RequestsArgs {
    /// Requests addressed to this agent (default: to you, --agent, unless --from or --run).
    #[arg(long)]
    pub to: Option<String>,
    /// Requests made by this agent.
    #[arg(long)]
    pub from: Option<String>,
    /// Requests of this run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: Option<String>,
    /// Only these request types, comma-separated.
    #[arg(long = "type", value_name = "TYPE", value_delimiter = ',')]
    pub types: Vec<String>,
    /// One request by id.
    #[arg(long, value_name = "REQUEST_ID")]
    pub request: Option<String>,
    /// Also answered and cancelled requests, newest first.
    #[arg(long)]
    pub all: bool,
    /// At most this many (default 50).
    #[arg(long)]
    pub limit: Option<u32>,
}

#[derive(Args)]
pub struct PermitArgs {
    /// The permission request to answer.
    #[arg(long, value_name = "REQUEST_ID")]
    pub request: String,
    /// Let the tool call run.
    #[arg(long, required_unless_present = "deny", conflicts_with = "deny")]
    pub allow: bool,
    /// Refuse it.
    #[arg(long)]
    pub deny: bool,
    /// Why (the session sees it).
    #[arg(long)]
    pub reason: Option<String>,
    /// Run this input instead (a JSON object that replaces the whole tool input).
    #[arg(long, value_name = "JSON", requires = "allow")]
    pub updated_input: Option<String>,
}

#[derive(Args)]
pub struct ApprovePlanArgs {
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

#[derive(Args)]
pub struct IdleArgs {
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

#[derive(Args)]
pub struct ShutdownArgs {
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

#[derive(Args)]
pub struct PlanArgs {
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

#[derive(Args)]
pub struct ProgressArgs {
    /// The line.
    pub text: String,
    /// progress (default), log or result.
    #[arg(long = "type", default_value = "progress")]
    pub line_type: ProgressType,
    /// The tool call it belongs to.
    #[arg(long, value_name = "ID")]
    pub tool_use_id: Option<String>,
    /// Extra data: a JSON object.
    #[arg(long, value_name = "JSON")]
    pub meta: Option<String>,
    /// Your task (also $COORD_TASK).
    #[arg(long, value_name = "TASK_ID", env = "COORD_TASK")]
    pub task: Option<String>,
}

#[derive(Subcommand)]
pub enum PolicyCmd {
    /// Print the policy: its lead, timeout and gated rules.
    #[command(after_help = "Example:\n  inbox --agent lead policy show --json")]
    Show,
    /// Gate a tool pattern (Claude Code rule syntax): Bash(git push*), Write(src/**), mcp__*.
    #[command(after_help = "Example:\n  inbox --agent lead policy gate 'Bash(git push*)' --for 'w*' --approver lead")]
    Gate(GateArgs),
    /// Remove every rule with this pattern.
    #[command(after_help = "Example:\n  inbox --agent lead policy ungate 'Bash(git push*)'")]
    Ungate(UngateArgs),
    /// Set the lead: the default approver, and who idle notifications go to.
    #[command(after_help = "Example:\n  inbox --agent lead policy lead lead")]
    Lead(LeadArgs),
    /// Seconds a gated hook waits for the answer before the session's own permission flow decides.
    #[command(after_help = "Example:\n  inbox --agent lead policy timeout 300")]
    Timeout(TimeoutArgs),
    /// Would this tool call be gated? Exit 0 gated, 10 not gated.
    #[command(
        after_help = "Example:\n  inbox --agent w1 policy check --tool Bash --input '{\"command\":\"git push\"}'"
    )]
    Check(PolicyCheckArgs),
    /// Remove every rule (the lead and timeout stay).
    #[command(after_help = "Example:\n  inbox --agent lead policy clear")]
    Clear,
}

#[derive(Args)]
pub struct GateArgs {
    /// The pattern, e.g. 'Bash(git push*)'.
    pub rule: String,
    /// Only for these agents (globs, repeatable; default every agent).
    #[arg(long = "for", value_name = "AGENT")]
    pub agents: Vec<String>,
    /// Who approves (default: the lead).
    #[arg(long)]
    pub approver: Option<String>,
}

#[derive(Args)]
pub struct UngateArgs {
    /// The pattern, as it was gated.
    pub rule: String,
}

#[derive(Args)]
pub struct LeadArgs {
    /// The lead's agent id.
    pub name: String,
}

#[derive(Args)]
pub struct TimeoutArgs {
    /// Seconds, 1 to 3600.
    #[arg(value_parser = clap::value_parser!(u64).range(1..=coord_proto::types::MAX_PERMISSION_TIMEOUT))]
    pub seconds: u64,
}

#[derive(Args)]
pub struct PolicyCheckArgs {
    /// The tool name, e.g. Bash.
    #[arg(long)]
    pub tool: String,
    /// The tool input, a JSON object, e.g. '{"command":"git push"}'.
    #[arg(long, value_name = "JSON", default_value = "{}")]
    pub input: String,
    /// The session's directory, for path rules (default: the current directory).
    #[arg(long, value_name = "PATH")]
    pub cwd: Option<PathBuf>,
}
