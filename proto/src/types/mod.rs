//! Entities, parameters and results of the protocol: the enums here, the inbox and
//! system types in [`inbox`], the orch types in [`orch`] (all re-exported from here).
//!
//! Every method takes exactly one params object and returns one result object. Optional
//! fields may be omitted on the wire. Timestamps are RFC 3339 UTC strings with millisecond
//! precision (`2026-11-22T00:51:39.123Z`), fixed width, so they sort as text.

use serde::{Deserialize, Serialize};

macro_rules! string_enum {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $var:ident = $s:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
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
        /// Created and not yet claimed.
        Pending = "pending",
        /// A lease was just granted (by any claim, including a re-claim).
        Claimed = "claimed",
        /// The holder reported progress, or a blocked thread received an `answer`.
        InProgress = "in_progress",
        /// The holder asked a question and waits.
        Blocked = "blocked",
        /// Finished successfully. Terminal.
        Done = "done",
        /// Finished unsuccessfully. Terminal.
        Failed = "failed",
        /// Cancelled by someone. Terminal.
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
        /// The attempt's thread is claimed or in progress.
        InProgress = "in_progress",
        /// The worker asked a question.
        Blocked = "blocked",
        /// The current attempt's thread is done. Terminal.
        Done = "done",
        /// The current attempt's thread failed. Terminal, but `orch.retry` can open a new attempt.
        Failed = "failed",
        /// Cancelled. Terminal, but `orch.retry` can open a new attempt.
        Cancelled = "cancelled",
    }
);

impl TaskStatus {
    /// Done, failed and cancelled tasks take no further attempt unless retried.
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
        /// Work remains.
        Active = "active",
        /// Every task is done or cancelled, at least one done.
        Done = "done",
        /// Some task failed with no automatic retry pending.
        Failed = "failed",
        /// Terminal: the run accepts no further orch writes.
        Cancelled = "cancelled",
    }
);

string_enum!(
    /// Whether a done code task's work is in its run's integration branch.
    MergeState {
        /// Done, waiting for `orch merge` (or the run's automatic merge).
        Pending = "pending",
        /// In the integration branch.
        Merged = "merged",
        /// The merge conflicted; a resolution task was opened (a run without a verify
        /// command), or the task went back to its worker (the merge queue).
        Conflict = "conflict",
    }
);

string_enum!(
    /// What a task's attempt gets: `code` a git worktree, `thread` only an inbox thread.
    TaskKind {
        /// The default: each attempt gets a git worktree.
        Code = "code",
        /// An inbox thread only.
        Thread = "thread",
    }
);

string_enum!(
    /// State of one attempt at a task.
    AttemptStatus {
        /// Its thread is open.
        Live = "live",
        /// Its thread is done.
        Done = "done",
        /// Its thread failed.
        Failed = "failed",
        /// Cancelled, or replaced by a reassign.
        Cancelled = "cancelled",
    }
);

string_enum!(
    /// Phase of a council review.
    CouncilPhase {
        /// Reviewers write recommendations.
        Brainstorm = "brainstorm",
        /// Reviewers vote on the grouped recommendations.
        Voting = "voting",
        /// Every reviewer voted.
        Done = "done",
        /// The run was cancelled while the council was open.
        Cancelled = "cancelled",
    }
);

string_enum!(
    /// Kind of a message inside a thread.
    MessageKind {
        /// The work itself (a new thread's first message).
        Task = "task",
        /// A progress report.
        Progress = "progress",
        /// The holder asks a question (blocks the thread).
        Question = "question",
        /// An answer to a question.
        Answer = "answer",
        /// The final message of a done or failed thread.
        Result = "result",
        /// A control message (cancel, typed messages).
        Control = "control",
        /// Accepted by `inbox.send`; no daemon operation produces it by itself.
        Event = "event",
    }
);

impl MessageKind {
    /// What a blocked worker waits for (`inbox wait-reply`, the MCP `wait_reply`).
    pub const REPLIES: &'static [MessageKind] = &[MessageKind::Answer, MessageKind::Control, MessageKind::Result];
}

string_enum!(
    /// Priority of a thread; `fetch` returns higher priorities first.
    Priority {
        /// Served last.
        Low = "low",
        /// The default.
        Normal = "normal",
        /// Served before `normal`.
        High = "high",
        /// Sessions surface urgent mail first (and a Stop hook blocks on it).
        Urgent = "urgent",
    }
);

