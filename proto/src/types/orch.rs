//! Entities, params and results of the orch methods: runs, tasks, attempts, councils.

use serde::{Deserialize, Serialize};

use super::*;

/// A run: one goal, decomposed into tasks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Run {
    /// §2.3.
    pub run_id: String,
    /// What the run is for.
    pub goal: String,
    /// Life-cycle state.
    pub status: RunStatus,
    /// The leader (default `"leader"`).
    pub created_by: String,
    /// Automatic retries per failed task (0: none).
    pub auto_retry: u32,
    /// When it was created.
    pub created_at: String,
    /// Last status change.
    pub updated_at: String,
    /// Merge each done code task into the integration branch as soon as it is done.
    #[serde(default)]
    pub auto_merge: bool,
    /// The git repository of the run's code tasks (set by its first code dispatch).
    #[serde(default)]
    pub repo: Option<String>,
    /// The branch the run started from, where `orch.runFinish` merges it (e.g. `main`).
    #[serde(default)]
    pub base_branch: Option<String>,
    /// The commit the integration branch started from.
    #[serde(default)]
    pub base_rev: Option<String>,
    /// `orch/<run>/integration`: done code tasks are merged here, and tasks branch from it.
    #[serde(default)]
    pub integration_branch: Option<String>,
    /// The command every merge candidate must pass before it lands (the merge queue);
    /// `null`: merges are not verified.
    #[serde(default)]
    pub verify: Option<String>,
    /// A done code task merges only once a reviewer approved it.
    #[serde(default)]
    pub require_approval: bool,
    /// How many times the merge queue sends a task back to its worker (a failed verify,
    /// a conflict) before it fails the task (default 2).
    #[serde(default)]
    pub merge_retries: u32,
}

/// A task of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Task {
    /// The run (`run_…`).
    pub run_id: String,
    /// The task id, unique within its run.
    pub task_id: String,
    /// Title.
    pub title: String,
    /// `""` if none.
    pub body: String,
    /// Acceptance criteria, `""` if none.
    pub acceptance: String,
    /// Priority.
    pub priority: Priority,
    /// Preferred worker (used by dispatch when no `to` is given).
    pub assign_to: Option<String>,
    /// Role hint for launchers.
    pub role: Option<String>,
    /// Kind.
    pub kind: TaskKind,
    /// How many attempts the task may use.
    pub max_attempts: u32,
    /// Life-cycle state.
    pub status: TaskStatus,
    /// Number of the current (latest) attempt; 0 before the first dispatch.
    pub attempt: u32,
    /// Tasks this one depends on.
    pub depends_on: Vec<String>,
    /// When it was created.
    pub created_at: String,
    /// Last status change.
    pub updated_at: String,
    /// For a done code task with a branch: whether its work is in the integration branch
    /// (`pending` until merged; dependents wait for `merged`).
    #[serde(default)]
    pub merge_state: Option<MergeState>,
    /// The integration branch's commit that holds the task's work, once merged.
    #[serde(default)]
    pub merge_commit: Option<String>,
    /// A task opened to resolve the merge conflict of this other task.
    #[serde(default)]
    pub resolves: Option<String>,
    /// This task's own verify command, over the run's; `""`: none for this task.
    #[serde(default)]
    pub verify: Option<String>,
}

