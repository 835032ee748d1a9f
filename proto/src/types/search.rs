//! Params and results of `messages.search`: ranked full-text search over messages.

use serde::{Deserialize, Serialize};

use super::*;

/// Params of `messages.search`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SearchParams {
    /// The words to find. By default every word must appear (in the subject, summary or
    /// body; `index` also finds `indexing`), and quotes, `-` or `:` are plain characters.
    /// With `syntax: "fts5"` it is an SQLite FTS5 query (`AND`, `OR`, `NOT`, `"phrases"`,
    /// `prefix*`, `NEAR(...)`, `subject:word`).
    pub query: String,
    /// `words` (default) or `fts5`.
    #[serde(default)]
    pub syntax: Option<String>,
    /// Only messages from or to this agent.
    #[serde(default)]
    pub agent: Option<String>,
    /// Only messages of this thread, run, task.
    #[serde(default)]
    pub thread_id: Option<String>,
    /// Only this run.
    #[serde(default)]
    pub run_id: Option<String>,
    /// Only this task.
    #[serde(default)]
    pub task_id: Option<String>,
    /// Only these message kinds.
    #[serde(default)]
    pub kinds: Vec<MessageKind>,
    /// Only messages written at or after this instant (RFC 3339).
    #[serde(default)]
    pub since: Option<String>,
    /// Only messages written before this instant (RFC 3339).
    #[serde(default)]
    pub until: Option<String>,
    /// At most this many hits (default 20, at most 500).
    #[serde(default)]
    pub limit: Option<u32>,
    /// Skip this many of the best hits first (a `next_after` of an earlier page). Ranks
    /// are recomputed on each call, so messages written meanwhile can shift them.
    #[serde(default)]
    pub offset: Option<u32>,
    /// What marks the start and end of a match in snippets (default `**` and `**`).
    #[serde(default)]
    pub mark_open: Option<String>,
    /// Marker put after each match in snippets.
    #[serde(default)]
    pub mark_close: Option<String>,
}

/// One message found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SearchHit {
    /// The message (`msg_…`).
    pub message_id: String,
    /// The thread (`thr_…`).
    pub thread_id: String,
    /// The run (`run_…`).
    pub run_id: String,
    /// The task id, unique within its run.
    pub task_id: String,
    /// The thread's subject.
    pub subject: String,
    /// The from agent.
    pub from_agent: String,
    /// The to agent.
    pub to_agent: String,
    /// Kind.
    pub kind: MessageKind,
    /// One-line summary.
    pub summary: String,
    /// When it was created.
    pub created_at: String,
    /// The event that recorded the change; usable as an `after_event` cursor.
    pub event_id: i64,
    /// bm25 relevance: lower is better (hits come best first).
    pub score: f64,
    /// The best matching passage, with the matches marked.
    pub snippet: String,
}

/// Hits `messages.search` returns when no `limit` is given.
pub const SEARCH_LIMIT_DEFAULT: u32 = 20;

/// Result of `messages.search`, best hits first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SearchResult {
    /// The hits.
    pub hits: Vec<SearchHit>,
    /// The list stopped early, before its `limit`, to keep the reply under
    /// [`crate::MAX_REPLY_BYTES`] (protocol §1.7): continue with `offset` = `next_after`.
    #[serde(default)]
    pub truncated: bool,
    /// Where to continue when `truncated`: the number of hits before the next page.
    #[serde(default)]
    pub next_after: Option<u32>,
}
