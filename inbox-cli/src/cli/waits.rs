//! The flags of the waits, `watch` and `wait-reply`, and the longest wait accepted.

use clap::Args;
use coord_cli::usage::one_of;
use coord_proto::types::{MessageKind, ThreadStatus};

/// Longest wait accepted (ten years); no timeout means wait forever.
pub const MAX_TIMEOUT: u64 = 315_360_000;

#[derive(Args)]
pub struct WatchArgs {
    /// Only threads whose status after the event is one of these, comma-separated.
    #[arg(long, value_delimiter = ',', value_parser = one_of(ThreadStatus::ALL))]
    pub status: Vec<ThreadStatus>,
    /// Only this thread.
    #[arg(long, value_name = "THREAD_ID")]
    pub thread: Option<String>,
    /// Only this run: its threads' events, and its task, merge and run events.
    #[arg(long, value_name = "RUN_ID")]
    pub run: Option<String>,
    /// Start after this event id (default: now). Events already stored after it are
    /// delivered first.
    #[arg(long)]
    pub after_event: Option<i64>,
    /// Start after the event that recorded this message.
    #[arg(long, value_name = "MESSAGE_ID")]
    pub after_message: Option<String>,
    /// Give up after this many seconds (exit 10 when nothing came).
    #[arg(long, value_parser = clap::value_parser!(u64).range(0..=MAX_TIMEOUT))]
    pub timeout_seconds: Option<u64>,
    /// Keep printing events (one line each) instead of returning after the first.
    #[arg(long)]
    pub follow: bool,
    /// With --follow: stop after this many events.
    #[arg(long, requires = "follow")]
    pub count: Option<u64>,
    /// Only typed messages of these types, comma-separated (`*`: any type), e.g.
    /// permission_request,idle_notification.
    #[arg(long = "type", value_name = "TYPE", value_delimiter = ',')]
    pub types: Vec<String>,
    /// Only messages addressed to this agent.
    #[arg(long, value_name = "AGENT")]
    pub to: Option<String>,
    /// Follow progress lines from tool subprocesses instead of events (lossy, live).
    #[arg(long, conflicts_with_all = ["status", "thread", "run", "after_event", "after_message", "types", "to"])]
    pub progress: bool,
    /// With --progress: only lines of this agent.
    #[arg(long, value_name = "AGENT", requires = "progress")]
    pub of: Option<String>,
    /// With --progress: start with the recent lines the daemon still holds.
    #[arg(long, requires = "progress")]
    pub recent: bool,
}

#[derive(Args)]
pub struct WaitReplyArgs {
    /// The thread you are blocked on.
    #[arg(long, value_name = "THREAD_ID")]
    pub thread: String,
    /// Wait for a message after this one.
    #[arg(long, value_name = "MESSAGE_ID")]
    pub after_message: Option<String>,
    /// Wait for a message after this event id (use the event_id your update returned).
    #[arg(long)]
    pub after_event: Option<i64>,
    /// Message kinds that count as a reply, comma- or |-separated (default: answer,control,result).
    #[arg(long, value_delimiter = ',', value_parser = parse_kinds)]
    pub kinds: Vec<Vec<MessageKind>>,
    /// Give up after this many seconds (exit 10).
    #[arg(long, value_parser = clap::value_parser!(u64).range(0..=MAX_TIMEOUT))]
    pub timeout_seconds: Option<u64>,
}

fn parse_kinds(s: &str) -> Result<Vec<MessageKind>, String> {
    s.split('|').filter(|k| !k.is_empty()).map(str::parse).collect()
}
