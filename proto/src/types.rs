//! Entities, parameters and results of the protocol.
//!
//! Every method takes exactly one params object and returns one result object. Optional
//! fields may be omitted on the wire. Timestamps are RFC 3339 UTC strings with millisecond
//! precision (`2026-11-22T00:51:39.123Z`), fixed width, so they sort as text.

use serde::{Deserialize, Serialize};
use serde_json::Value;

macro_rules! string_enum {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $var:ident = $s:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum $name { $($(#[$vm])* #[serde(rename = $s)] $var),+ }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$var),+];

            /// The wire name.
            pub const fn as_str(self) -> &'static str {
                match self { $($name::$var => $s),+ }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl std::str::FromStr for $name {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, String> {
                match s {
                    $($s => Ok($name::$var),)+
                    _ => Err(format!(
                        "unknown {} '{}' (expected one of: {})",
                        stringify!($name), s, [$($s),+].join(", ")
                    )),
                }
            }
        }
    };
}

string_enum!(
    /// Lifecycle state of a thread.
    ThreadStatus {
        Pending = "pending",
        Claimed = "claimed",
        InProgress = "in_progress",
        Blocked = "blocked",
        Done = "done",
        Failed = "failed",
        Cancelled = "cancelled",
    }
);

impl ThreadStatus {
    /// Done, failed and cancelled threads accept no further messages or leases.
    pub const fn is_terminal(self) -> bool {
        matches!(self, ThreadStatus::Done | ThreadStatus::Failed | ThreadStatus::Cancelled)
    }
}

string_enum!(
    /// Lifecycle state of an orch task.
    TaskStatus {
        /// Some dependency is not done yet.
        Pending = "pending",
        /// Every dependency is done; waiting to be dispatched.
        Ready = "ready",
        /// An attempt's thread was created; no worker has claimed it yet.
        Dispatched = "dispatched",
        InProgress = "in_progress",
        Blocked = "blocked",
        Done = "done",
        Failed = "failed",
        Cancelled = "cancelled",
    }
);

impl TaskStatus {
    pub const fn is_terminal(self) -> bool {
        matches!(self, TaskStatus::Done | TaskStatus::Failed | TaskStatus::Cancelled)
    }

    /// An attempt is running (its thread is open).
    pub const fn is_live(self) -> bool {
        matches!(self, TaskStatus::Dispatched | TaskStatus::InProgress | TaskStatus::Blocked)
    }
}

string_enum!(
    /// Lifecycle state of an orch run.
    RunStatus {
        Active = "active",
        Done = "done",
        Failed = "failed",
        Cancelled = "cancelled",
    }
);

string_enum!(
    /// What a task's attempt gets: `code` a git worktree, `thread` only an inbox thread.
    TaskKind {
        Code = "code",
        Thread = "thread",
    }
);

string_enum!(
    /// State of one attempt at a task.
    AttemptStatus {
        /// Its thread is open.
        Live = "live",
        Done = "done",
        Failed = "failed",
        /// Cancelled, or replaced by a reassign.
        Cancelled = "cancelled",
    }
);

string_enum!(
    /// Phase of a council review.
    CouncilPhase {
        Brainstorm = "brainstorm",
        Voting = "voting",
        Done = "done",
        Cancelled = "cancelled",
    }
);

string_enum!(
    /// Kind of a message inside a thread.
    MessageKind {
        Task = "task",
        Progress = "progress",
        Question = "question",
        Answer = "answer",
        Result = "result",
        Control = "control",
        Event = "event",
    }
);

string_enum!(
    /// Priority of a thread; `fetch` returns higher priorities first.
    Priority {
        Low = "low",
        Normal = "normal",
        High = "high",
    }
);

string_enum!(
    /// Type of an event in the shared event stream.
    EventType {
        /// A thread was created with its first message.
        ThreadCreated = "thread.created",
        /// A message was appended to an existing thread by `send`.
        MessageSent = "message.sent",
        /// A lease was granted.
        ThreadClaimed = "thread.claimed",
        /// A lease was extended.
        LeaseRenewed = "lease.renewed",
        /// The holder reported progress (`update --status in_progress`).
        ThreadProgress = "thread.progress",
        /// The holder reported a block (`update --status blocked`).
        ThreadBlocked = "thread.blocked",
        /// Somebody replied inside the thread.
        ThreadReplied = "thread.replied",
        /// The holder finished the thread.
        ThreadDone = "thread.done",
        /// The holder failed the thread.
        ThreadFailed = "thread.failed",
        /// The thread was cancelled.
        ThreadCancelled = "thread.cancelled",
        /// A lease ran out without being renewed (the thread keeps its status).
        LeaseExpired = "lease.expired",
        /// orch: a run was created.
        RunCreated = "run.created",
        /// orch: every task of the run is done (or cancelled).
        RunDone = "run.done",
        /// orch: a task failed with no attempt left to retry.
        RunFailed = "run.failed",
        /// orch: the run was cancelled.
        RunCancelled = "run.cancelled",
        /// orch: a failed run became active again (a retry).
        RunResumed = "run.resumed",
        /// orch: a task was added to a run.
        TaskAdded = "task.added",
        /// orch: a dependency was added or removed (the task's status may change with it).
        TaskDepsChanged = "task.deps_changed",
        /// orch: every dependency of the task is done.
        TaskReady = "task.ready",
        /// orch: an attempt was dispatched into an inbox thread.
        TaskDispatched = "task.dispatched",
        /// orch: the worker claimed or resumed the attempt's thread.
        TaskInProgress = "task.in_progress",
        /// orch: the worker is blocked and asked a question.
        TaskBlocked = "task.blocked",
        TaskDone = "task.done",
        TaskFailed = "task.failed",
        TaskCancelled = "task.cancelled",
        /// orch: a council review started (brainstorm threads opened).
        CouncilStarted = "council.started",
        /// orch: every reviewer brainstormed; vote threads opened.
        CouncilVoting = "council.voting",
        /// orch: every reviewer voted.
        CouncilDone = "council.done",
    }
);

impl EventType {
    /// The events `orch wait` returns: the ones a leader has to act on.
    pub const ACTIONABLE: &'static [EventType] = &[
        EventType::TaskReady,
        EventType::TaskBlocked,
        EventType::TaskDone,
        EventType::TaskFailed,
        EventType::LeaseExpired,
        EventType::RunDone,
        EventType::RunFailed,
        EventType::CouncilVoting,
        EventType::CouncilDone,
    ];
}

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
    #[serde(default)]
    pub artifacts: Vec<Artifact>,
}

