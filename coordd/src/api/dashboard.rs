//! `dashboard.*`: start, report and stop the web dashboard's listener. Starting and
//! stopping it are the lead's (the gate checks them, and refuses them to the page itself);
//! its URL holds the overseer's credential, so `dashboard.status` shows it only to whoever
//! may start it (and to the page, which has it already).

use coord_proto::api::DashboardApiServer;
use coord_proto::types::*;
use jsonrpsee::core::{RpcResult, async_trait};

use super::Api;
use crate::net::caller;

#[async_trait]
impl DashboardApiServer for Api {
    async fn dashboard_start(&self, p: DashboardStartParams) -> RpcResult<DashboardInfo> {
        Ok(self.dashboard.start(p).await?)
    }

    async fn dashboard_status(&self) -> RpcResult<DashboardInfo> {
        let mut info = self.dashboard.status().await;
        if info.url.is_some() && caller::page().is_none() {
            let acting = caller::acting();
            if !self.core.read(move |tx, _| acting.is_lead(tx)).await? {
                info.url = None;
            }
        }
        Ok(info)
    }

    async fn dashboard_stop(&self) -> RpcResult<DashboardStopResult> {
        Ok(DashboardStopResult { stopped: self.dashboard.stop().await? })
    }
}
