//! The flags of `search`.

use clap::Args;
use coord_cli::usage::one_of;
use coord_proto::types::MessageKind;

#[derive(Args)]
pub struct SearchArgs {
    /// The words to find (every one must appear; `index` also finds `indexing`).
    #[arg(required = true, value_name = "WORDS")]
    pub query: Vec<String>,
    /// Take the words as an SQLite FTS5 query: AND, OR, NOT, "phrases", prefix*,
    /// subject:word.
    #[arg(long)]
    pub fts: bool,
    /// Only this thread.
    #[arg(long, value_name = "THREAD_ID")]
    pub thread: Option<String>,
    /// Only this run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: Option<String>,
    /// Only this task.
    #[arg(long, value_name = "TASK_ID")]
    pub task: Option<String>,
    /// Only these message kinds, comma-separated.
    #[arg(long, value_delimiter = ',', value_parser = one_of(MessageKind::ALL))]
    pub kind: Vec<MessageKind>,
    /// Only messages written at or after this instant (RFC 3339, e.g. 2026-11-23T09:00:00Z).
    #[arg(long, value_name = "TIME")]
    pub since: Option<String>,
    /// Only messages written before this instant (RFC 3339).
    #[arg(long, value_name = "TIME")]
    pub until: Option<String>,
    /// At most this many hits (default 20, at most 500).
    #[arg(long)]
    pub limit: Option<u32>,
}
