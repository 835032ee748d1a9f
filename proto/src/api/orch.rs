//! `orch.*`: the leader's control plane (runs, the task graph, dispatch into worktrees,
//! answers, retries, councils).

use jsonrpsee::core::RpcResult;
use jsonrpsee::proc_macros::rpc;

use crate::types::*;

#[rpc(server, client)]
pub trait OrchApi {
    /// Create a run.
    ///
    /// Events: `run.created`.
    #[method(name = "orch.runCreate")]
    async fn run_create(&self, params: RunCreateParams) -> RpcResult<RunView>;

    /// Every run, oldest first (`created_at`, then `run_id`).
    #[method(name = "orch.runList")]
    async fn run_list(&self, params: RunListParams) -> RpcResult<RunsResult>;

    /// The run with all its tasks (what `orch status` draws).
    #[method(name = "orch.runShow")]
    async fn run_show(&self, params: RunRef) -> RpcResult<RunView>;

    /// Add a task to a run.
    ///
    /// Events: `task.added` (+ `task.ready`, `run.resumed`).
    #[method(name = "orch.taskAdd")]
    async fn task_add(&self, params: TaskAddParams) -> RpcResult<TaskView>;

    /// The tasks of a run, filtered by status if asked.
    #[method(name = "orch.taskList")]
    async fn task_list(&self, params: TaskListParams) -> RpcResult<TasksResult>;

    /// One task with the ids of the tasks that depend on it and its attempts, oldest first
    /// (bounded by bytes: `after_attempt` continues).
    #[method(name = "orch.taskShow")]
    async fn task_show(&self, params: TaskShowParams) -> RpcResult<TaskView>;

    /// Make `task_id` depend on `on`.
    ///
    /// Events: (`task.ready`) + `task.deps_changed`.
    #[method(name = "orch.depAdd")]
    async fn dep_add(&self, params: DepParams) -> RpcResult<TaskView>;

    /// Make `task_id` stop depending on `on`.
    ///
    /// Events: (`task.ready`) + `task.deps_changed`.
    #[method(name = "orch.depRemove")]
    async fn dep_remove(&self, params: DepParams) -> RpcResult<TaskView>;

    /// Ready tasks, highest priority first, then oldest.
    #[method(name = "orch.ready")]
    async fn ready(&self, params: TaskListParams) -> RpcResult<TasksResult>;

    /// Hand ready tasks to workers. A dispatch is the durable handoff, not the execution: for
    /// each task it creates attempt N (its first is 1), the attempt's inbox thread and, for a
    /// `code` task, a git worktree on a new branch; the task becomes `dispatched`. Starting
    /// the worker process is up to the caller (a launcher), which gets what it needs in the
    /// result.
    ///
    /// Events: per task: `thread.created`, `task.dispatched`.
    #[method(name = "orch.dispatch")]
    async fn dispatch(&self, params: DispatchParams) -> RpcResult<DispatchResult>;

    /// Re-derive every task's status from its threads; returns the tasks that changed.
    ///
    /// Events: whatever the repairs imply.
    #[method(name = "orch.reconcile")]
    async fn reconcile(&self, params: RunRef) -> RpcResult<TasksResult>;

    /// Blocked tasks, each with the question that blocks it.
    #[method(name = "orch.blocked")]
    async fn blocked(&self, params: RunPageParams) -> RpcResult<BlockedResult>;

    /// Answer a blocked task's question in the current attempt's thread: the same as
    /// `inbox.reply` with kind `answer`, sent to the attempt's worker. It wakes the worker's
    /// `inbox wait-reply`, and the task goes back to `in_progress`.
    ///
    /// Events: `thread.replied` (+ `task.in_progress`).
    #[method(name = "orch.answer")]
    async fn answer(&self, params: AnswerParams) -> RpcResult<MessageResult>;

    /// Open a new attempt for a `failed` or `cancelled` task.
    ///
    /// Events: `thread.created`, `task.dispatched` (+ `run.resumed`).
    #[method(name = "orch.retry")]
    async fn retry(&self, params: RetryParams) -> RpcResult<DispatchResult>;

    /// Move a task with a live attempt to another worker.
    ///
    /// Events: `thread.created`, `task.dispatched`, `thread.cancelled`.
    #[method(name = "orch.reassign")]
    async fn reassign(&self, params: ReassignParams) -> RpcResult<DispatchResult>;

    /// Cancel one task, or the whole run when no task is named.
    ///
    /// Events: per task `thread.cancelled` + `task.cancelled`, or `task.cancelled`; for a run,
    /// `thread.cancelled` for open council threads and `run.cancelled`.
    #[method(name = "orch.cancel")]
    async fn orch_cancel(&self, params: CancelTaskParams) -> RpcResult<RunView>;

    /// The worktrees of attempts, with whether each can be pruned.
    #[method(name = "orch.worktreeList")]
    async fn worktree_list(&self, params: WorktreeParams) -> RpcResult<WorktreesResult>;

    /// Remove the worktrees of finished attempts whose work cannot be lost, and say what was
    /// kept and why. It changes git and the file system, never the database, and appends no
    /// event.
    #[method(name = "orch.worktreePrune")]
    async fn worktree_prune(&self, params: WorktreeParams) -> RpcResult<WorktreesResult>;

    /// Start a council review: a fixed set of reviewers brainstorm recommendations on a
    /// topic, the recommendations are grouped, and every reviewer votes on every group. Both
    /// phases are carried by ordinary inbox threads, so reviewers need only `inbox`.
    ///
    /// Events: `thread.created` per reviewer, `council.started`.
    #[method(name = "orch.councilStart")]
    async fn council_start(&self, params: CouncilStartParams) -> RpcResult<Council>;

    /// The council with its members, groups and tallies (status and report).
    #[method(name = "orch.councilShow")]
    async fn council_show(&self, params: CouncilRef) -> RpcResult<Council>;

    /// A run's councils, oldest first.
    #[method(name = "orch.councilList")]
    async fn council_list(&self, params: RunPageParams) -> RpcResult<CouncilsResult>;

    /// Change a task's fields (`orch task edit`, `orch task assign`).
    ///
    /// Events: `task.edited`.
    #[method(name = "orch.taskEdit")]
    async fn task_edit(&self, params: TaskEditParams) -> RpcResult<TaskView>;

    /// Remove a task that was never dispatched (its dependents lose the dependency).
    ///
    /// Events: `task.removed` (+ `task.ready`).
    #[method(name = "orch.taskRemove")]
    async fn task_remove(&self, params: TaskRef) -> RpcResult<TaskRemoveResult>;

    /// Merge done code tasks into the run's integration branch.
    ///
    /// Events: `task.merged` / `task.merge_conflict`.
    #[method(name = "orch.merge")]
    async fn merge(&self, params: MergeParams) -> RpcResult<MergeResult>;

    /// Merge what is pending into the integration branch, then the integration branch into
    /// the run's base branch.
    ///
    /// Events: `task.merged`, `run.merged`.
    #[method(name = "orch.runFinish")]
    async fn run_finish(&self, params: RunFinishParams) -> RpcResult<RunFinishResult>;
}
