//! `dashboard.*`: start, report and stop the web dashboard's listener.

use coord_proto::api::DashboardApiServer;
use coord_proto::types::*;
use jsonrpsee::core::{RpcResult, async_trait};

use super::Api;

#[async_trait]
impl DashboardApiServer for Api {
    async fn dashboard_start(&self, p: DashboardStartParams) -> RpcResult<DashboardInfo> {
        Ok(self.dashboard.start(p).await?)
    }

    async fn dashboard_status(&self) -> RpcResult<DashboardInfo> {
        Ok(self.dashboard.status().await)
    }

    async fn dashboard_stop(&self) -> RpcResult<DashboardStopResult> {
        Ok(DashboardStopResult { stopped: self.dashboard.stop().await? })
    }
}
