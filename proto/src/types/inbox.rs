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

/// Common fields of the message-writing methods.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MessageInput {
    /// One-line summary; required.
    pub summary: String,
    /// Full text, `""` if none.
    #[serde(default)]
    pub body: Option<String>,
    /// A JSON object; defaults to `{}`.
    #[serde(default)]
    pub payload_json: Option<Value>,
    /// The artifacts.
    #[serde(default)]
    pub artifacts: Vec<ArtifactInput>,
}

/// Params of `inbox.send`: create a thread, or append to one when `thread_id` is set.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SendParams {
    /// Sender. For a new thread, this agent becomes `created_by`.
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
    /// If given, append to this thread and do not create one.
    #[serde(default)]
    pub thread_id: Option<String>,
    /// Subject of a new thread; defaults to the summary.
    #[serde(default)]
    pub subject: Option<String>,
    /// New thread: stored. Appending: if given, it must equal the thread's `run_id`. Default: `""`.
    #[serde(default)]
    pub run_id: Option<String>,
    /// Same rule as `run_id`. Default: `""`.
    #[serde(default)]
    pub task_id: Option<String>,
    /// Defaults to `task` for a new thread and `progress` otherwise.
    #[serde(default)]
    pub kind: Option<MessageKind>,
    /// `low`, `normal`, `high` or `urgent`. New thread only (ignored when appending); also the mail
    /// copies' priority. Default: `normal`.
    #[serde(default)]
    pub priority: Option<Priority>,
    /// Mail category: HANDOFF, BLOCKED, DECISION or INFO (`invalid_category` otherwise).
    /// A categorised message needs a task (`missing_task_id`).
    #[serde(default)]
    pub category: Option<String>,
    /// Ask every recipient to ack; defaults to true for HANDOFF and BLOCKED.
    #[serde(default)]
    pub requires_ack: Option<bool>,
    /// The message.
    #[serde(flatten)]
    pub message: MessageInput,
}

/// Result of every method that appends a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MessageResult {
    /// The thread.
    pub thread: Thread,
    /// The message.
    pub message: Message,
    /// The event recorded for this change: the cursor to wait after.
    pub event_id: i64,
}

/// Params of `inbox.fetch`: candidate threads assigned to an agent. Never writes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FetchParams {
    /// Returns threads whose `assigned_to` is this agent.
    pub agent: String,
    /// Defaults to `[pending]`.
    #[serde(default)]
    pub statuses: Vec<ThreadStatus>,
    /// 1 to 10000. Default: 50.
    #[serde(default)]
    pub limit: Option<u32>,
    /// Only threads with a message to the agent that the agent has not read yet.
    #[serde(default)]
    pub unread: bool,
    /// Only threads after this one in the list's order (a `next_after` of an earlier page).
    #[serde(default)]
    pub after: Option<String>,
}

/// Result of `inbox.fetch` and `inbox.list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ThreadsResult {
    /// The threads.
    pub threads: Vec<Thread>,
    /// The list stopped early, before its `limit`, to keep the reply under
    /// [`crate::MAX_REPLY_BYTES`] (protocol §1.7): continue with `after` = `next_after`.
    #[serde(default)]
    pub truncated: bool,
    /// Where to continue when `truncated`: the `thread_id` of the last thread returned.
    #[serde(default)]
    pub next_after: Option<String>,
}

/// Params of `inbox.claim`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ClaimParams {
    /// The claimer.
    pub agent: String,
    /// Thread to claim.
    pub thread_id: String,
    /// Defaults to [`crate::DEFAULT_LEASE_SECONDS`].
    #[serde(default)]
    pub lease_seconds: Option<u64>,
}

/// Params of `inbox.renew`: the lease then runs until `now + lease_seconds`, or longer if
/// it already did (renewing never shortens a lease).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RenewParams {
    /// Must be the lease holder.
    pub agent: String,
    /// The thread (`thr_…`).
    pub thread_id: String,
    /// 1 to 604800. The lease then runs at least until now + lease_seconds. Default: 900.
    #[serde(default)]
    pub lease_seconds: Option<u64>,
    /// When set, must equal the current lease's token.
    #[serde(default)]
    pub lease_token: Option<String>,
}

/// Result of `inbox.claim` and `inbox.renew`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LeaseResult {
    /// The thread.
    pub thread: Thread,
    /// The lease.
    pub lease: Lease,
    /// The event that recorded the change; usable as an `after_event` cursor.
    pub event_id: i64,
}

/// Params of `inbox.update`: progress or a block, by the lease holder.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct UpdateParams {
    /// Must be the lease holder.
    pub agent: String,
    /// The thread (`thr_…`).
    pub thread_id: String,
    /// `in_progress` (the default) or `blocked`.
    #[serde(default)]
    pub status: Option<ThreadStatus>,
    /// Checked as in §3.7.
    #[serde(default)]
    pub lease_token: Option<String>,
    /// The message.
    #[serde(flatten)]
    pub message: MessageInput,
}

