//! `inbox.*`: threads, messages, leases and artifacts (the worker protocol), and the
//! coordination summary `inbox.status`.

use jsonrpsee::core::RpcResult;
use jsonrpsee::proc_macros::rpc;

use crate::types::*;

#[rpc(server, client)]
pub trait InboxApi {
    /// Make sure the schema is migrated; report where the database lives. Optionally
    /// turn strict agents on or off.
    #[method(name = "inbox.init")]
    async fn init(&self, params: InitParams) -> RpcResult<InitResult>;

    #[method(name = "inbox.send")]
    async fn send(&self, params: SendParams) -> RpcResult<MessageResult>;

    #[method(name = "inbox.fetch")]
    async fn fetch(&self, params: FetchParams) -> RpcResult<ThreadsResult>;

    #[method(name = "inbox.claim")]
    async fn claim(&self, params: ClaimParams) -> RpcResult<LeaseResult>;

    #[method(name = "inbox.renew")]
    async fn renew(&self, params: RenewParams) -> RpcResult<LeaseResult>;

    #[method(name = "inbox.update")]
    async fn update(&self, params: UpdateParams) -> RpcResult<MessageResult>;

    #[method(name = "inbox.reply")]
    async fn reply(&self, params: ReplyParams) -> RpcResult<MessageResult>;

    #[method(name = "inbox.done")]
    async fn done(&self, params: FinishParams) -> RpcResult<MessageResult>;

    #[method(name = "inbox.fail")]
    async fn fail(&self, params: FinishParams) -> RpcResult<MessageResult>;

    #[method(name = "inbox.cancel")]
    async fn cancel(&self, params: CancelParams) -> RpcResult<MessageResult>;

    #[method(name = "inbox.list")]
    async fn list(&self, params: ListParams) -> RpcResult<ThreadsResult>;

    #[method(name = "inbox.show")]
    async fn show(&self, params: ShowParams) -> RpcResult<ShowResult>;

    #[method(name = "inbox.markRead")]
    async fn mark_read(&self, params: MarkReadParams) -> RpcResult<MarkReadResult>;

    /// Active reservations, unacked messages that require an ack, and counts by state.
    #[method(name = "inbox.status")]
    async fn status(&self, params: StatusParams) -> RpcResult<StatusResult>;
}
