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
}

/// Params naming a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunRef {
    pub run_id: String,
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
}

/// Result of `orch.runShow`, `orch status` and `orch.cancel`: the run and all its tasks.
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
    /// Worktrees of attempts made on other hosts (several daemons on one PostgreSQL
    /// store): they live there, so they are neither listed nor pruned here.
    #[serde(default)]
    pub other_hosts: u32,
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
