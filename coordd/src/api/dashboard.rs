//! `dashboard.*`: start, report and stop the web dashboard's listener. The page itself
//! may only report it (it cannot rename its overseer or move itself).

use coord_proto::api::DashboardApiServer;
use coord_proto::types::*;
use jsonrpsee::core::{RpcResult, async_trait};

use super::Api;
use crate::net::caller;

#[async_trait]
impl DashboardApiServer for Api {
    async fn dashboard_start(&self, p: DashboardStartParams) -> RpcResult<DashboardInfo> {
        if caller::restricted_page().is_some() {
            return Err(super::control::page_refused("restart the dashboard").into());
        }
        Ok(self.dashboard.start(p).await?)
    }

    async fn dashboard_status(&self) -> RpcResult<DashboardInfo> {
        Ok(self.dashboard.status().await)
    }

    async fn dashboard_stop(&self) -> RpcResult<DashboardStopResult> {
        if caller::restricted_page().is_some() {
            return Err(super::control::page_refused("stop the dashboard").into());
        }
        Ok(DashboardStopResult { stopped: self.dashboard.stop().await? })
    }
}
