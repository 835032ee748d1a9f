//! Entities, params and results of the inbox and system methods.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::*;

/// A lease as seen by anyone: who holds it and until when. The token is never shown here.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LeaseView {
    pub agent_id: String,
    /// Fencing generation: grows by one with every grant on this thread.
    pub generation: i64,
    pub claimed_at: String,
    pub expires_at: String,
    /// False once `expires_at` has passed or the lease was released.
    pub active: bool,
}

/// A lease as returned to its holder by `claim` and `renew`, with its secret token.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Lease {
    pub thread_id: String,
    pub agent_id: String,
    pub lease_token: String,
    pub generation: i64,
    pub claimed_at: String,
    pub expires_at: String,
}

/// A durable work conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Thread {
    pub thread_id: String,
    pub run_id: String,
    pub task_id: String,
    pub subject: String,
    pub created_by: String,
    pub assigned_to: String,
    pub status: ThreadStatus,
    pub priority: Priority,
    pub latest_message_id: Option<String>,
    pub created_at: String,
    pub updated_at: String,
    /// The current or last lease, if the thread was ever claimed.
    #[serde(default)]
    pub lease: Option<LeaseView>,
}

/// A file or other reference attached to a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Artifact {
    pub artifact_id: String,
    pub message_id: String,
    pub path: String,
    pub kind: String,
    pub metadata_json: Value,
    pub created_at: String,
}

/// An artifact to attach, as given by a caller.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArtifactInput {
    pub path: String,
    /// Free-form kind such as `report`, `log`, `patch`; defaults to `file`.
    #[serde(default)]
    pub kind: Option<String>,
    /// A JSON object of metadata; defaults to `{}`.
    #[serde(default)]
    pub metadata_json: Option<Value>,
}

/// One message inside a thread.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub message_id: String,
    pub thread_id: String,
    pub from_agent: String,
    pub to_agent: String,
    pub kind: MessageKind,
    pub summary: String,
    pub body: String,
    pub payload_json: Value,
    pub created_at: String,
    /// The event that recorded this message: a cursor for `after_event`.
    pub event_id: i64,
    /// Mail category, when the sender gave one.
    #[serde(default)]
    pub category: Option<Category>,
    /// Whether each recipient is asked to ack it (`mail.ack`).
    #[serde(default)]
    pub requires_ack: bool,
    #[serde(default)]
    pub artifacts: Vec<Artifact>,
    /// The typed message's type (`permission_request`, ...; see [`MessageType`]); absent
    /// for a free-form message.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub msg_type: Option<String>,
}

/// One entry of the shared, monotonic event stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub event_id: i64,
    pub event_type: EventType,
    /// Which layer wrote the event: `inbox` or `orch`.
    pub source: String,
    pub run_id: String,
    pub task_id: String,
    pub thread_id: String,
    /// The agent whose call caused the event.
    pub actor: String,
    /// The thread's assignee and creator after the event.
    pub assigned_to: String,
    pub created_by: String,
    /// The thread's status after the event (none for run- and task-level orch events
    /// that concern no thread).
    pub thread_status: Option<ThreadStatus>,
    /// The task's status after the event (orch events about a task).
    #[serde(default)]
    pub task_status: Option<TaskStatus>,
    pub message_id: Option<String>,
    pub summary: String,
    pub payload_json: Value,
    pub created_at: String,
    /// The message the event recorded, when there is one.
    #[serde(default)]
    pub message: Option<Message>,
    /// The mail copies the message's send gave its recipients, so a live view can add them
    /// without reading them back. Only on message events delivered live by a subscription
    /// of the daemon that wrote them (absent from `events.list`, from a replay after a
    /// cursor, and from another daemon's events on a shared PostgreSQL store).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mail: Option<EventMail>,
}

// ---------------------------------------------------------------------------------------
// Params and results.
// ---------------------------------------------------------------------------------------

/// Result of `system.hello`: identity, versions and the method list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HelloResult {
    /// Always `coordd`.
    pub server: String,
    pub version: String,
    pub protocol_version: u32,
    pub pid: u32,
    pub socket: String,
    pub db: String,
    pub started_at: String,
    pub uptime_ms: u64,
    /// Id of the newest event, 0 when there is none.
    pub last_event_id: i64,
    pub schema_version: i64,
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReadOnlyState {
    /// Stable: `disk_full`, or `unwritable` (a read-only file system, an I/O error).
    pub reason: String,
    /// What SQLite reported, for people.
    pub message: String,
    /// RFC 3339, when the daemon went read-only.
    pub since: String,
}

