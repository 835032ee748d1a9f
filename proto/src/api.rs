//! The JSON-RPC interface, declared once. jsonrpsee generates `CoordApiServer` (implemented
//! by the daemon) and `CoordApiClient` (used by `coord-client`) from this trait.
//!
//! Every method takes exactly one params object. On the wire `params` is that object
//! (by name); a one-element array holding it is accepted too, which is what the generated
//! client sends.

use jsonrpsee::core::{RpcResult, SubscriptionResult};
use jsonrpsee::proc_macros::rpc;

use crate::types::*;

/// Method names, for discovery and documentation.
pub mod methods {
    pub const HELLO: &str = "system.hello";
    pub const SHUTDOWN: &str = "system.shutdown";
    pub const INIT: &str = "inbox.init";
    pub const SEND: &str = "inbox.send";
    pub const FETCH: &str = "inbox.fetch";
    pub const CLAIM: &str = "inbox.claim";
    pub const RENEW: &str = "inbox.renew";
    pub const UPDATE: &str = "inbox.update";
    pub const REPLY: &str = "inbox.reply";
    pub const DONE: &str = "inbox.done";
    pub const FAIL: &str = "inbox.fail";
    pub const CANCEL: &str = "inbox.cancel";
    pub const LIST: &str = "inbox.list";
    pub const SHOW: &str = "inbox.show";
    pub const MARK_READ: &str = "inbox.markRead";
    pub const EVENTS_LIST: &str = "events.list";
    pub const EVENTS_SUBSCRIBE: &str = "events.subscribe";
    pub const EVENTS_NOTIFICATION: &str = "events.event";
    pub const EVENTS_UNSUBSCRIBE: &str = "events.unsubscribe";
}

#[rpc(server, client)]
pub trait CoordApi {
    /// Discovery: server identity, versions and the list of methods.
    #[method(name = "system.hello")]
    async fn hello(&self) -> RpcResult<HelloResult>;

    /// Stop the daemon cleanly after replying.
    #[method(name = "system.shutdown")]
    async fn shutdown(&self, params: ShutdownParams) -> RpcResult<ShutdownResult>;

    /// Make sure the schema is migrated; report where the database lives.
    #[method(name = "inbox.init")]
    async fn init(&self) -> RpcResult<InitResult>;

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

    /// Read the event stream without waiting.
    #[method(name = "events.list")]
    async fn events_list(&self, params: EventsListParams) -> RpcResult<EventsResult>;

    /// Push every matching event, first those already stored after the cursor, then new
    /// ones as they commit, in event order with no gaps and no duplicates.
    #[subscription(
        name = "events.subscribe" => "events.event",
        unsubscribe = "events.unsubscribe",
        item = Event
    )]
    async fn subscribe_events(&self, filter: EventFilter) -> SubscriptionResult;
}
