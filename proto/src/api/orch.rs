//! `orch.*`: the leader's control plane (runs, the task graph, dispatch into worktrees,
//! answers, retries, councils).

use jsonrpsee::core::RpcResult;
use jsonrpsee::proc_macros::rpc;

use crate::types::*;

#[rpc(server, client)]
pub trait OrchApi {
    #[method(name = "orch.runCreate")]
    async fn run_create(&self, params: RunCreateParams) -> RpcResult<RunView>;

    #[method(name = "orch.runList")]
    async fn run_list(&self, params: RunListParams) -> RpcResult<RunsResult>;

    /// The run with all its tasks (what `orch status` draws).
    #[method(name = "orch.runShow")]
    async fn run_show(&self, params: RunRef) -> RpcResult<RunView>;

    #[method(name = "orch.taskAdd")]
    async fn task_add(&self, params: TaskAddParams) -> RpcResult<TaskView>;

    #[method(name = "orch.taskList")]
    async fn task_list(&self, params: TaskListParams) -> RpcResult<TasksResult>;

    #[method(name = "orch.taskShow")]
    async fn task_show(&self, params: TaskRef) -> RpcResult<TaskView>;

    #[method(name = "orch.depAdd")]
    async fn dep_add(&self, params: DepParams) -> RpcResult<TaskView>;

    #[method(name = "orch.depRemove")]
    async fn dep_remove(&self, params: DepParams) -> RpcResult<TaskView>;

    /// Ready tasks, highest priority first, then oldest.
    #[method(name = "orch.ready")]
    async fn ready(&self, params: TaskListParams) -> RpcResult<TasksResult>;

    #[method(name = "orch.dispatch")]
    async fn dispatch(&self, params: DispatchParams) -> RpcResult<DispatchResult>;

    /// Re-derive every task's status from its threads; returns the tasks that changed.
    #[method(name = "orch.reconcile")]
    async fn reconcile(&self, params: RunRef) -> RpcResult<TasksResult>;

    #[method(name = "orch.blocked")]
    async fn blocked(&self, params: RunPageParams) -> RpcResult<BlockedResult>;

    #[method(name = "orch.answer")]
    async fn answer(&self, params: AnswerParams) -> RpcResult<MessageResult>;

    #[method(name = "orch.retry")]
    async fn retry(&self, params: RetryParams) -> RpcResult<DispatchResult>;

    #[method(name = "orch.reassign")]
    async fn reassign(&self, params: RetryParams) -> RpcResult<DispatchResult>;

    /// Cancel one task, or the whole run when no task is named.
    #[method(name = "orch.cancel")]
    async fn orch_cancel(&self, params: CancelTaskParams) -> RpcResult<RunView>;

    #[method(name = "orch.worktreeList")]
    async fn worktree_list(&self, params: WorktreeParams) -> RpcResult<WorktreesResult>;

    #[method(name = "orch.worktreePrune")]
    async fn worktree_prune(&self, params: WorktreeParams) -> RpcResult<WorktreesResult>;

    #[method(name = "orch.councilStart")]
    async fn council_start(&self, params: CouncilStartParams) -> RpcResult<Council>;

    /// The council with its members, groups and tallies (status and report).
    #[method(name = "orch.councilShow")]
    async fn council_show(&self, params: CouncilRef) -> RpcResult<Council>;

    /// A run's councils, oldest first.
    #[method(name = "orch.councilList")]
    async fn council_list(&self, params: RunPageParams) -> RpcResult<CouncilsResult>;

    /// Change a task's fields (`orch task edit`, `orch task assign`).
    #[method(name = "orch.taskEdit")]
    async fn task_edit(&self, params: TaskEditParams) -> RpcResult<TaskView>;

    /// Remove a task that was never dispatched (its dependents lose the dependency).
    #[method(name = "orch.taskRemove")]
    async fn task_remove(&self, params: TaskRef) -> RpcResult<TaskRemoveResult>;

    /// Merge done code tasks into the run's integration branch.
    #[method(name = "orch.merge")]
    async fn merge(&self, params: MergeParams) -> RpcResult<MergeResult>;

    /// Merge what is pending into the integration branch, then the integration branch into
    /// the run's base branch.
    #[method(name = "orch.runFinish")]
    async fn run_finish(&self, params: RunFinishParams) -> RpcResult<RunFinishResult>;
}