/// Params of `system.shutdown`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ShutdownParams {
    #[serde(default)]
    pub reason: Option<String>,
}

/// Result of `system.shutdown`: the daemon stops after replying.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShutdownResult {
    pub pid: u32,
}

/// Result of `inbox.init`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InitResult {
    pub db: String,
    pub socket: String,
    pub schema_version: i64,
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

/// Common fields of the message-writing methods.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MessageInput {
    /// One-line summary; required.
    pub summary: String,
    #[serde(default)]
    pub body: Option<String>,
    /// A JSON object; defaults to `{}`.
    #[serde(default)]
    pub payload_json: Option<Value>,
    #[serde(default)]
    pub artifacts: Vec<ArtifactInput>,
}

/// Params of `inbox.send`: create a thread, or append to one when `thread_id` is set.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SendParams {
    pub from: String,
    /// The recipient agent, or `broadcast`. Exactly one of `to`, `to_task` and `to_peer`.
    #[serde(default)]
    pub to: String,
    /// Address a task instead: whoever runs it gets the message, and mail sent before the
    /// task starts waits for it.
    #[serde(default)]
    pub to_task: Option<String>,
    /// Address the peers linked to this task (the sender's own task).
    #[serde(default)]
    pub to_peer: Option<String>,
    /// A queued message not delivered within this many seconds expires.
    #[serde(default)]
    pub expires_in_seconds: Option<u64>,
    #[serde(default)]
    pub thread_id: Option<String>,
    /// Subject of a new thread; defaults to the summary.
    #[serde(default)]
    pub subject: Option<String>,
    #[serde(default)]
    pub run_id: Option<String>,
    #[serde(default)]
    pub task_id: Option<String>,
    /// Defaults to `task` for a new thread and `progress` otherwise.
    #[serde(default)]
    pub kind: Option<MessageKind>,
    #[serde(default)]
    pub priority: Option<Priority>,
    /// Mail category: HANDOFF, BLOCKED, DECISION or INFO (`invalid_category` otherwise).
    /// A categorised message needs a task (`missing_task_id`).
    #[serde(default)]
    pub category: Option<String>,
    /// Ask every recipient to ack; defaults to true for HANDOFF and BLOCKED.
    #[serde(default)]
    pub requires_ack: Option<bool>,
    #[serde(flatten)]
    pub message: MessageInput,
}

/// Result of every method that appends a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MessageResult {
    pub thread: Thread,
    pub message: Message,
    /// The event recorded for this change: the cursor to wait after.
    pub event_id: i64,
}

/// Params of `inbox.fetch`: candidate threads assigned to an agent. Never writes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FetchParams {
    pub agent: String,
    /// Defaults to `[pending]`.
    #[serde(default)]
    pub statuses: Vec<ThreadStatus>,
    #[serde(default)]
    pub limit: Option<u32>,
    /// Only threads with a message to the agent that the agent has not read yet.
    #[serde(default)]
    pub unread: bool,
}

/// Result of `inbox.fetch` and `inbox.list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadsResult {
    pub threads: Vec<Thread>,
}

/// Params of `inbox.claim`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClaimParams {
    pub agent: String,
    pub thread_id: String,
    /// Defaults to [`crate::DEFAULT_LEASE_SECONDS`].
    #[serde(default)]
    pub lease_seconds: Option<u64>,
}

/// Params of `inbox.renew`: the lease then runs until `now + lease_seconds`, or longer if
/// it already did (renewing never shortens a lease).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RenewParams {
    pub agent: String,
    pub thread_id: String,
    #[serde(default)]
    pub lease_seconds: Option<u64>,
    /// When set, must equal the current lease's token.
    #[serde(default)]
    pub lease_token: Option<String>,
}

/// Result of `inbox.claim` and `inbox.renew`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LeaseResult {
    pub thread: Thread,
    pub lease: Lease,
    pub event_id: i64,
}

/// Params of `inbox.update`: progress or a block, by the lease holder.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UpdateParams {
    pub agent: String,
    pub thread_id: String,
    /// `in_progress` (the default) or `blocked`.
    #[serde(default)]
    pub status: Option<ThreadStatus>,
    #[serde(default)]
    pub lease_token: Option<String>,
    #[serde(flatten)]
    pub message: MessageInput,
}

