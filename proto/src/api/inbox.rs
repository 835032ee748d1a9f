//! `inbox.*`: threads, messages, leases and artifacts (the worker protocol), and the
//! coordination summary `inbox.status`.

use jsonrpsee::core::RpcResult;
use jsonrpsee::proc_macros::rpc;

use crate::types::*;

#[rpc(server, client)]
pub trait InboxApi {
    /// Make sure the schema is migrated; report where the database lives and the project's
    /// settings and roles. Optionally change them: strict agents, required credentials, the
    /// lead and the admins.
    ///
    /// Events: `settings.changed` for each setting or role that changes.
    #[method(name = "inbox.init")]
    async fn init(&self, params: InitParams) -> RpcResult<InitResult>;

    /// Create a new thread with its first message. With `thread_id`, append a message to an
    /// existing open thread instead.
    ///
    /// Events: `thread.created` / `message.sent`.
    #[method(name = "inbox.send")]
    async fn send(&self, params: SendParams) -> RpcResult<MessageResult>;

    /// List candidate work for an agent: threads **assigned to** that agent. The query never
    /// writes; the call advances the agent's `last_seen_at` with a separate bookkeeping
    /// write.
    #[method(name = "inbox.fetch")]
    async fn fetch(&self, params: FetchParams) -> RpcResult<ThreadsResult>;

    /// Take a lease on a thread.
    ///
    /// Events: `thread.claimed`.
    #[method(name = "inbox.claim")]
    async fn claim(&self, params: ClaimParams) -> RpcResult<LeaseResult>;

    /// Extend the caller's live lease. The token and generation stay the same.
    ///
    /// Events: `lease.renewed`.
    #[method(name = "inbox.renew")]
    async fn renew(&self, params: RenewParams) -> RpcResult<LeaseResult>;

    /// The holder reports progress, or reports that it is blocked.
    ///
    /// Events: `thread.progress` / `thread.blocked`.
    #[method(name = "inbox.update")]
    async fn update(&self, params: UpdateParams) -> RpcResult<MessageResult>;

    /// A message inside an open thread. No lease is needed.
    ///
    /// Events: `thread.replied`.
    #[method(name = "inbox.reply")]
    async fn reply(&self, params: ReplyParams) -> RpcResult<MessageResult>;

    /// The holder finishes the thread as done with a `result` message; the lease is released.
    ///
    /// Events: `thread.done`.
    #[method(name = "inbox.done")]
    async fn done(&self, params: FinishParams) -> RpcResult<MessageResult>;

    /// The holder finishes the thread as failed with a `result` message; the lease is
    /// released.
    ///
    /// Events: `thread.failed`.
    #[method(name = "inbox.fail")]
    async fn fail(&self, params: FinishParams) -> RpcResult<MessageResult>;

    /// Cancel an open thread, typically by its creator.
    ///
    /// Events: `thread.cancelled`.
    #[method(name = "inbox.cancel")]
    async fn cancel(&self, params: CancelParams) -> RpcResult<MessageResult>;

    /// List threads that match every given filter. This method never writes.
    #[method(name = "inbox.list")]
    async fn list(&self, params: ListParams) -> RpcResult<ThreadsResult>;

    /// Show one thread with its whole history.
    #[method(name = "inbox.show")]
    async fn show(&self, params: ShowParams) -> RpcResult<ShowResult>;

    /// Record that an agent has read a thread up to its newest message. Read marks are
    /// private, per-agent cursors. They matter only for `inbox.fetch` with `unread: true`,
    /// and they also move by themselves: a message appended to an existing thread marks it
    /// read for its sender, and a claim marks it read for the claimer.
    #[method(name = "inbox.markRead")]
    async fn mark_read(&self, params: MarkReadParams) -> RpcResult<MarkReadResult>;

    /// Active reservations, unacked messages that require an ack, and counts by state.
    #[method(name = "inbox.status")]
    async fn status(&self, params: StatusParams) -> RpcResult<StatusResult>;
}
