//! The flags of the worker protocol: init, send, fetch, claim, renew, update, reply, done,
//! fail, cancel, list and show, and the message content most of them carry.

use std::path::PathBuf;

use clap::Args;
use coord_cli::usage::one_of;
use coord_proto::types::{MessageKind, Priority, ThreadStatus};

/// Message content shared by send, update, reply, done and fail.
#[derive(Args)]
pub struct Content {
    /// One-line summary (required).
    #[arg(long)]
    pub summary: String,
    /// Message body (text; see --body-file for a file).
    #[arg(long, conflicts_with = "body_file")]
    pub body: Option<String>,
    /// Read the body from a file (`-` for stdin).
    #[arg(long, value_name = "PATH")]
    pub body_file: Option<PathBuf>,
    /// Structured payload: a JSON object.
    #[arg(long, value_name = "JSON")]
    pub payload_json: Option<String>,
    #[command(flatten)]
    pub artifacts: ArtifactArgs,
}

/// Artifacts: the i-th --artifact-kind and --artifact-metadata-json go with the i-th
/// --artifact; a single one applies to every artifact.
#[derive(Args)]
pub struct ArtifactArgs {
    /// Attach a file or other reference (repeatable).
    #[arg(long = "artifact", value_name = "PATH")]
    pub paths: Vec<String>,
    /// Kind of the artifact, e.g. report, log, patch (default: file).
    #[arg(long = "artifact-kind", value_name = "KIND")]
    pub kinds: Vec<String>,
    /// Metadata of the artifact: a JSON object.
    #[arg(long = "artifact-metadata-json", value_name = "JSON")]
    pub metadata: Vec<String>,
}

#[derive(Args)]
pub struct InitArgs {
    /// Require registration: sends from or to unregistered agents fail (unknown_sender,
    /// unknown_recipient). Stored in the database.
    #[arg(long, conflicts_with = "no_strict_agents")]
    pub strict_agents: bool,
    /// Accept unregistered agents again (they are recorded when first seen).
    #[arg(long)]
    pub no_strict_agents: bool,
    /// Require credentials: every write made as an agent then needs that agent's secret
    /// (COORD_AGENT_SECRET, from `inbox agent register`). Stored in the database.
    #[arg(long, conflicts_with = "no_require_credentials")]
    pub require_credentials: bool,
    /// Stop requiring credentials (needs the lead's or an admin's secret while they are
    /// required).
    #[arg(long)]
    pub no_require_credentials: bool,
    /// The project's lead: with credentials required, only the lead and the admins may
    /// change the policy, these settings and the roster. Needed to require credentials;
    /// changing it later needs the lead's or an admin's secret. `--lead ''` removes it.
    #[arg(long, value_name = "AGENT")]
    pub lead: Option<String>,
    /// An admin, who shares the lead's authority (repeatable; replaces the list).
    #[arg(long = "admin", value_name = "AGENT", conflicts_with = "no_admins")]
    pub admins: Vec<String>,
    /// Remove every admin.
    #[arg(long)]
    pub no_admins: bool,
}