impl Priority {
    /// Rank for ordering: higher comes first (urgent 3, high 2, normal 1, low 0).
    pub const fn rank(self) -> i64 {
        match self {
            Priority::Urgent => 3,
            Priority::High => 2,
            Priority::Normal => 1,
            Priority::Low => 0,
        }
    }
}

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
        /// Reconcile: the attempt's thread is done.
        TaskDone = "task.done",
        /// Reconcile: the attempt's thread failed.
        TaskFailed = "task.failed",
        /// The attempt's thread was cancelled, or `orch.cancel` of a task without a live attempt.
        TaskCancelled = "task.cancelled",
        /// orch: a council review started (brainstorm threads opened).
        CouncilStarted = "council.started",
        /// orch: every reviewer brainstormed; vote threads opened.
        CouncilVoting = "council.voting",
        /// orch: every reviewer voted.
        CouncilDone = "council.done",
        /// An agent registered (or re-registered with `force_update`).
        AgentRegistered = "agent.registered",
        /// An agent's heartbeat changed its status.
        AgentStatus = "agent.status",
        /// A recipient read a message.
        MailRead = "mail.read",
        /// A recipient acknowledged a message.
        MailAcked = "mail.acked",
        /// A reservation was granted (or extended by its owner).
        ReservationCreated = "reservation.created",
        /// The owner released a reservation.
        ReservationReleased = "reservation.released",
        /// A stale reservation was taken over by another agent.
        ReservationExpired = "reservation.expired",
        /// A project setting or role changed through `inbox.init`: strict agents, required
        /// credentials, the lead or the admins (one event per change).
        SettingsChanged = "settings.changed",
        /// Queued mail was delivered into a session (`mail.check`).
        MailDelivered = "mail.delivered",
        /// The sender took back a message before it was delivered.
        MailWithdrawn = "mail.withdrawn",
        /// Two tasks were linked as peers.
        PeersLinked = "peers.linked",
        /// The permission policy changed (`policy.set`).
        PolicyChanged = "policy.changed",
        /// orch: a done task's branch was merged into the run's integration branch.
        TaskMerged = "task.merged",
        /// orch: merging a done task's branch into the integration branch conflicted; the
        /// payload names the files and the task opened to resolve it.
        TaskMergeConflict = "task.merge_conflict",
        /// orch: a task's title, body, acceptance, priority, worker or limits changed.
        TaskEdited = "task.edited",
        /// orch: a task that was never dispatched was removed from its run.
        TaskRemoved = "task.removed",
        /// orch: the run's integration branch was merged into its base branch.
        RunMerged = "run.merged",
        /// A launcher started a worker session for an attempt (`launch.sessionStart`).
        LaunchStarted = "launch.started",
        /// A launched session ended (`launch.sessionExit`).
        LaunchExited = "launch.exited",
        /// orch: a done task's merge candidate entered the run's merge queue (or entered it
        /// again: the integration tip moved while it was verified).
        TaskMergeQueued = "task.merge_queued",
        /// orch: the merge queue verifies a candidate (the integration tip + its branch).
        TaskVerifying = "task.verifying",
        /// orch: a candidate's verify command failed: nothing landed; the payload has its
        /// last output lines and the attempt it went back to its worker as.
        TaskVerifyFailed = "task.verify_failed",
        /// orch: a reviewer approved a done task's work.
        TaskApproved = "task.approved",
        /// orch: a reviewer requested changes; the comments went to the worker.
        TaskChangesRequested = "task.changes_requested",
        /// orch: a reviewer commented on a line of a task's diff.
        TaskCommented = "task.commented",
        /// orch: a run's settings changed (verify command, approval, automatic merge,
        /// merge retries).
        RunEdited = "run.edited",
        /// A running session's last log lines changed (`launch.sessionTail`).
        LaunchTail = "launch.tail",
        /// A session's reported usage grew (`launch.usage`).
        LaunchUsage = "launch.usage",
        /// A run's or a session's budget was set or removed (`launch.budgetSet`).
        LaunchBudgetSet = "launch.budget_set",
        /// A run's usage reached its budget: its launcher starts and dispatches nothing more.
        RunBudgetReached = "run.budget_reached",
    }
);

impl EventType {
    /// The events the inbox layer writes (what `inbox watch` follows).
    pub const INBOX: &'static [EventType] = &[
        EventType::ThreadCreated,
        EventType::MessageSent,
        EventType::ThreadClaimed,
        EventType::LeaseRenewed,
        EventType::ThreadProgress,
        EventType::ThreadBlocked,
        EventType::ThreadReplied,
        EventType::ThreadDone,
        EventType::ThreadFailed,
        EventType::ThreadCancelled,
        EventType::LeaseExpired,
        EventType::AgentRegistered,
        EventType::AgentStatus,
        EventType::MailRead,
        EventType::MailAcked,
        EventType::ReservationCreated,
        EventType::ReservationReleased,
        EventType::ReservationExpired,
        EventType::SettingsChanged,
        EventType::MailDelivered,
        EventType::MailWithdrawn,
        EventType::PeersLinked,
        EventType::PolicyChanged,
    ];

    /// The events `orch wait` returns: the ones a leader has to act on.
    pub const ACTIONABLE: &'static [EventType] = &[
        EventType::TaskReady,
        EventType::TaskBlocked,
        EventType::TaskDone,
        EventType::TaskFailed,
        EventType::TaskMergeConflict,
        EventType::TaskVerifyFailed,
        EventType::TaskChangesRequested,
        EventType::LeaseExpired,
        EventType::RunDone,
        EventType::RunFailed,
        EventType::RunBudgetReached,
        EventType::CouncilVoting,
        EventType::CouncilDone,
    ];
}

mod agents;
mod control;
mod event_payloads;
mod inbox;
mod inbox_calls;
mod launch;
mod merge_queue;
mod orch;
mod orch_review;
mod payloads;
mod policy;
mod reservations;
mod search;
mod sessions;
mod usage;

pub use agents::*;
pub use control::*;
pub use inbox::*;
pub use inbox_calls::*;
pub use launch::*;
pub use merge_queue::*;
pub use orch::*;
pub use orch_review::*;
pub use payloads::*;
pub use policy::*;
pub use reservations::*;
pub use search::*;
pub use sessions::*;
pub use usage::*;

mod view;
pub use view::*;

/// A schema transform: `field` is required, though its Rust type is an `Option` (the daemon
/// answers its absence with an error of its own, such as `missing_task_id`, rather than
/// `-32602`).
pub(crate) fn require(field: &'static str) -> impl FnMut(&mut schemars::Schema) {
    move |schema: &mut schemars::Schema| {
        if let Some(obj) = schema.as_object_mut() {
            let required = obj.entry("required").or_insert_with(|| serde_json::Value::Array(Vec::new()));
            if let Some(list) = required.as_array_mut()
                && !list.iter().any(|v| v == field)
            {
                list.push(field.into());
            }
        }
    }
}
