//! Entities, params and results of the inbox and system methods.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::*;

/// A lease as seen by anyone: who holds it and until when. The token is never shown here.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LeaseView {
    /// Holder (or last holder).
    pub agent_id: String,
    /// Fencing generation: grows by one with every grant on this thread.
    pub generation: i64,
    /// When this grant was made.
    pub claimed_at: String,
    /// When it expires.
    pub expires_at: String,
    /// False once `expires_at` has passed or the lease was released.
    pub active: bool,
}

/// A lease as returned to its holder by `claim` and `renew`, with its secret token.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Lease {
    /// The thread (`thr_…`).
    pub thread_id: String,
    /// Holder.
    pub agent_id: String,
    /// `lt_…`, secret. Pass it as `lease_token` to `renew`, `update`, `done` and `fail`.
    pub lease_token: String,
    /// As in LeaseView. It can also serve as a fencing number for external resources.
    pub generation: i64,
    /// When this grant was made.
    pub claimed_at: String,
    /// When it expires.
    pub expires_at: String,
}

/// A durable work conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Thread {
    /// `thr_…`.
    pub thread_id: String,
    /// Free grouping key, `""` if none.
    pub run_id: String,
    /// Free grouping key, `""` if none.
    pub task_id: String,
    /// Title.
    pub subject: String,
    /// Agent that created the thread. Never changes.
    pub created_by: String,
    /// Current assignee. It starts as the first message's `to` and changes to the claimer on every
    /// claim.
    pub assigned_to: String,
    /// Life-cycle state.
    pub status: ThreadStatus,
    /// Priority.
    pub priority: Priority,
    /// Newest message.
    pub latest_message_id: Option<String>,
    /// When it was created.
    pub created_at: String,
    /// Last message or claim. Renew and markRead do not change it.
    pub updated_at: String,
    /// The current or last lease, if the thread was ever claimed.
    #[serde(default)]
    pub lease: Option<LeaseView>,
}

/// A file or other reference attached to a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Artifact {
    /// `art_…`.
    pub artifact_id: String,
    /// The message it is attached to.
    pub message_id: String,
    /// File path or other reference, stored as sent (never read by the daemon). The `inbox` CLI and
    /// MCP server send a path inside a git checkout relative to the repository's top, with the
    /// checkout's `branch` and HEAD `commit` added to `metadata_json`, so it can be opened after
    /// the worktree is pruned (`git show COMMIT:PATH`).
    pub path: String,
    /// Free-form, for example `file`, `report`, `log`, `patch`.
    pub kind: String,
    /// Free JSON object.
    pub metadata_json: Value,
    /// When it was created.
    pub created_at: String,
}

/// An artifact to attach, as given by a caller.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ArtifactInput {
    /// Not blank.
    pub path: String,
    /// Free-form kind such as `report`, `log`, `patch`; defaults to `file`.
    #[serde(default)]
    pub kind: Option<String>,
    /// A JSON object of metadata; defaults to `{}`.
    #[serde(default)]
    pub metadata_json: Option<Value>,
}

/// One message inside a thread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Message {
    /// `msg_…`.
    pub message_id: String,
    /// The thread (`thr_…`).
    pub thread_id: String,
    /// Sender.
    pub from_agent: String,
    /// Recipient.
    pub to_agent: String,
    /// Kind.
    pub kind: MessageKind,
    /// One-line summary.
    pub summary: String,
    /// `""` if none.
    pub body: String,
    /// `{}` if none.
    pub payload_json: Value,
    /// When it was created.
    pub created_at: String,
    /// The event that recorded this message: a cursor for `after_event`.
    pub event_id: i64,
    /// Mail category, when the sender gave one.
    #[serde(default)]
    pub category: Option<Category>,
    /// Whether each recipient is asked to ack it (`mail.ack`).
    #[serde(default)]
    pub requires_ack: bool,
    /// In attachment order, `[]` if none.
    #[serde(default)]
    pub artifacts: Vec<Artifact>,
    /// The typed message's type (`permission_request`, ...; see [`MessageType`]); absent
    /// for a free-form message.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub msg_type: Option<String>,
}