#[derive(Args)]
pub struct SendArgs {
    /// Sender (default: --agent).
    #[arg(long)]
    pub from: Option<String>,
    /// Recipient agent, or `broadcast` (every registered agent).
    #[arg(long, required_unless_present_any = ["to_task", "to_peer"], conflicts_with_all = ["to_task", "to_peer"])]
    pub to: Option<String>,
    /// Send to a task: whoever runs it gets the message (kept until the task starts).
    #[arg(long, value_name = "TASK_ID", conflicts_with = "to_peer")]
    pub to_task: Option<String>,
    /// Send to the peer(s) linked to your task (--task, or $COORD_TASK).
    #[arg(long)]
    pub to_peer: bool,
    /// A queued message not delivered within this many seconds expires.
    #[arg(long, value_name = "SECONDS")]
    pub expires_in: Option<u64>,
    /// Subject of a new thread (default: the summary).
    #[arg(long)]
    pub subject: Option<String>,
    /// Append to this thread instead of creating one.
    #[arg(long, value_name = "THREAD_ID")]
    pub thread: Option<String>,
    /// Run id the thread belongs to.
    #[arg(long, value_name = "RUN_ID")]
    pub run: Option<String>,
    /// Task id the thread carries.
    #[arg(long, value_name = "TASK_ID")]
    pub task: Option<String>,
    /// Message kind (default: task for a new thread, progress otherwise).
    #[arg(long, value_parser = one_of(MessageKind::ALL))]
    pub kind: Option<MessageKind>,
    /// Priority (default: the thread's; a new thread's is normal). Urgent mail reaches a
    /// session first and holds its Stop.
    #[arg(long, value_parser = one_of(Priority::ALL))]
    pub priority: Option<Priority>,
    /// Mail category: HANDOFF, BLOCKED, DECISION or INFO (needs --task). HANDOFF and
    /// BLOCKED ask every recipient to ack. `--to broadcast` reaches every registered agent.
    #[arg(long, value_name = "CATEGORY")]
    pub category: Option<String>,
    /// Ask every recipient to ack the message (`inbox ack`).
    #[arg(long, conflicts_with = "no_ack")]
    pub requires_ack: bool,
    /// Do not ask for an ack, even for HANDOFF or BLOCKED.
    #[arg(long)]
    pub no_ack: bool,
    #[command(flatten)]
    pub content: Content,
}

#[derive(Args)]
pub struct FetchArgs {
    /// Statuses to include, comma-separated (default: pending).
    #[arg(long, value_delimiter = ',', value_parser = one_of(ThreadStatus::ALL))]
    pub status: Vec<ThreadStatus>,
    /// At most this many threads (default 50).
    #[arg(long)]
    pub limit: Option<u32>,
    /// Only threads with messages to you that you have not read.
    #[arg(long)]
    pub unread: bool,
}

#[derive(Args)]
pub struct LeaseArgs {
    /// The thread.
    #[arg(long, value_name = "THREAD_ID")]
    pub thread: String,
    /// Lease duration in seconds (default 900).
    #[arg(long)]
    pub lease_seconds: Option<u64>,
    /// With renew: refuse unless this is the current lease's token.
    #[arg(long)]
    pub lease_token: Option<String>,
}

#[derive(Args)]
pub struct UpdateArgs {
    /// The thread.
    #[arg(long, value_name = "THREAD_ID")]
    pub thread: String,
    /// in_progress (default) or blocked.
    #[arg(long, value_parser = one_of(ThreadStatus::ALL))]
    pub status: Option<ThreadStatus>,
    /// Refuse unless this is the current lease's token (fences off stale processes).
    #[arg(long)]
    pub lease_token: Option<String>,
    #[command(flatten)]
    pub content: Content,
}

#[derive(Args)]
pub struct ReplyArgs {
    /// Sender (default: --agent).
    #[arg(long)]
    pub from: Option<String>,
    /// Recipient (default: the thread's assignee, or its creator when the assignee replies).
    #[arg(long)]
    pub to: Option<String>,
    /// The thread.
    #[arg(long, value_name = "THREAD_ID")]
    pub thread: String,
    /// The reply's kind (default: answer).
    #[arg(long, value_parser = one_of(MessageKind::ALL))]
    pub kind: Option<MessageKind>,
    #[command(flatten)]
    pub content: Content,
}

#[derive(Args)]
pub struct FinishArgs {
    /// The thread.
    #[arg(long, value_name = "THREAD_ID")]
    pub thread: String,
    /// Refuse unless this is the current lease's token.
    #[arg(long)]
    pub lease_token: Option<String>,
    #[command(flatten)]
    pub content: Content,
}

#[derive(Args)]
pub struct CancelArgs {
    /// The thread.
    #[arg(long, value_name = "THREAD_ID")]
    pub thread: String,
    /// Why the thread is cancelled.
    #[arg(long)]
    pub reason: String,
    #[command(flatten)]
    pub artifacts: ArtifactArgs,
}

#[derive(Args)]
pub struct ListArgs {
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

#[derive(Args)]
pub struct ShowArgs {
    /// The thread.
    #[arg(long, value_name = "THREAD_ID")]
    pub thread: String,
}