/// One entry of the shared, monotonic event stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub event_id: i64,
    pub event_type: EventType,
    /// Which layer wrote the event (`inbox` for now).
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
    pub to: String,
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
}

// ---------------------------------------------------------------------------------------
// orch: runs, tasks, dependencies, attempts, councils.
// ---------------------------------------------------------------------------------------

/// A run: one goal, decomposed into tasks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    pub run_id: String,
    pub goal: String,
    pub status: RunStatus,
    pub created_by: String,
    /// Automatic retries per failed task (0: none).
    pub auto_retry: u32,
    pub created_at: String,
    pub updated_at: String,
}

/// A task of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Task {
    pub run_id: String,
    pub task_id: String,
    pub title: String,
    pub body: String,
    pub acceptance: String,
    pub priority: Priority,
    /// Preferred worker (used by dispatch when no `to` is given).
    pub assign_to: Option<String>,
    /// Role hint for launchers.
    pub role: Option<String>,
    pub kind: TaskKind,
    pub max_attempts: u32,
    pub status: TaskStatus,
    /// Number of the current (latest) attempt; 0 before the first dispatch.
    pub attempt: u32,
    /// Tasks this one depends on.
    pub depends_on: Vec<String>,
    pub created_at: String,
    pub updated_at: String,
}

