//! The permission policy (`policy.*`) and progress lines from tool subprocesses (`progress.*`).

use super::*;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Default seconds a gated hook waits for the approver.
pub const DEFAULT_PERMISSION_TIMEOUT: u64 = 120;
/// Longest wait a policy may set.
pub const MAX_PERMISSION_TIMEOUT: u64 = 3600;

fn default_timeout() -> u64 {
    DEFAULT_PERMISSION_TIMEOUT
}

/// The permission policy: gated tool calls and who approves them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Policy {
    /// Grows by one with every change (0: never set).
    #[serde(default)]
    pub version: i64,
    /// Default approver, and the lead idle notifications go to when no run names one.
    #[serde(default)]
    pub lead: Option<String>,
    /// Seconds a gated hook waits for the answer before falling back to the session's own
    /// permission flow.
    #[serde(default = "default_timeout")]
    pub timeout_seconds: u64,
    /// The rules, in order.
    #[serde(default)]
    pub rules: Vec<PolicyRule>,
}

impl Default for Policy {
    fn default() -> Self {
        Policy { version: 0, lead: None, timeout_seconds: DEFAULT_PERMISSION_TIMEOUT, rules: vec![] }
    }
}

/// One gated pattern.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PolicyRule {
    /// A Claude Code permission rule: `Bash(git push*)`, `Write(src/**)`, `mcp__*`, `WebFetch`.
    pub tool: String,
    /// Agent name globs the rule applies to (empty: every agent).
    #[serde(default)]
    pub agents: Vec<String>,
    /// Who approves (default: the policy's lead).
    #[serde(default)]
    pub approver: Option<String>,
}

/// Params of `policy.set`: replace the policy.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PolicySetParams {
    /// Who changes it (the event's actor).
    pub actor: String,
    /// Its `version` is ignored: the stored one grows by one.
    pub policy: Policy,
    /// Refuse (`invalid_transition`) unless the stored version is this one.
    #[serde(default)]
    pub expected_version: Option<i64>,
}

/// Result of `policy.get` and `policy.set`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PolicyResult {
    /// The policy.
    pub policy: Policy,
    /// The snapshot file the permission hooks read.
    pub file: String,
    /// The event that recorded the change; usable as an `after_event` cursor.
    #[serde(default)]
    pub event_id: Option<i64>,
}

/// Params of `policy.check`: would this tool call be gated?
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PolicyCheckParams {
    /// The agent that would make the tool call.
    pub agent: String,
    /// The tool to be called.
    pub tool_name: String,
    /// The tool's input, as the client would run it.
    #[serde(default = "empty_object")]
    pub tool_input: Value,
    /// The session's directory, for path rules (default: the project root).
    #[serde(default)]
    pub cwd: Option<String>,
}

/// Result of `policy.check`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PolicyCheckResult {
    /// Whether the call waits for an approver.
    pub gated: bool,
    /// The first rule that matched.
    #[serde(default)]
    pub rule: Option<PolicyRule>,
    /// Who must approve it.
    #[serde(default)]
    pub approver: Option<String>,
    /// How long a gated hook waits for the answer.
    pub timeout_seconds: u64,
    /// Why a `Bash(...)` rule matched when it is not plain to see: what the command runs
    /// (`` `bash -c 'git push'` runs `git push` ``), or why what it runs cannot be known.
    /// `null` when the command matched as written.
    #[serde(default)]
    pub reason: Option<String>,
}

// ---------------------------------------------------------------------------------------
// progress.*: lossy progress lines from tool subprocesses.
// ---------------------------------------------------------------------------------------

/// Lines the daemon keeps for late subscribers (all agents together); older ones drop.
pub const PROGRESS_HISTORY: usize = 1000;
/// Longest `data` of a progress line, in bytes.
pub const MAX_PROGRESS_DATA: usize = 4096;

string_enum!(
    /// What a progress line is: the seed's `progress`, `log` or `result`.
    ProgressType {
        /// A progress note.
        Progress = "progress",
        /// A log line.
        Log = "log",
        /// A final result.
        Result = "result",
    }
);

