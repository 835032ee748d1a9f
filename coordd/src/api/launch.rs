//! `launch.*`: one write (or read) each around `domain::launch` and `ops::launch`.

use coord_proto::api::LaunchApiServer;
use coord_proto::types::*;
use jsonrpsee::core::{RpcResult, async_trait};

use super::Api;
use crate::domain::launch;
use crate::{host, ops};

#[async_trait]
impl LaunchApiServer for Api {
    async fn session_start(&self, p: SessionStartParams) -> RpcResult<LaunchSession> {
        Ok(self
            .core
            .write_acting(move |tx, now, acting| ops::launch::start(tx, now, p.clone(), host::name(), acting))
            .await?)
    }

    async fn session_exit(&self, p: SessionExitParams) -> RpcResult<SessionExitResult> {
        Ok(self.core.write_acting(move |tx, now, acting| ops::launch::exit(tx, now, p.clone(), acting)).await?)
    }

    async fn session_tail(&self, p: SessionTailParams) -> RpcResult<SessionTailResult> {
        Ok(self.core.write_acting(move |tx, now, acting| ops::launch::tail(tx, now, p.clone(), acting)).await?)
    }

    async fn session_list(&self, p: SessionListParams) -> RpcResult<SessionsResult> {
        Ok(self.core.read(move |tx, _| launch::list(tx, &p)).await?)
    }

    async fn usage(&self, p: UsageParams) -> RpcResult<UsageResult> {
        Ok(self.core.write_acting(move |tx, now, acting| ops::usage::report(tx, now, p.clone(), acting)).await?)
    }

    async fn budget_set(&self, p: BudgetSetParams) -> RpcResult<BudgetSetResult> {
        Ok(self.core.write_acting(move |tx, now, acting| ops::usage::set_budget(tx, now, p.clone(), acting)).await?)
    }

    async fn usage_show(&self, p: UsageShowParams) -> RpcResult<UsageReport> {
        Ok(self.core.read(move |tx, _| ops::usage::show(tx, &p.run_id)).await?)
    }
}
