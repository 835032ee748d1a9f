//! `system.*`: discovery and shutdown, and `rpc.discover` (the OpenRPC document).

use jsonrpsee::core::RpcResult;
use jsonrpsee::proc_macros::rpc;

use crate::types::*;

#[rpc(server, client)]
pub trait SystemApi {
    /// Discovery: server identity, versions and the list of methods.
    #[method(name = "system.hello")]
    async fn hello(&self) -> RpcResult<HelloResult>;

    /// Stop the daemon cleanly after replying.
    #[method(name = "system.shutdown")]
    async fn shutdown(&self, params: ShutdownParams) -> RpcResult<ShutdownResult>;

    /// The OpenRPC document of this protocol (the same as `docs/openrpc.json`): every
    /// method with its params and result schemas, every error code and every event type.
    #[method(name = "rpc.discover")]
    async fn discover(&self) -> RpcResult<serde_json::Value>;
}
