//! The flags of the agents layer: identities (`agent ...`), mail with read/ack,
//! file-scope reservations and the status summary.

use clap::{Args, Subcommand};
use coord_cli::usage::one_of;
use coord_proto::types::{AgentStatus, MailState};

#[derive(Subcommand)]
pub enum AgentCmd {
    /// Register an agent id (fails if it exists, unless --force-update).
    #[command(after_help = "Example:\n  inbox agent register --name agent-ui-1 --role ui")]
    Register(RegisterArgs),
    /// List agents, sorted by id.
    #[command(
        after_help = "Examples:\n  inbox agent list                 # registered agents and those only seen at work\n  inbox agent list --registered --status busy"
    )]
    List(AgentListArgs),
    /// Show one agent (--agent ID).
    #[command(after_help = "Example:\n  inbox agent show --agent agent-ui-1")]
    Show,
    /// Say the agent (--agent ID) is alive, optionally with a new status.
    #[command(after_help = "Example:\n  inbox agent heartbeat --agent agent-ui-1 --status busy")]
    Heartbeat(HeartbeatArgs),
}

#[derive(Args)]
pub struct RegisterArgs {
    /// The agent id: lowercase letters and digits in hyphen-joined groups, 3 to 48 long.
    #[arg(long, value_name = "ID")]
    pub name: String,
    /// The agent's role, e.g. ui, backend, reviewer.
    #[arg(long)]
    pub role: String,
    /// A display name (default: the id).
    #[arg(long, value_name = "TEXT")]
    pub display: Option<String>,
    /// Update the display name and role of an existing agent (never renames).
    #[arg(long)]
    pub force_update: bool,
    /// With --force-update: issue a new secret; the old one stops working.
    #[arg(long, requires = "force_update")]
    pub rotate_secret: bool,
}

#[derive(Args)]
pub struct AgentListArgs {
    /// Only agents with this role.
    #[arg(long)]
    pub role: Option<String>,
    /// Only agents in this status.
    #[arg(long, value_parser = one_of(AgentStatus::ALL))]
    pub status: Option<AgentStatus>,
    /// Only registered agents (by default the list also shows agents that wrote or were
    /// written to without registering, marked unregistered).
    #[arg(long)]
    pub registered: bool,
    /// Accepted for older scripts: unregistered agents are listed by default now.
    #[arg(long, hide = true, conflicts_with = "registered")]
    pub all: bool,
}

#[derive(Args)]
pub struct HeartbeatArgs {
    /// The agent's new status.
    #[arg(long, value_parser = one_of(AgentStatus::ALL))]
    pub status: Option<AgentStatus>,
}

#[derive(Args)]
pub struct MailArgs {
    /// Only mail in this read state (withdrawn mail is in none).
    #[arg(long, value_parser = one_of(MailState::ALL))]
    pub state: Option<MailState>,
    /// Only mail about this task.
    #[arg(long, value_name = "TASK_ID")]
    pub task: Option<String>,
    /// At most this many (default 50, at most 500).
    #[arg(long)]
    pub limit: Option<u32>,
}

#[derive(Args)]
pub struct MailMsgArgs {
    /// The message.
    #[arg(long, value_name = "MESSAGE_ID")]
    pub message: String,
}

#[derive(Args)]
pub struct ReserveArgs {
    /// A path or glob relative to the project root (`*`, `?`, `[..]`, `**`); a directory
    /// name covers everything below it.
    #[arg(long, value_name = "GLOB")]
    pub scope: String,
    /// The task the reservation serves (required; also $COORD_TASK).
    #[arg(long, value_name = "TASK_ID", env = "COORD_TASK")]
    pub task: Option<String>,
    /// Minutes until it expires: 5 to 1440 (default 120).
    #[arg(long, value_name = "MINUTES")]
    pub ttl: Option<u32>,
    /// Shared: coexists with other shared reservations, never with an exclusive one.
    #[arg(long)]
    pub shared: bool,
    /// Take over overlapping reservations that have expired (bumps the generation).
    #[arg(long)]
    pub takeover_stale: bool,
}

#[derive(Args)]
pub struct ReleaseArgs {
    /// The scope, exactly as reserved.
    #[arg(long, value_name = "GLOB")]
    pub scope: String,
}

#[derive(Args)]
pub struct ReservationsArgs {
    /// Only reservations for this task.
    #[arg(long, value_name = "TASK_ID")]
    pub task: Option<String>,
    /// Only reservations covering this file.
    #[arg(long, value_name = "FILE")]
    pub path: Option<String>,
    /// Include released and expired reservations (the history).
    #[arg(long)]
    pub all: bool,
    /// At most this many (default 50).
    #[arg(long)]
    pub limit: Option<u32>,
}

#[derive(Args)]
pub struct StatusArgs {
    /// Only this task's reservations and mail.
    #[arg(long, value_name = "TASK_ID")]
    pub task: Option<String>,
}
