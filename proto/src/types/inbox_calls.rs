//! Params and results of the inbox methods: send, fetch, claim, update, finish, list, show, events (the entities are in `inbox.rs`).

use super::*;
use serde::{Deserialize, Serialize};
use serde_json::Value;

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
#[schemars(extend("oneOf" = [
    {"required": ["to"], "properties": {"to": {"type": "string", "minLength": 1}}},
    {"required": ["to_task"], "properties": {"to_task": {"type": "string"}}},
    {"required": ["to_peer"], "properties": {"to_peer": {"type": "string"}}}
]))]
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
    /// Deliver only events after this id. When no cursor is set (this, `after_message`,
    /// `after_latest_from`), a subscription starts at the newest event (only future
    /// events) and `events.list` at the start.
    #[serde(default)]
    pub after_event: Option<i64>,
    /// Deliver only events after the event that recorded this message.
    #[serde(default)]
    pub after_message: Option<String>,
    /// An agent: deliver only events after the newest message this agent sent in
    /// `thread_id` (which it requires), so a wait for a reply to the agent's question sees
    /// a reply given before the wait started. When the agent sent no message there, every
    /// event of the thread counts (from its start). With `after_event` or `after_message`
    /// too, the later cursor applies. `inbox wait-reply` without a cursor sends the
    /// caller's agent here.
    #[serde(default)]
    pub after_latest_from: Option<String>,
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