/// One attempt at a task: an inbox thread, and a git worktree for code tasks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Attempt {
    /// The run (`run_…`).
    pub run_id: String,
    /// The task id, unique within its run.
    pub task_id: String,
    /// 1, 2, ...
    pub attempt: u32,
    /// The attempt's inbox thread.
    pub thread_id: String,
    /// The agent it was dispatched to (a claim by another agent does not change it).
    pub worker: String,
    /// Life-cycle state.
    pub status: AttemptStatus,
    /// Repository path, when the attempt has a worktree.
    pub repo: Option<String>,
    /// The attempt's git worktree, `""` for a thread task.
    pub worktree_path: Option<String>,
    /// `orch/<run>/<task>/a<n>`.
    pub branch: Option<String>,
    /// Full commit id the branch started from.
    pub base_rev: Option<String>,
    /// The branch the base was taken from (for "merged into the base branch").
    pub base_branch: Option<String>,
    /// The attempt this one replaced (retry or reassign).
    pub previous_thread_id: Option<String>,
    /// When it started.
    pub started_at: String,
    /// When the attempt stopped being live.
    pub ended_at: Option<String>,
    /// The host whose daemon made the attempt (its worktree lives there); `null` for
    /// attempts recorded before hosts were.
    #[serde(default)]
    pub host: Option<String>,
}

/// What a dispatch created, for a launcher to start a worker with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Dispatch {
    /// The task id, unique within its run.
    pub task_id: String,
    /// Attempt number, from 1.
    pub attempt: u32,
    /// The new thread. The worker claims it with `inbox.claim`.
    pub thread_id: String,
    /// The worker.
    pub assigned_to: String,
    /// Where the worker works, or `null` without a worktree.
    pub worktree_path: Option<String>,
    /// Git branch of the attempt.
    pub branch: Option<String>,
    /// Git revision the branch starts from.
    pub base_rev: Option<String>,
}

/// Params of `orch.runCreate`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunCreateParams {
    /// Defaults to `R<n>`, the next free number.
    #[serde(default)]
    pub run_id: Option<String>,
    /// What the run is for. Not blank, ≤ 4000 characters.
    pub goal: String,
    /// The run's creator, its lead. Defaults to the agent the connection authenticated as
    /// (when it authenticated as exactly one), else `leader`.
    #[serde(default)]
    pub created_by: Option<String>,
    /// Automatic retries per failed task (§2.7). Default: 0.
    #[serde(default)]
    pub auto_retry: Option<u32>,
    /// Merge each done code task into the run's integration branch automatically.
    #[serde(default)]
    pub auto_merge: bool,
    /// The verify command of the merge queue (`sh -c`, in a scratch worktree of each
    /// merge result). Default: none. ≤ 4000 characters.
    #[serde(default)]
    pub verify: Option<String>,
    /// A done code task merges only once a reviewer approved it. Default: false.
    #[serde(default)]
    pub require_approval: bool,
    /// How many times the merge queue sends a task back to its worker. Default: 2.
    #[serde(default)]
    pub merge_retries: Option<u32>,
}

/// Params naming a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunRef {
    /// The run (`run_…`).
    pub run_id: String,
}

/// Params of `orch.runList`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunListParams {
    /// Only runs after this one, oldest first (a `next_after` of an earlier page).
    #[serde(default)]
    pub after: Option<String>,
}

/// Params of a list of one run's items (`orch.blocked`, `orch.councilList`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunPageParams {
    /// The run.
    pub run_id: String,
    /// Only items after this one in the list's order (a `next_after` of an earlier page).
    #[serde(default)]
    pub after: Option<String>,
}

/// Params of `orch.cancel` and `orch.cancel`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CancelTaskParams {
    /// The run.
    pub run_id: String,
    /// Cancel this task only; without it, the whole run.
    #[serde(default)]
    pub task_id: Option<String>,
    /// Not blank, ≤ 4000 characters.
    pub reason: String,
}

/// Result of `orch.runList`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunsResult {
    /// The runs.
    pub runs: Vec<Run>,
    /// The list stopped early to keep the reply under [`crate::MAX_REPLY_BYTES`]
    /// (protocol §1.7): continue with `after` = `next_after`.
    #[serde(default)]
    pub truncated: bool,
    /// Where to continue when `truncated`: the `run_id` of the last run returned.
    #[serde(default)]
    pub next_after: Option<String>,
}

