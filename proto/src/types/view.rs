//! Read models that join several entities in one call (`view.*`), for dashboards and the
//! terminal view, and the dashboard listener's control (`dashboard.*`).

use serde::{Deserialize, Serialize};

use super::*;

/// An agent is `stale` when it holds a lease that ran out, or was last seen longer ago
/// than this (in seconds) while holding work.
pub const STALE_AFTER_SECONDS: u64 = 600;

string_enum!(
    /// What an agent is doing, as derived by `view.agents` (not its self-reported status).
    ActivityState {
        /// Holds a live lease on an open thread.
        Busy = "busy",
        /// Holds no open thread.
        Idle = "idle",
        /// Holds a thread whose lease ran out, or was not seen for a while with work held.
        Stale = "stale",
    }
);

/// Params of `view.agents`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AgentsViewParams {
    /// Only registered agents, leaving out those that were seen (named in a call) but never
    /// registered. Default: `false` (every agent is listed).
    #[serde(default)]
    pub registered_only: bool,
    /// Only agents after this one, by id (a `next_after` of an earlier page).
    #[serde(default)]
    pub after: Option<String>,
}

/// A thread an agent holds (claimed, in progress or blocked), with its lease.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HeldThread {
    /// The thread (`thr_…`).
    pub thread_id: String,
    /// The run (`run_…`).
    pub run_id: String,
    /// The task id, unique within its run.
    pub task_id: String,
    /// The subject.
    pub subject: String,
    /// Life-cycle state.
    pub status: ThreadStatus,
    /// The lease.
    pub lease: Option<LeaseView>,
}

/// One agent with its live picture.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AgentOverview {
    /// Agent name.
    pub agent: Agent,
    /// What the agent is doing now.
    pub activity: ActivityState,
    /// Queued mail in the agent's session mailbox (its own and its running tasks').
    pub pending: u64,
    /// How many of them are urgent.
    pub urgent: u64,
    /// Open threads the agent holds, newest lease first.
    pub threads: Vec<HeldThread>,
    /// The agent's tasks that failed and stand failed: the task's current attempt is this
    /// agent's failed thread (not retried or reassigned since). At most 50, newest first;
    /// empty when none (the dashboard's "failed" state).
    #[serde(default)]
    pub failed_tasks: Vec<HeldThread>,
}

/// Result of `view.agents`: every agent sorted by id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AgentsView {
    /// The agents.
    pub agents: Vec<AgentOverview>,
    /// The newest event when the view was read: subscribe after it.
    pub last_event_id: i64,
    /// `agents` stopped early to keep the reply under [`crate::MAX_REPLY_BYTES`]
    /// (protocol §1.7): continue with `after` = `next_after`.
    #[serde(default)]
    pub truncated: bool,
    /// Where to continue when `truncated`: the id of the last agent returned.
    #[serde(default)]
    pub next_after: Option<String>,
}

/// Params of `view.run`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunViewParams {
    /// The run.
    pub run_id: String,
    /// Only tasks after this one in the run's order (a `next_after` of an earlier page).
    #[serde(default)]
    pub after: Option<String>,
}

/// A task as a node of the run's graph.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GraphTask {
    /// The task.
    pub task: Task,
    /// The agent of the current attempt (not the default assignee), if dispatched.
    pub worker: Option<String>,
    /// The current attempt's thread.
    pub thread_id: Option<String>,
    /// For a blocked task: the question that blocks it.
    pub question: Option<Message>,
    /// For a failed task: the message that failed it (its summary is the reason).
    pub failure: Option<Message>,
    /// The latest merge candidate of its current attempt (review, queue position, a
    /// failed verify's output), if it has one.
    #[serde(default)]
    pub candidate: Option<MergeCandidate>,
}

/// Result of `view.run`: the run, its tasks as a graph (edges are `task.depends_on`) and
/// its councils.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunGraph {
    /// The run.
    pub run: Run,
    /// The tasks.
    pub tasks: Vec<GraphTask>,
    /// The councils.
    pub councils: Vec<Council>,
    /// The sessions launchers started for the run's attempts, oldest first.
    #[serde(default)]
    pub sessions: Vec<LaunchSession>,
    /// Tokens and cost of the run's sessions, summed per task and agent, and the run's
    /// budget (as `launch.usageShow` returns them; its `sessions` left empty here).
    #[serde(default)]
    pub usage: Option<UsageReport>,
    /// The newest event the view reflects; subscribe after it to follow changes.
    pub last_event_id: i64,
    /// `tasks` stopped early to keep the reply under [`crate::MAX_REPLY_BYTES`]
    /// (protocol §1.7): continue with `after` = `next_after`.
    #[serde(default)]
    pub truncated: bool,
    /// Where to continue when `truncated`: the `task_id` of the last task returned.
    #[serde(default)]
    pub next_after: Option<String>,
}

/// Params of `view.timeline`: who sent what to whom, newest first. At most one of
/// `agent`, `thread_id` and `run_id` narrows it; none gives the whole project.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TimelineParams {
    /// Mail sent by or to this agent.
    #[serde(default)]
    pub agent: Option<String>,
    /// Only this thread.
    #[serde(default)]
    pub thread_id: Option<String>,
    /// Only this run.
    #[serde(default)]
    pub run_id: Option<String>,
    /// Only copies of messages older than this event (paging backwards).
    #[serde(default)]
    pub before_event: Option<i64>,
    /// Default 200, at most 1000.
    #[serde(default)]
    pub limit: Option<u32>,
}

/// Default and largest `limit` of `view.timeline`.
pub const TIMELINE_LIMIT_DEFAULT: u32 = 200;
/// See [`TIMELINE_LIMIT_DEFAULT`].
pub const TIMELINE_LIMIT_MAX: u32 = 1000;

/// Result of `view.timeline`: one entry per message and recipient, newest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TimelineView {
    /// The items.
    pub items: Vec<MailItem>,
    /// The newest event the view reflects; subscribe after it to follow changes.
    pub last_event_id: i64,
    /// The list stopped early, before its `limit`, to keep the reply under
    /// [`crate::MAX_REPLY_BYTES`] (protocol §1.7): continue with `before_event` = `next_after`.
    #[serde(default)]
    pub truncated: bool,
    /// Where to continue when `truncated`: the `event_id` of the last (oldest) item returned.
    #[serde(default)]
    pub next_after: Option<i64>,
}

/// Params of `dashboard.start`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DashboardStartParams {
    /// Loopback port to listen on; default: the port already in use, else a free one.
    #[serde(default)]
    pub port: Option<u16>,
    /// The person the page acts as (an agent name); default: the one in use, else
    /// `overseer`. The page writes only as them.
    #[serde(default)]
    pub overseer: Option<String>,
}

/// Result of `dashboard.start` and `dashboard.status`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DashboardInfo {
    /// Whether the dashboard listener is running.
    pub running: bool,
    /// `http://127.0.0.1:PORT/TOKEN/` (none when not running). The token in it is the only
    /// credential: keep the URL private.
    pub url: Option<String>,
    /// TCP port it listens on.
    pub port: Option<u16>,
    /// When it started.
    pub started_at: Option<String>,
    /// The person the page acts as (none when not running).
    #[serde(default)]
    pub overseer: Option<String>,
}

/// Result of `dashboard.stop`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DashboardStopResult {
    /// False when no dashboard was being served.
    pub stopped: bool,
}
