//! `dashboard.*`: the daemon's web dashboard listener (loopback only, a random token in its
//! URL). The page itself speaks this same protocol over a WebSocket.

use jsonrpsee::core::RpcResult;
use jsonrpsee::proc_macros::rpc;

use crate::types::*;

#[rpc(server, client)]
pub trait DashboardApi {
    /// Serve the dashboard (or keep serving it) and return its URL.
    #[method(name = "dashboard.start")]
    async fn dashboard_start(&self, params: DashboardStartParams) -> RpcResult<DashboardInfo>;

    /// Whether the dashboard is served, and where.
    #[method(name = "dashboard.status")]
    async fn dashboard_status(&self) -> RpcResult<DashboardInfo>;

    /// Stop serving it (and do not serve it again after a restart).
    #[method(name = "dashboard.stop")]
    async fn dashboard_stop(&self) -> RpcResult<DashboardStopResult>;
}
