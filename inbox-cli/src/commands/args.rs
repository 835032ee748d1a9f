//! Flags that several commands share (each command's own flags are in its file): the
//! message content most worker commands carry, a lease, a finish, a message of your mail,
//! a mailbox, and the longest wait.

use std::path::PathBuf;

use clap::Args;
use coord_proto::types::MessageKind;

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

/// The lease of claim and renew.
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

/// What done and fail take.
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

/// A message of your mail (read, ack, withdraw).
#[derive(Args)]
pub struct MailMsgArgs {
    /// The message.
    #[arg(long, value_name = "MESSAGE_ID")]
    pub message: String,
}

/// A session's mailbox (check, pending).
#[derive(Args)]
pub struct MailboxArgs {
    /// A task's mailbox (also $COORD_TASK). With --agent, both; an agent's mailbox also
    /// holds the mail of the tasks it is running.
    #[arg(long, value_name = "TASK_ID", env = "COORD_TASK")]
    pub task: Option<String>,
}

/// Longest wait accepted (ten years); no timeout means wait forever.
pub const MAX_TIMEOUT: u64 = 315_360_000;

/// `--message-kind a|b` of the waits.
pub fn parse_kinds(s: &str) -> Result<Vec<MessageKind>, String> {
    s.split('|').filter(|k| !k.is_empty()).map(str::parse).collect()
}