fn progress_type() -> ProgressType {
    ProgressType::Progress
}

/// Params of `progress.report`: one line from a tool subprocess. Send it as a notification
/// (no `id`) to fire and forget.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProgressParams {
    /// The agent reporting the line.
    pub agent: String,
    /// Its task, if any.
    #[serde(default)]
    pub task_id: Option<String>,
    /// The kind of line (default `progress`).
    #[serde(rename = "type", default = "progress_type")]
    pub line_type: ProgressType,
    /// The tool call it reports on, if any.
    #[serde(default)]
    pub tool_use_id: Option<String>,
    /// The line's data, as reported: at most 4096 bytes of UTF-8 (`invalid_input` past it;
    /// the schema's `maxLength` counts characters, so a line of multi-byte characters is
    /// refused sooner).
    #[schemars(length(max = MAX_PROGRESS_DATA))]
    pub data: String,
    /// Free metadata, as reported.
    #[serde(default)]
    pub meta: Option<Value>,
}

/// A progress line as subscribers see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProgressLine {
    /// Grows by one per line accepted since the daemon started (not durable).
    pub seq: u64,
    /// Agent name.
    pub agent: String,
    /// The task id, unique within its run.
    pub task_id: String,
    /// Typed message type.
    #[serde(rename = "type")]
    pub line_type: ProgressType,
    /// The tool call this is about.
    pub tool_use_id: String,
    /// The line's data, as reported.
    pub data: String,
    /// Free metadata, as reported.
    #[serde(default)]
    pub meta: Option<Value>,
    /// When it was reported.
    pub at: String,
    /// Lines this subscriber missed just before this one because it read too slowly.
    #[serde(default)]
    pub dropped: u64,
}

/// Result of `progress.report`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProgressReportResult {
    /// Sequence number of the stored line.
    pub seq: u64,
}

/// Which progress lines `progress.subscribe` and `progress.recent` return.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProgressFilter {
    /// Only this agent.
    #[serde(default)]
    pub agent: Option<String>,
    /// Only this task.
    #[serde(default)]
    pub task_id: Option<String>,
    /// Only lines of this tool call.
    #[serde(default)]
    pub tool_use_id: Option<String>,
    /// Lines after this `seq` from the recent history first (a subscription without it
    /// starts with new lines only; `progress.recent` returns the whole history).
    #[serde(default)]
    pub after_seq: Option<u64>,
}

/// Result of `progress.recent`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProgressRecentResult {
    /// The lines.
    pub lines: Vec<ProgressLine>,
    /// The newest `seq` so far (0: none since the daemon started).
    pub last_seq: u64,
    /// The list stopped early to keep the reply under [`crate::MAX_REPLY_BYTES`]
    /// (protocol §1.7): continue with `after_seq` = `next_after`.
    #[serde(default)]
    pub truncated: bool,
    /// Where to continue when `truncated`: the `seq` of the last line returned.
    #[serde(default)]
    pub next_after: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_round_trip_and_unknown_types_pass_through() {
        for t in MessageType::KNOWN {
            assert_eq!(&MessageType::from_name(t.as_str()), t);
            assert_eq!(serde_json::to_value(t).unwrap(), json!(t.as_str()));
        }
        let other: MessageType = serde_json::from_value(json!("brand_new_type")).unwrap();
        assert_eq!(other, MessageType::Other("brand_new_type".into()));
        assert_eq!(other.role(), TypeRole::Notice);
    }

    #[test]
    fn payload_shapes_are_checked_for_known_types_only() {
        let t = MessageType::PermissionResponse;
        assert!(t.check_payload(&json!({"request_id": "r", "approved": true, "extra": 1})).is_ok());
        assert!(t.check_payload(&json!({"request_id": "r"})).unwrap_err().contains("approved"));
        assert!(MessageType::IdleNotification.check_payload(&json!({"idle_reason": "bored"})).is_err());
        assert!(MessageType::from_name("x").check_payload(&json!({"anything": [1]})).is_ok());
        assert!(MessageType::from_name("x").check_payload(&json!("text")).is_err());
    }
}
