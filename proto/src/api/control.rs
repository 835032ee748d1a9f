//! `control.*`, `policy.*` and `progress.*`: typed control messages between agents (with
//! their requests and answers), the permission policy that gates tool calls, and the lossy
//! live feed of progress lines from tool subprocesses.

use jsonrpsee::core::{RpcResult, SubscriptionResult};
use jsonrpsee::proc_macros::rpc;

use crate::types::*;

#[rpc(server, client)]
pub trait ControlApi {
    /// Send one typed message: a request opens its thread, a response closes its request's.
    ///
    /// Events: `thread.created` / `message.sent` / `thread.done`.
    #[method(name = "control.send")]
    async fn control_send(&self, params: ControlSendParams) -> RpcResult<ControlSendResult>;

    /// Requests with their state: open ones by default.
    #[method(name = "control.requests")]
    async fn control_requests(&self, params: RequestsParams) -> RpcResult<RequestsResult>;

    /// The permission policy: which tool calls of which agents need whose approval.
    #[method(name = "policy.get")]
    async fn policy_get(&self) -> RpcResult<PolicyResult>;

    /// Replace the policy; the hooks' snapshot file is rewritten after the commit.
    ///
    /// Events: `policy.changed`.
    #[method(name = "policy.set")]
    async fn policy_set(&self, params: PolicySetParams) -> RpcResult<PolicyResult>;

    /// Would this tool call of this agent be gated, and who would approve it?
    #[method(name = "policy.check")]
    async fn policy_check(&self, params: PolicyCheckParams) -> RpcResult<PolicyCheckResult>;

    /// One progress line: kept in the bounded recent history and pushed to subscribers.
    #[method(name = "progress.report")]
    async fn progress_report(&self, params: ProgressParams) -> RpcResult<ProgressReportResult>;

    /// The recent history (what a late subscriber can still see).
    #[method(name = "progress.recent")]
    async fn progress_recent(&self, params: ProgressFilter) -> RpcResult<ProgressRecentResult>;

    /// Push matching progress lines as they come; a subscriber that reads too slowly loses
    /// lines (each line says how many it missed before it), it never slows the senders.
    #[subscription(
        name = "progress.subscribe" => "progress.line",
        unsubscribe = "progress.unsubscribe",
        item = ProgressLine
    )]
    async fn progress_subscribe(&self, filter: ProgressFilter) -> SubscriptionResult;
}
