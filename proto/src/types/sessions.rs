//! Entities, params and results of the session mailbox: delivering queued mail into
//! running agent sessions (check, pending, reminders), withdrawal, and linked peer tasks.

use serde::{Deserialize, Serialize};

use super::*;

/// Prefix of the recipient name of mail addressed to a task rather than an agent.
pub const TASK_RECIPIENT_PREFIX: &str = "task:";

string_enum!(
    /// Where a message stands for one recipient: queued, then delivered (pulled into the
    /// session by `mail.check`), then read, then acked; or it ended expired (its
    /// `expires_at` passed while queued) or withdrawn (the sender took it back).
    Delivery {
        /// Waiting for the recipient's session to take it.
        Queued = "queued",
        /// `mail.check` delivered it into the session.
        Delivered = "delivered",
        /// The recipient read it.
        Read = "read",
        /// The recipient acked it.
        Acked = "acked",
        /// Still queued when its `expires_at` passed.
        Expired = "expired",
        /// The sender withdrew it before delivery.
        Withdrawn = "withdrawn",
    }
);

/// Params of `mail.check`: deliver the queued mail of an agent and/or a task. An agent's
/// mailbox also holds the mail addressed to the tasks it is running (threads it holds).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(extend("anyOf" = [
    {"required": ["agent"], "properties": {"agent": {"type": "string"}}},
    {"required": ["task_id"], "properties": {"task_id": {"type": "string"}}}
]))]
pub struct CheckParams {
    /// The agent whose mailbox this is.
    #[serde(default)]
    pub agent: Option<String>,
    /// The task whose mailbox this is.
    #[serde(default)]
    pub task_id: Option<String>,
    /// Only deliver these priorities (empty: all).
    #[serde(default)]
    pub priorities: Vec<Priority>,
    /// Only these messages (empty: all queued): a client that handed a message to the
    /// agent by another path (a wait) marks the mailbox's copies of it delivered, so that
    /// no reminder or Stop hook announces it again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub message_ids: Vec<String>,
}

/// Result of `mail.check`: the messages delivered now (urgent first, then oldest first).
/// A second check returns none of them again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CheckResult {
    /// The messages.
    pub messages: Vec<MailItem>,
    /// The event that recorded the change; usable as an `after_event` cursor.
    pub event_id: Option<i64>,
    /// Delivery stopped early to keep the reply under [`crate::MAX_REPLY_BYTES`]
    /// (protocol §1.7): the rest stay queued, and the next check delivers them.
    #[serde(default)]
    pub truncated: bool,
}

/// Params of `mail.pending`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(extend("anyOf" = [
    {"required": ["agent"], "properties": {"agent": {"type": "string"}}},
    {"required": ["task_id"], "properties": {"task_id": {"type": "string"}}}
]))]
pub struct PendingParams {
    /// The agent whose mailbox this is.
    #[serde(default)]
    pub agent: Option<String>,
    /// The task whose mailbox this is.
    #[serde(default)]
    pub task_id: Option<String>,
    /// Also return the queued messages not reminded of before, and mark them reminded
    /// (what a hook uses to remind once per message).
    #[serde(default)]
    pub remind: bool,
}

/// Result of `mail.pending`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PendingResult {
    /// Queued messages (not delivered, expired or withdrawn).
    pub pending: u64,
    /// How many of them are urgent.
    pub urgent: u64,
    /// With `remind`: the queued messages nobody was reminded of yet.
    #[serde(default)]
    pub new: Vec<MailItem>,
    /// `new` stopped early to keep the reply under [`crate::MAX_REPLY_BYTES`] (protocol
    /// §1.7): the rest are not marked reminded, and the next call returns them.
    #[serde(default)]
    pub truncated: bool,
}

/// Result of `mail.withdraw`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WithdrawResult {
    /// The message (`msg_…`).
    pub message_id: String,
    /// The recipients whose queued copy was withdrawn.
    pub recipients: Vec<String>,
    /// The event that recorded the change; usable as an `after_event` cursor.
    pub event_id: i64,
}

/// Params of `peers.link`: two tasks become each other's peer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PeerLinkParams {
    /// The task to link (to `peer_task_id`).
    pub task_id: String,
    /// The task to link to.
    pub peer_task_id: String,
}

/// Params of `peers.list`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PeerListParams {
    /// The task whose peers to list.
    pub task_id: String,
    /// Only peers after this one (a `next_after` of an earlier page).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
}

/// Result of `peers.link` and `peers.list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PeersResult {
    /// The task id, unique within its run.
    pub task_id: String,
    /// The peers.
    pub peers: Vec<String>,
    /// The event that recorded the change; usable as an `after_event` cursor.
    #[serde(default)]
    pub event_id: Option<i64>,
    /// The list stopped early to keep the reply under [`crate::MAX_REPLY_BYTES`] (protocol
    /// §1.7): continue with `peers.list` and `after` = `next_after`.
    #[serde(default)]
    pub truncated: bool,
    /// Where to continue when `truncated`: the last peer returned.
    #[serde(default)]
    pub next_after: Option<String>,
}

/// Params of `session.installHooks`: write the hooks and agent instructions into a
/// worktree.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(transform = super::require("agent"))]
pub struct InstallHooksParams {
    /// The directory (worktree) to write into; absolute.
    pub dir: String,
    /// The agent the installed hooks act for. Required (`invalid_input` without it).
    #[serde(default)]
    pub agent: Option<String>,
    /// The task the session works on, if any.
    #[serde(default)]
    pub task_id: Option<String>,
    /// The thread the session works on, if any.
    #[serde(default)]
    pub thread_id: Option<String>,
    /// The `inbox` executable the hooks and MCP server run (default: beside coordd).
    #[serde(default)]
    pub inbox_bin: Option<String>,
    /// The run the task belongs to: the hooks pass it on (its creator is the session's lead).
    #[serde(default)]
    pub run_id: Option<String>,
    /// Approve the `coordd` server of `.mcp.json` in `.claude/settings.local.json`
    /// (`enabledMcpjsonServers`), so Claude Code starts it without asking. orch's worktrees
    /// get it; in a person's own checkout it is their choice.
    #[serde(default)]
    pub approve_mcp: bool,
    /// The agent clients to install for: `claude` (`.claude/settings.local.json`,
    /// `.mcp.json`, `CLAUDE.md`), `codex` (`.codex/config.toml`, `.codex/hooks.json`),
    /// `gemini` (`.gemini/settings.json`), `opencode` (`opencode.json`, and its plugin beside
    /// the database); all get the `AGENTS.md` block. Empty: `claude` (what earlier versions installed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clients: Vec<String>,
}

/// The agent clients `session.installHooks` knows.
pub const HOOK_CLIENTS: [&str; 4] = ["claude", "codex", "gemini", "opencode"];

/// Result of `session.installHooks`: the files written or merged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct InstallHooksResult {
    /// The files.
    pub files: Vec<String>,
    /// What was left alone, and why (e.g. a tracked `.mcp.json`).
    #[serde(default)]
    pub notes: Vec<String>,
    /// The clients installed for (`claude`, `codex`, `gemini`, `opencode`).
    #[serde(default)]
    pub clients: Vec<String>,
}
