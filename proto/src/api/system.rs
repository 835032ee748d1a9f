//! `system.*`: discovery and shutdown.

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
}