/// Result of `orch.runShow`, `orch status` and `orch.cancel`: the run and all its tasks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunView {
    /// The run.
    pub run: Run,
    /// The tasks.
    pub tasks: Vec<Task>,
    /// The event that recorded the change; usable as an `after_event` cursor.
    pub event_id: i64,
    /// `tasks` stopped early to keep the reply under [`crate::MAX_REPLY_BYTES`]
    /// (protocol §1.7): continue with `orch.taskList`'s `after` = `next_after`.
    #[serde(default)]
    pub truncated: bool,
    /// Where to continue when `truncated`: the `task_id` of the last task returned.
    #[serde(default)]
    pub next_after: Option<String>,
    /// `orch.runShow`: the run's open merge candidates (in review, waiting, queued or
    /// verifying), in queue order.
    #[serde(default)]
    pub queue: Vec<MergeCandidate>,
}

/// Params of `orch.taskAdd`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TaskAddParams {
    /// The run.
    pub run_id: String,
    /// Unique in the run (§2.4).
    pub task_id: String,
    /// Not blank, ≤ 4000 characters. Becomes the dispatched thread's summary and, as `[run/task]
    /// title`, its subject.
    pub title: String,
    /// Instructions for the worker. Default: `""`.
    #[serde(default)]
    pub body: Option<String>,
    /// Acceptance criteria, passed to the worker. Default: `""`.
    #[serde(default)]
    pub acceptance: Option<String>,
    /// Tasks of the same run that must be `done` first. Entries are trimmed; blank entries and
    /// duplicates are dropped. Each must already exist. Default: `[]`.
    #[serde(default)]
    pub depends_on: Vec<String>,
    /// The worker `orch.dispatch` uses when it is given no `to`. Default: null.
    #[serde(default)]
    pub assign_to: Option<String>,
    /// Free hint for launchers, stored as given. Default: null.
    #[serde(default)]
    pub role: Option<String>,
    /// Order in `orch.ready`; also the dispatched thread's priority. Default: `normal`.
    #[serde(default)]
    pub priority: Option<Priority>,
    /// Defaults to `code`.
    #[serde(default)]
    pub kind: Option<TaskKind>,
    /// Defaults to 3.
    #[serde(default)]
    pub max_attempts: Option<u32>,
    /// Its own verify command, over the run's (`""`: none for this task). Default: the
    /// run's.
    #[serde(default)]
    pub verify: Option<String>,
}

/// Params naming a task.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TaskRef {
    /// The run (`run_…`).
    pub run_id: String,
    /// The task id, unique within its run.
    pub task_id: String,
}

/// Params of `orch.taskList` and `orch.ready`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TaskListParams {
    /// The run.
    pub run_id: String,
    /// Only these statuses. Default: all.
    #[serde(default)]
    pub statuses: Vec<TaskStatus>,
    /// If given, 1 to 10000. Default: none (every task).
    #[serde(default)]
    pub limit: Option<u32>,
    /// Only tasks after this one in the list's order (a `next_after` of an earlier page).
    #[serde(default)]
    pub after: Option<String>,
}

/// Result of `orch.taskList`, `orch.ready` and `orch.reconcile`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TasksResult {
    /// The tasks.
    pub tasks: Vec<Task>,
    /// The list stopped early, before its `limit`, to keep the reply under
    /// [`crate::MAX_REPLY_BYTES`] (protocol §1.7): continue with `after` = `next_after`.
    #[serde(default)]
    pub truncated: bool,
    /// Where to continue when `truncated`: the `task_id` of the last task returned.
    #[serde(default)]
    pub next_after: Option<String>,
}

/// Params of `orch.taskShow`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TaskShowParams {
    /// The run (`run_…`).
    pub run_id: String,
    /// The task id, unique within its run.
    pub task_id: String,
    /// Only attempts after this number (a `next_after` of an earlier page).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_attempt: Option<u32>,
}

impl From<TaskRef> for TaskShowParams {
    fn from(r: TaskRef) -> Self {
        TaskShowParams { run_id: r.run_id, task_id: r.task_id, after_attempt: None }
    }
}

