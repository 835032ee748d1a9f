//! The flags of the agents layer: identities (`agent ...`), mail with read/ack,
//! file-scope reservations, the status summary, and the git guard (`hooks ...`).

use std::path::PathBuf;

use clap::{Args, Subcommand};
use coord_proto::types::{AgentStatus, MailState};

#[derive(Subcommand)]
pub enum AgentCmd {
    /// Register an agent id (fails if it exists, unless --force-update).
    Register(RegisterArgs),
    /// List agents, sorted by id.
    List(AgentListArgs),
    /// Show one agent (--agent ID).
    Show,
    /// Say the agent (--agent ID) is alive, optionally with a new status.
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
    #[arg(long)]
    pub role: Option<String>,
    #[arg(long)]
    pub status: Option<AgentStatus>,
    /// Include agents that were seen but never registered.
    #[arg(long)]
    pub all: bool,
}

#[derive(Args)]
pub struct HeartbeatArgs {
    /// idle, busy, waiting or offline.
    #[arg(long)]
    pub status: Option<AgentStatus>,
}

#[derive(Args)]
pub struct MailArgs {
    /// Only mail in this state: unread, read or acked.
    #[arg(long)]
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
    #[arg(long, value_name = "MESSAGE_ID")]
    pub message: String,
}

#[derive(Args)]
pub struct ReserveArgs {
    /// A path or glob relative to the project root (`*`, `?`, `[..]`, `**`); a directory
    /// name covers everything below it.
    #[arg(long, value_name = "GLOB")]
    pub scope: String,
    /// The task the reservation serves (required).
    #[arg(long, value_name = "TASK_ID")]
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
    #[arg(long, value_name = "GLOB")]
    pub scope: String,
}

#[derive(Args)]
pub struct ReservationsArgs {
    #[arg(long, value_name = "TASK_ID")]
    pub task: Option<String>,
    /// Only reservations covering this file.
    #[arg(long, value_name = "FILE")]
    pub path: Option<String>,
    /// Include released and expired reservations (the history).
    #[arg(long)]
    pub all: bool,
    #[arg(long)]
    pub limit: Option<u32>,
}

#[derive(Args)]
pub struct StatusArgs {
    #[arg(long, value_name = "TASK_ID")]
    pub task: Option<String>,
}

#[derive(Subcommand)]
pub enum HooksCmd {
    /// Install a pre-commit hook refusing commits that touch files under another agent's
    /// active exclusive reservation. The committing agent is $COORD_AGENT. An existing
    /// hook is kept as pre-commit.local and still runs first.
    InstallGit(InstallGitArgs),
    /// What the installed hook runs: check the staged files against reservations.
    PreCommit,
}

#[derive(Args)]
pub struct InstallGitArgs {
    /// The repository (default: the current directory).
    #[arg(long, value_name = "PATH")]
    pub repo: Option<PathBuf>,
}
