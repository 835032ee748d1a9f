//! Entities, params and results of the orch methods: runs, tasks, attempts, councils.

use serde::{Deserialize, Serialize};

use super::*;

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
    /// The host whose daemon made the attempt (its worktree lives there); `null` for
    /// attempts recorded before hosts were.
    #[serde(default)]
    pub host: Option<String>,
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
    /// Merge each done code task into the run's integration branch automatically.
    #[serde(default)]
    pub auto_merge: bool,
}

/// Params naming a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunRef {
    pub run_id: String,
}

/// Params of `orch.runList`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunListParams {
    /// Only runs after this one, oldest first (a `next_after` of an earlier page).
    #[serde(default)]
    pub after: Option<String>,
}

/// Params of a list of one run's items (`orch.blocked`, `orch.councilList`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunPageParams {
    pub run_id: String,
    /// Only items after this one in the list's order (a `next_after` of an earlier page).
    #[serde(default)]
    pub after: Option<String>,
}

/// Params of `orch.cancel` and `orch.cancel`.
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
    /// The list stopped early to keep the reply under [`crate::MAX_REPLY_BYTES`]
    /// (protocol §1.7): continue with `after` = `next_after`.
    #[serde(default)]
    pub truncated: bool,
    /// Where to continue when `truncated`: the `run_id` of the last run returned.
    #[serde(default)]
    pub next_after: Option<String>,
}

/// Result of `orch.runShow`, `orch status` and `orch.cancel`: the run and all its tasks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunView {
    pub run: Run,
    pub tasks: Vec<Task>,
    pub event_id: i64,
    /// `tasks` stopped early to keep the reply under [`crate::MAX_REPLY_BYTES`]
    /// (protocol §1.7): continue with `orch.taskList`'s `after` = `next_after`.
    #[serde(default)]
    pub truncated: bool,
    /// Where to continue when `truncated`: the `task_id` of the last task returned.
    #[serde(default)]
    pub next_after: Option<String>,
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
    /// Only tasks after this one in the list's order (a `next_after` of an earlier page).
    #[serde(default)]
    pub after: Option<String>,
}

/// Result of `orch.taskList`, `orch.ready` and `orch.reconcile`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TasksResult {
    pub tasks: Vec<Task>,
    /// The list stopped early, before its `limit`, to keep the reply under
    /// [`crate::MAX_REPLY_BYTES`] (protocol §1.7): continue with `after` = `next_after`.
    #[serde(default)]
    pub truncated: bool,
    /// Where to continue when `truncated`: the `task_id` of the last task returned.
    #[serde(default)]
    pub next_after: Option<String>,
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
    /// The newest event the call recorded (0 when it recorded none): pass it to
    /// `orch wait --after-event` so nothing the workers do next is missed.
    #[serde(default)]
    pub event_id: i64,
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
    /// The list stopped early to keep the reply under [`crate::MAX_REPLY_BYTES`]
    /// (protocol §1.7): continue with `after` = `next_after`.
    #[serde(default)]
    pub truncated: bool,
    /// Where to continue when `truncated`: the `task_id` of the last blocked task returned.
    #[serde(default)]
    pub next_after: Option<String>,
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
    /// Worktrees of attempts made on other hosts (several daemons on one PostgreSQL
    /// store): they live there, so they are neither listed nor pruned here.
    #[serde(default)]
    pub other_hosts: u32,
    /// Integration branches `orch.worktreePrune` deleted: those of finished runs, merged
    /// into the run's base branch, with no worktree of the run left.
    #[serde(default)]
    pub removed_branches: Vec<String>,
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

/// Params of `orch.taskEdit`: the fields to change (omitted ones stay). Title, body and
/// acceptance only before the task is dispatched; the worker, priority, role and limits
/// any time before it is done (a live attempt keeps its worker: reassign moves it).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TaskEditParams {
    pub run_id: String,
    pub task_id: String,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub body: Option<String>,
    #[serde(default)]
    pub acceptance: Option<String>,
    #[serde(default)]
    pub priority: Option<Priority>,
    /// The worker dispatch gives it (`orch task assign`).
    #[serde(default)]
    pub assign_to: Option<String>,
    #[serde(default)]
    pub role: Option<String>,
    #[serde(default)]
    pub kind: Option<TaskKind>,
    #[serde(default)]
    pub max_attempts: Option<u32>,
}

/// Result of `orch.taskRemove`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskRemoveResult {
    pub run_id: String,
    pub task_id: String,
    /// Tasks that depended on it and lost that dependency.
    pub dependents: Vec<String>,
    pub event_id: i64,
}

/// Params of `orch.merge`: merge done code tasks into the run's integration branch.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MergeParams {
    pub run_id: String,
    /// This task; without it, every done task whose merge is pending.
    #[serde(default)]
    pub task_id: Option<String>,
}

/// What merging one task did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MergeOutcome {
    pub task_id: String,
    /// `merged` or `conflict`.
    pub state: MergeState,
    /// The task's branch.
    pub branch: String,
    pub integration_branch: String,
    /// The integration branch's new tip (merged), or its unchanged tip (conflict).
    pub commit: String,
    /// Commits the task brought (0: nothing to merge).
    pub commits: usize,
    /// Merged by moving the integration branch forward (no merge commit).
    pub fast_forward: bool,
    /// Conflicting files.
    #[serde(default)]
    pub conflicts: Vec<String>,
    /// The task opened to resolve the conflict.
    #[serde(default)]
    pub resolution_task: Option<String>,
    /// Files with uncommitted changes in the task's worktree: not merged (the worktree is
    /// kept).
    #[serde(default)]
    pub uncommitted: Vec<String>,
}

/// Result of `orch.merge`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MergeResult {
    pub merged: Vec<MergeOutcome>,
    pub event_id: i64,
}

/// Params of `orch.runFinish`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunFinishParams {
    pub run_id: String,
    /// The branch to merge into (default: the run's base branch).
    #[serde(default)]
    pub into: Option<String>,
}

/// Result of `orch.runFinish`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunFinishResult {
    pub run: Run,
    /// Tasks merged into the integration branch first.
    pub merged: Vec<MergeOutcome>,
    pub into: String,
    /// The branch's new tip.
    pub commit: String,
    pub fast_forward: bool,
    /// The branch already held everything.
    pub up_to_date: bool,
    pub event_id: i64,
}

/// Result of `orch.councilList`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CouncilsResult {
    pub councils: Vec<Council>,
    /// The list stopped early to keep the reply under [`crate::MAX_REPLY_BYTES`]
    /// (protocol §1.7): continue with `after` = `next_after`.
    #[serde(default)]
    pub truncated: bool,
    /// Where to continue when `truncated`: the `council_id` of the last council returned.
    #[serde(default)]
    pub next_after: Option<String>,
}
