//! `launch.*`: what a launch bridge records about the worker sessions it starts, so any
//! launcher can report them and every view can show them.

use jsonrpsee::core::RpcResult;
use jsonrpsee::proc_macros::rpc;

use crate::types::*;

#[rpc(server, client)]
pub trait LaunchApi {
    /// Record a session just started for an attempt (`launch.started`).
    ///
    /// Events: `launch.started`.
    #[method(name = "launch.sessionStart")]
    async fn session_start(&self, params: SessionStartParams) -> RpcResult<LaunchSession>;

    /// Record how a session ended (`launch.exited`), failing its attempt when asked and its
    /// thread is still open.
    ///
    /// Events: `launch.exited` (and, with `fail_attempt`, `thread.failed` and the task's events).
    #[method(name = "launch.sessionExit")]
    async fn session_exit(&self, params: SessionExitParams) -> RpcResult<SessionExitResult>;

    /// Record the last lines of a running session's log (its `log_tail`), so that views
    /// show them while it runs. Its launcher's output filter reports them as lines arrive,
    /// at most one call per interval while they keep coming. A session that ended keeps
    /// the tail its end recorded (`recorded: false`).
    ///
    /// Events: `launch.tail` when the tail changed.
    #[method(name = "launch.sessionTail")]
    async fn session_tail(&self, params: SessionTailParams) -> RpcResult<SessionTailResult>;

    /// Sessions, oldest first.
    #[method(name = "launch.sessionList")]
    async fn session_list(&self, params: SessionListParams) -> RpcResult<SessionsResult>;

    /// Record a session's cumulative tokens and cost so far (idempotent: each total keeps
    /// the highest value reported, so a repeat or a lower report counts nothing twice), and
    /// say whether the session and its run reached their budgets.
    ///
    /// Events: `launch.usage` when a total grew, and `run.budget_reached`
    /// once, when the run's usage reaches its budget.
    #[method(name = "launch.usage")]
    async fn usage(&self, params: UsageParams) -> RpcResult<UsageResult>;

    /// Set or remove the budget of a run or of one of its sessions.
    ///
    /// Events: `launch.budget_set`, and `run.budget_reached` when the run's usage is already
    /// at its new budget.
    #[method(name = "launch.budgetSet")]
    async fn budget_set(&self, params: BudgetSetParams) -> RpcResult<BudgetSetResult>;

    /// A run's usage, summed per task and agent, with its sessions' and its budget.
    #[method(name = "launch.usageShow")]
    async fn usage_show(&self, params: UsageShowParams) -> RpcResult<UsageReport>;
}