/// Params of `inbox.reply`: a message inside an existing thread, by anyone.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReplyParams {
    pub from: String,
    /// Defaults to the thread's assignee, or its creator when the assignee replies.
    #[serde(default)]
    pub to: Option<String>,
    pub thread_id: String,
    /// `answer` (the default), `question`, `progress` or `control`.
    #[serde(default)]
    pub kind: Option<MessageKind>,
    #[serde(flatten)]
    pub message: MessageInput,
}

/// Params of `inbox.done` and `inbox.fail`: finish the thread, by the lease holder.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FinishParams {
    pub agent: String,
    pub thread_id: String,
    #[serde(default)]
    pub lease_token: Option<String>,
    #[serde(flatten)]
    pub message: MessageInput,
}

/// Params of `inbox.cancel`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CancelParams {
    pub agent: String,
    pub thread_id: String,
    /// Why; becomes the cancel message's summary.
    pub reason: String,
    #[serde(default)]
    pub artifacts: Vec<ArtifactInput>,
}

/// Params of `inbox.list`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListParams {
    /// Threads created by or assigned to this agent.
    #[serde(default)]
    pub agent: Option<String>,
    /// Empty means every status.
    #[serde(default)]
    pub statuses: Vec<ThreadStatus>,
    #[serde(default)]
    pub created_by: Option<String>,
    #[serde(default)]
    pub assigned_to: Option<String>,
    #[serde(default)]
    pub run_id: Option<String>,
    #[serde(default)]
    pub task_id: Option<String>,
    #[serde(default)]
    pub limit: Option<u32>,
}

/// Params of `inbox.show`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ShowParams {
    pub thread_id: String,
}

/// Result of `inbox.show`: the thread with its whole history and artifacts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShowResult {
    pub thread: Thread,
    pub messages: Vec<Message>,
}

/// Params of `inbox.markRead`: the agent has read the thread's messages up to now.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MarkReadParams {
    pub agent: String,
    pub thread_id: String,
}

/// Result of `inbox.markRead`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MarkReadResult {
    pub thread_id: String,
    pub agent: String,
    /// Event id of the newest message now marked read (0 when the thread had none).
    pub read_through_event: i64,
}

/// Which events a subscription or `events.list` delivers. Every set field must match.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EventFilter {
    /// Deliver only events after this id. When neither cursor is set, a subscription
    /// starts at the newest event (only future events) and `events.list` at the start.
    #[serde(default)]
    pub after_event: Option<i64>,
    /// Deliver only events after the event that recorded this message.
    #[serde(default)]
    pub after_message: Option<String>,
    #[serde(default)]
    pub thread_id: Option<String>,
    #[serde(default)]
    pub run_id: Option<String>,
    #[serde(default)]
    pub task_id: Option<String>,
    /// Events on threads assigned to or created by this agent (as the thread stands after
    /// the event), that the agent did not cause itself.
    #[serde(default)]
    pub agent: Option<String>,
    /// Only events after which the thread has one of these statuses.
    #[serde(default)]
    pub statuses: Vec<ThreadStatus>,
    #[serde(default)]
    pub event_types: Vec<EventType>,
    /// Only events that recorded a message of one of these kinds.
    #[serde(default)]
    pub kinds: Vec<MessageKind>,
    /// Only events that recorded a message addressed to this agent, or a broadcast that
    /// someone else sent.
    #[serde(default)]
    pub to: Option<String>,
    /// Typed messages of these types (`*`: any type). Together with `event_types` it says
    /// what happened: when both are given, an event passes if it matches either.
    #[serde(default)]
    pub message_types: Vec<String>,
}

/// Params of `events.list`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EventsListParams {
    #[serde(flatten)]
    pub filter: EventFilter,
    #[serde(default)]
    pub limit: Option<u32>,
}

/// Result of `events.list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventsResult {
    pub events: Vec<Event>,
    /// Id of the newest event in the database when the list was read.
    pub last_event_id: i64,
    /// The list stopped early, before `limit`, to keep the reply under
    /// [`crate::MAX_REPLY_BYTES`]: continue with `after_event` = `next_after`.
    #[serde(default)]
    pub truncated: bool,
    /// Where to continue when `truncated` (the last event returned).
    #[serde(default)]
    pub next_after: Option<i64>,
}