/// Params of `inbox.reply`: a message inside an existing thread, by anyone.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReplyParams {
    /// Sender.
    pub from: String,
    /// Defaults to the thread's assignee, or its creator when the assignee replies.
    #[serde(default)]
    pub to: Option<String>,
    /// The thread (`thr_…`).
    pub thread_id: String,
    /// `answer` (the default), `question`, `progress` or `control`.
    #[serde(default)]
    pub kind: Option<MessageKind>,
    /// The message.
    #[serde(flatten)]
    pub message: MessageInput,
}

/// Params of `inbox.done` and `inbox.fail`: finish the thread, by the lease holder.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FinishParams {
    /// Must be the lease holder, with a live lease.
    pub agent: String,
    /// The thread (`thr_…`).
    pub thread_id: String,
    /// Checked as in §3.7.
    #[serde(default)]
    pub lease_token: Option<String>,
    /// The message.
    #[serde(flatten)]
    pub message: MessageInput,
}

/// Params of `inbox.cancel`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CancelParams {
    /// Who cancels.
    pub agent: String,
    /// The thread (`thr_…`).
    pub thread_id: String,
    /// Why; becomes the cancel message's summary.
    pub reason: String,
    /// The artifacts. Default: `[]`.
    #[serde(default)]
    pub artifacts: Vec<ArtifactInput>,
}

/// Params of `inbox.list`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ListParams {
    /// Threads created by or assigned to this agent.
    #[serde(default)]
    pub agent: Option<String>,
    /// Empty means every status.
    #[serde(default)]
    pub statuses: Vec<ThreadStatus>,
    /// Exact match.
    #[serde(default)]
    pub created_by: Option<String>,
    /// Exact match.
    #[serde(default)]
    pub assigned_to: Option<String>,
    /// Exact match.
    #[serde(default)]
    pub run_id: Option<String>,
    /// Exact match.
    #[serde(default)]
    pub task_id: Option<String>,
    /// 1 to 10000. Default: 50.
    #[serde(default)]
    pub limit: Option<u32>,
    /// Only threads after this one in the list's order (a `next_after` of an earlier page).
    #[serde(default)]
    pub after: Option<String>,
}

/// Params of `inbox.show`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ShowParams {
    /// The thread (`thr_…`).
    pub thread_id: String,
    /// Only messages recorded after this event (a `next_after` of an earlier page).
    #[serde(default)]
    pub after_event: Option<i64>,
}

/// Result of `inbox.show`: the thread with its whole history and artifacts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ShowResult {
    /// The thread.
    pub thread: Thread,
    /// The messages.
    pub messages: Vec<Message>,
    /// The list stopped early, before its `limit`, to keep the reply under
    /// [`crate::MAX_REPLY_BYTES`] (protocol §1.7): continue with `after_event` = `next_after`.
    #[serde(default)]
    pub truncated: bool,
    /// Where to continue when `truncated`: the `event_id` of the last message returned.
    #[serde(default)]
    pub next_after: Option<i64>,
}

/// Params of `inbox.markRead`: the agent has read the thread's messages up to now.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MarkReadParams {
    /// The agent whose read mark moves.
    pub agent: String,
    /// Terminal threads are allowed.
    pub thread_id: String,
}

/// Result of `inbox.markRead`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MarkReadResult {
    /// The thread (`thr_…`).
    pub thread_id: String,
    /// Agent name.
    pub agent: String,
    /// Event id of the newest message now marked read (0 when the thread had none).
    pub read_through_event: i64,
}

/// Which events a subscription or `events.list` delivers. Every set field must match.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EventFilter {
    /// Deliver only events after this id. When neither cursor is set, a subscription
    /// starts at the newest event (only future events) and `events.list` at the start.
    #[serde(default)]
    pub after_event: Option<i64>,
    /// Deliver only events after the event that recorded this message.
    #[serde(default)]
    pub after_message: Option<String>,
    /// Only this thread. The thread must already exist. At most 200 characters.
    #[serde(default)]
    pub thread_id: Option<String>,
    /// Exact match on the event's `run_id`.
    #[serde(default)]
    pub run_id: Option<String>,
    /// Exact match on the event's `task_id`.
    #[serde(default)]
    pub task_id: Option<String>,
    /// Events on threads assigned to or created by this agent (as the thread stands after
    /// the event), that the agent did not cause itself.
    #[serde(default)]
    pub agent: Option<String>,
    /// Only events after which the thread has one of these statuses.
    #[serde(default)]
    pub statuses: Vec<ThreadStatus>,
    /// Only events of these types; empty means all.
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
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EventsListParams {
    /// Which events.
    #[serde(flatten)]
    pub filter: EventFilter,
    /// 1 to 10000. Default: 50.
    #[serde(default)]
    pub limit: Option<u32>,
}

/// Result of `events.list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EventsResult {
    /// The events.
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