/// One entry of the shared, monotonic event stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Event {
    /// Strictly increasing in commit order.
    pub event_id: i64,
    /// What happened.
    pub event_type: EventType,
    /// Which layer wrote the event: `inbox` or `orch`.
    pub source: String,
    /// Inbox events: the thread's `run_id`. Orch events: the run.
    pub run_id: String,
    /// Inbox events: the thread's `task_id` (a council's threads carry the council id). `task.*`
    /// events: the task. `run.*` and `council.*`: `""`.
    pub task_id: String,
    /// Inbox events: the thread. `task.*` events: the thread of the task's current attempt, or `""`
    /// if it has none (for example `task.added`, `task.ready`). `run.*` and `council.*`: `""`.
    pub thread_id: String,
    /// The agent whose call caused the event.
    pub actor: String,
    /// The thread's assignee and creator after the event.
    pub assigned_to: String,
    /// Inbox events: the thread's creator. `run.*`, `task.*` and `council.*`: the run's
    /// `created_by` (so an `agent` filter for the leader follows its runs' task events).
    pub created_by: String,
    /// The thread's status after the event (none for run- and task-level orch events
    /// that concern no thread).
    pub thread_status: Option<ThreadStatus>,
    /// The task's status after the event (orch events about a task).
    #[serde(default)]
    pub task_status: Option<TaskStatus>,
    /// The message recorded, if any. `null` for `thread.claimed`, `lease.renewed`, `lease.expired`,
    /// `mail.read`, `mail.acked`, every orch event and every agents event.
    pub message_id: Option<String>,
    /// The message's summary, the lease summary (see `claim` and `renew`), or the orch summary
    /// (§4.16).
    pub summary: String,
    /// The message's payload, `{"generation","expires_at"}` for lease events, or the orch payload
    /// (§4.16).
    pub payload_json: Value,
    /// When it was created.
    pub created_at: String,
    /// The message the event recorded, when there is one.
    #[serde(default)]
    pub message: Option<Message>,
    /// The type of the typed message the event recorded (`shutdown_request`,
    /// `permission_request`, `idle_notification`, ...; see `MessageType`), the same as
    /// `message.type`; absent for every other event. A typed message is recorded by an
    /// ordinary thread event (`thread.created`, `message.sent`, `thread.done`), so this is
    /// what a loop switches on to tell them apart: `message_type`, else `event_type`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message_type: Option<String>,
    /// The mail copies the message's send gave its recipients, so a live view can add them
    /// without reading them back. Only on message events delivered by a subscription: live
    /// by the daemon that wrote them, replayed after a cursor, or live from another daemon
    /// on a shared PostgreSQL store (these two read back from the stored copies; absent
    /// when there are none). Absent from `events.list`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mail: Option<EventMail>,
}

impl Event {
    /// Attach the message the event recorded, and with it its `message_type`.
    pub fn set_message(&mut self, message: Option<Message>) {
        self.message_type = message.as_ref().and_then(|m| m.msg_type.clone());
        self.message = message;
    }

    /// What happened, for a loop to switch on: the typed message's type when the event
    /// recorded one, else the event type.
    pub fn what(&self) -> &str {
        self.message_type.as_deref().unwrap_or(self.event_type.as_str())
    }
}

// ---------------------------------------------------------------------------------------
// Params and results.
// ---------------------------------------------------------------------------------------

/// Result of `system.hello`: identity, versions and the method list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HelloResult {
    /// Always `coordd`.
    pub server: String,
    /// Daemon build version, for example `"0.1.0"`.
    pub version: String,
    /// Wire protocol version.
    pub protocol_version: u32,
    /// Daemon process id.
    pub pid: u32,
    /// Socket path the daemon listens on.
    pub socket: String,
    /// Database path, or the PostgreSQL database for that backend.
    pub db: String,
    /// When it started.
    pub started_at: String,
    /// Milliseconds since the daemon started.
    pub uptime_ms: u64,
    /// Id of the newest event, 0 when there is none.
    pub last_event_id: i64,
    /// Database schema version.
    pub schema_version: i64,
    /// Sorted names of every callable method.
    pub methods: Vec<String>,
    /// Open client connections (this one included).
    #[serde(default)]
    pub connections: u64,
    /// Open event subscriptions (waits and watchers).
    #[serde(default)]
    pub subscriptions: u64,
    /// Present while the daemon runs read-only (it started on a full disk): why, and
    /// since when. Absent when writes are taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only: Option<ReadOnlyState>,
}

/// Why the daemon runs read-only (`system.hello`'s `read_only`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReadOnlyState {
    /// Stable: `disk_full`, or `unwritable` (a read-only file system, an I/O error).
    pub reason: String,
    /// What SQLite reported, for people.
    pub message: String,
    /// RFC 3339, when the daemon went read-only.
    pub since: String,
}

/// Params of `system.shutdown`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ShutdownParams {
    /// Written to the daemon log.
    #[serde(default)]
    pub reason: Option<String>,
}

/// Result of `system.shutdown`: the daemon stops after replying.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ShutdownResult {
    /// Daemon process id.
    pub pid: u32,
}

/// Result of `inbox.init`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct InitResult {
    /// Database path, or the PostgreSQL database for that backend.
    pub db: String,
    /// Socket path the daemon listens on.
    pub socket: String,
    /// Database schema version.
    pub schema_version: i64,
    /// `"wal"` on SQLite, `"postgresql"` on PostgreSQL.
    pub journal_mode: String,
    /// Whether sends from or to unregistered agents are refused.
    pub strict_agents: bool,
    /// Writes made as an agent need a connection authenticated as it.
    #[serde(default)]
    pub require_credentials: bool,
    /// The project's lead, if one was named (`inbox.init`'s `lead`).
    #[serde(default)]
    pub lead: Option<String>,
    /// The admins, who share the lead's authority.
    #[serde(default)]
    pub admins: Vec<String>,
}