/// One attempt at a task: an inbox thread, and a git worktree for code tasks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attempt {
    pub run_id: String,
    pub task_id: String,
    pub attempt: u32,
    pub thread_id: String,
    pub worker: String,
    pub status: AttemptStatus,
    pub repo: Option<String>,
    pub worktree_path: Option<String>,
    pub branch: Option<String>,
    pub base_rev: Option<String>,
    /// The branch the base was taken from (for "merged into the base branch").
    pub base_branch: Option<String>,
    /// The attempt this one replaced (retry or reassign).
    pub previous_thread_id: Option<String>,
    pub started_at: String,
    pub ended_at: Option<String>,
}

/// What a dispatch created, for a launcher to start a worker with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dispatch {
    pub task_id: String,
    pub attempt: u32,
    pub thread_id: String,
    pub assigned_to: String,
    pub worktree_path: Option<String>,
    pub branch: Option<String>,
    pub base_rev: Option<String>,
}

/// Params of `orch.runCreate`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunCreateParams {
    /// Defaults to `R<n>`, the next free number.
    #[serde(default)]
    pub run_id: Option<String>,
    pub goal: String,
    /// Defaults to `leader`.
    #[serde(default)]
    pub created_by: Option<String>,
    #[serde(default)]
    pub auto_retry: Option<u32>,
}

/// Params naming a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunRef {
    pub run_id: String,
}

/// Params of `orch.runCancel` and `orch.cancel`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CancelTaskParams {
    pub run_id: String,
    /// Cancel this task only; without it, the whole run.
    #[serde(default)]
    pub task_id: Option<String>,
    pub reason: String,
}

/// Result of `orch.runList`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunsResult {
    pub runs: Vec<Run>,
}

/// Result of `orch.runShow`, `orch.status` and `orch.cancel`: the run and all its tasks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunView {
    pub run: Run,
    pub tasks: Vec<Task>,
    pub event_id: i64,
}

/// Params of `orch.taskAdd`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TaskAddParams {
    pub run_id: String,
    pub task_id: String,
    pub title: String,
    #[serde(default)]
    pub body: Option<String>,
    #[serde(default)]
    pub acceptance: Option<String>,
    #[serde(default)]
    pub depends_on: Vec<String>,
    #[serde(default)]
    pub assign_to: Option<String>,
    #[serde(default)]
    pub role: Option<String>,
    #[serde(default)]
    pub priority: Option<Priority>,
    /// Defaults to `code`.
    #[serde(default)]
    pub kind: Option<TaskKind>,
    /// Defaults to 3.
    #[serde(default)]
    pub max_attempts: Option<u32>,
}

/// Params naming a task.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TaskRef {
    pub run_id: String,
    pub task_id: String,
}

/// Params of `orch.taskList` and `orch.ready`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TaskListParams {
    pub run_id: String,
    #[serde(default)]
    pub statuses: Vec<TaskStatus>,
    #[serde(default)]
    pub limit: Option<u32>,
}

/// Result of `orch.taskList`, `orch.ready` and `orch.reconcile`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TasksResult {
    pub tasks: Vec<Task>,
}

/// Result of `orch.taskShow`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskView {
    pub task: Task,
    pub dependents: Vec<String>,
    pub attempts: Vec<Attempt>,
}

/// Params of `orch.depAdd` and `orch.depRemove`: `task_id` depends on `on`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DepParams {
    pub run_id: String,
    pub task_id: String,
    pub on: String,
}

/// Params of `orch.dispatch`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DispatchParams {
    pub run_id: String,
    /// Dispatch this task (it must be ready); without it, `all_ready` must be set.
    #[serde(default)]
    pub task_id: Option<String>,
    #[serde(default)]
    pub all_ready: bool,
    /// Worker for every dispatched task (default: each task's `assign_to`).
    #[serde(default)]
    pub to: Option<String>,
    /// Git repository for code tasks (absolute path).
    #[serde(default)]
    pub repo: Option<String>,
    /// Base revision for worktrees (default HEAD).
    #[serde(default)]
    pub base: Option<String>,
    /// Refuse when the repository has uncommitted changes or the base is not a commit.
    #[serde(default)]
    pub strict: bool,
    /// Give code tasks no worktree.
    #[serde(default)]
    pub no_worktree: bool,
}

