//! `orch.*`, continued: a run's settings, the merge queue on its integration branch and
//! the review of a task's diff (docs/orch.md §13). The daemon keeps the queue's state and
//! moves the branch; the verify command runs above it, in a verifier such as
//! `orch merge-queue` (`orch.queueNext`, then `orch.queueReport`).

use jsonrpsee::core::RpcResult;
use jsonrpsee::proc_macros::rpc;

use crate::types::*;

#[rpc(server, client)]
pub trait OrchQueueApi {
    /// Change a run's settings: its verify command, whether merges need approval,
    /// automatic merge, and how many times the queue sends a task back.
    ///
    /// Events: `run.edited`.
    #[method(name = "orch.runEdit")]
    async fn run_edit(&self, params: RunEditParams) -> RpcResult<RunView>;

    /// The verifier's next job: the first queued candidate of the run (or the one being
    /// verified, handed out again after a verifier restart), built on the integration
    /// tip in memory and checked out in the run's scratch worktree. Candidates that
    /// conflict go back to their worker on the way, and those without a verify command
    /// are merged; both are in `settled`.
    ///
    /// Events: `task.verifying`
    /// (or `task.merge_conflict`, `task.merged`, with the return's `thread.created` and
    /// `task.dispatched`).
    #[method(name = "orch.queueNext")]
    async fn queue_next(&self, params: QueueNextParams) -> RpcResult<QueueNextResult>;

    /// How a verify job went. Passed: the integration branch moves to exactly the
    /// verified commit with a compare-and-swap; if its tip moved meanwhile, the candidate
    /// is queued again, first, to be verified on the new tip. Failed: nothing lands, and
    /// the task goes back to its worker with the output (or fails, past the run's merge
    /// retries).
    ///
    /// Events: `task.merged` (+
    /// `task.ready`, `run.done`), or `task.merge_queued`, or `task.verify_failed` with the
    /// return's `thread.created`, `task.dispatched` (or `task.failed`, `run.failed`).
    #[method(name = "orch.queueReport")]
    async fn queue_report(&self, params: QueueReportParams) -> RpcResult<QueueReportResult>;

    /// A task's diff: its attempt's branch against where it left the integration branch,
    /// or against the integration tip; files and hunks with line numbers, and the review
    /// comments on the attempt. Bounded by bytes (`after` continues).
    #[method(name = "orch.diff")]
    async fn diff(&self, params: DiffParams) -> RpcResult<TaskDiff>;

    /// Comment on a line of a task's diff; the comments go to the worker together with
    /// `orch.reviewRequestChanges`.
    ///
    /// Events: `task.commented`.
    #[method(name = "orch.reviewComment")]
    async fn review_comment(&self, params: ReviewCommentParams) -> RpcResult<ReviewComment>;

    /// Approve a done task's work: in a run that requires approval, it may merge now
    /// (through the queue; at once under automatic merge).
    ///
    /// Events: `task.approved` (+ `task.merge_queued`).
    #[method(name = "orch.reviewApprove")]
    async fn review_approve(&self, params: ReviewParams) -> RpcResult<ReviewResult>;

    /// Send the attempt's unsent comments to the worker as one message with `file:line`
    /// anchors: a done task that is not merged goes back to its worker (a new attempt
    /// whose thread carries them, from its branch); a live one gets them in its thread.
    ///
    /// Events: `task.changes_requested`, then the
    /// return's `thread.created`, `task.dispatched` (or the live thread's
    /// `message.sent`).
    #[method(name = "orch.reviewRequestChanges")]
    async fn review_request_changes(&self, params: ReviewParams) -> RpcResult<ReviewResult>;
}