/// Result of `orch.taskShow` (and of the calls that change a task).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TaskView {
    /// The task.
    pub task: Task,
    /// The dependents.
    pub dependents: Vec<String>,
    /// The attempts, oldest first.
    pub attempts: Vec<Attempt>,
    /// `attempts` stopped early to keep the reply under [`crate::MAX_REPLY_BYTES`]
    /// (protocol §1.7): continue with `orch.taskShow` and `after_attempt` = `next_after`.
    #[serde(default)]
    pub truncated: bool,
    /// Where to continue when `truncated`: the number of the last attempt returned.
    #[serde(default)]
    pub next_after: Option<u32>,
}

/// Params of `orch.depAdd` and `orch.depRemove`: `task_id` depends on `on`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DepParams {
    /// The run.
    pub run_id: String,
    /// The dependent task.
    pub task_id: String,
    /// The task it depends on.
    pub on: String,
}

/// Params of `orch.dispatch`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(extend("oneOf" = [
    {"required": ["task_id"], "properties": {"task_id": {"type": "string"}, "all_ready": {"const": false}}},
    {
        "required": ["all_ready"],
        "properties": {"all_ready": {"const": true}},
        "not": {"required": ["task_id"], "properties": {"task_id": {"type": "string"}}}
    }
]))]
pub struct DispatchParams {
    /// The run.
    pub run_id: String,
    /// Dispatch this task (it must be ready); without it, `all_ready` must be set.
    #[serde(default)]
    pub task_id: Option<String>,
    /// Dispatch every ready task instead (in `orch.ready` order). Default: `false`.
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DispatchResult {
    /// The dispatches.
    pub dispatches: Vec<Dispatch>,
    /// The newest event the call recorded (0 when it recorded none): pass it to
    /// `orch wait --after-event` so nothing the workers do next is missed.
    #[serde(default)]
    pub event_id: i64,
}

/// Params of `orch.retry`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RetryParams {
    /// The run.
    pub run_id: String,
    /// The task.
    pub task_id: String,
    /// The worker of the new attempt. Default: the previous attempt's worker, else the task's
    /// `assign_to` (`invalid_input` when the task has neither).
    #[serde(default)]
    pub to: Option<String>,
}

/// Params of `orch.reassign`: the same as a retry's, with the new worker required.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(transform = super::require("to"))]
pub struct ReassignParams {
    /// The run.
    pub run_id: String,
    /// The live task.
    pub task_id: String,
    /// The new worker; it must differ from the current attempt's worker. Required
    /// (`invalid_input` without it).
    #[serde(default)]
    pub to: Option<String>,
}

impl From<ReassignParams> for RetryParams {
    fn from(p: ReassignParams) -> Self {
        RetryParams { run_id: p.run_id, task_id: p.task_id, to: p.to }
    }
}

/// Params of `orch.answer`: reply in the current attempt's thread.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AnswerParams {
    /// The run.
    pub run_id: String,
    /// The task.
    pub task_id: String,
    /// Defaults to the run's creator.
    #[serde(default)]
    pub from: Option<String>,
    /// The message.
    #[serde(flatten)]
    pub message: MessageInput,
}

/// A blocked task with the question that blocks it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BlockedTask {
    /// The task.
    pub task: Task,
    /// The thread (`thr_…`).
    pub thread_id: String,
    /// The agent working on it.
    pub worker: String,
    /// The question the worker asked.
    pub question: Option<Message>,
}

/// Result of `orch.blocked`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BlockedResult {
    /// The blocked.
    pub blocked: Vec<BlockedTask>,
    /// The list stopped early to keep the reply under [`crate::MAX_REPLY_BYTES`]
    /// (protocol §1.7): continue with `after` = `next_after`.
    #[serde(default)]
    pub truncated: bool,
    /// Where to continue when `truncated`: the `task_id` of the last blocked task returned.
    #[serde(default)]
    pub next_after: Option<String>,
}