/// Result of `orch.dispatch`, `orch.retry` and `orch.reassign`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DispatchResult {
    pub dispatches: Vec<Dispatch>,
}

/// Params of `orch.retry` and `orch.reassign` (`to` is required for reassign).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RetryParams {
    pub run_id: String,
    pub task_id: String,
    #[serde(default)]
    pub to: Option<String>,
}

/// Params of `orch.answer`: reply in the current attempt's thread.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AnswerParams {
    pub run_id: String,
    pub task_id: String,
    /// Defaults to the run's creator.
    #[serde(default)]
    pub from: Option<String>,
    #[serde(flatten)]
    pub message: MessageInput,
}

/// A blocked task with the question that blocks it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlockedTask {
    pub task: Task,
    pub thread_id: String,
    pub worker: String,
    pub question: Option<Message>,
}

/// Result of `orch.blocked`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlockedResult {
    pub blocked: Vec<BlockedTask>,
}

/// Params of `orch.worktreeList` and `orch.worktreePrune`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WorktreeParams {
    #[serde(default)]
    pub run_id: Option<String>,
    /// Prune: also remove worktrees with unmerged commits or uncommitted changes.
    #[serde(default)]
    pub force: bool,
}

/// A worktree of an attempt, as listed or pruned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorktreeInfo {
    pub run_id: String,
    pub task_id: String,
    pub attempt: u32,
    pub path: String,
    pub branch: Option<String>,
    pub attempt_status: AttemptStatus,
    /// Whether the directory still exists.
    pub exists: bool,
    /// Prune: why it was kept, or what was removed.
    #[serde(default)]
    pub note: Option<String>,
}

/// Result of `orch.worktreeList` (`worktrees`) and `orch.worktreePrune` (`removed`, `kept`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WorktreesResult {
    #[serde(default)]
    pub worktrees: Vec<WorktreeInfo>,
    #[serde(default)]
    pub removed: Vec<WorktreeInfo>,
    #[serde(default)]
    pub kept: Vec<WorktreeInfo>,
}

/// Params of `orch.councilStart`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CouncilStartParams {
    pub run_id: String,
    pub topic: String,
    #[serde(default)]
    pub body: Option<String>,
    /// Defaults to `reviewer-1`, `reviewer-2`, `reviewer-3`.
    #[serde(default)]
    pub reviewers: Vec<String>,
}

/// Params naming a council.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CouncilRef {
    pub run_id: String,
    pub council_id: String,
}

/// One reviewer of a council, with its threads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CouncilMember {
    pub reviewer: String,
    pub brainstorm_thread_id: String,
    pub brainstorm_done: bool,
    pub vote_thread_id: Option<String>,
    pub vote_done: bool,
}

/// A group of recommendations with its votes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CouncilGroup {
    pub group_id: String,
    pub title: String,
    /// Every detail given for the group, by reviewer.
    pub details: Vec<ProposalDetail>,
    pub proposed_by: Vec<String>,
    pub approve: u32,
    pub reject: u32,
    pub abstain: u32,
    /// `approved`, `rejected` or `no_majority` (strict majority of reviewers).
    pub verdict: String,
}

/// What one reviewer proposed for a group.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProposalDetail {
    pub reviewer: String,
    pub title: String,
    pub detail: String,
}

/// A council review.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Council {
    pub run_id: String,
    pub council_id: String,
    pub topic: String,
    pub body: String,
    pub phase: CouncilPhase,
    pub members: Vec<CouncilMember>,
    /// Filled once voting starts.
    pub groups: Vec<CouncilGroup>,
    pub created_at: String,
    pub event_id: i64,
}
