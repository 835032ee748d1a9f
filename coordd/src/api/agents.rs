//! `agents.*` and `reservations.*`. Storage failures here carry the agents layer's I/O
//! codes (`io_write_failed`, `io_read_failed`).

use coord_proto::api::AgentsApiServer;
use coord_proto::types::*;
use jsonrpsee::core::{RpcResult, async_trait};

use super::Api;
use crate::domain::{agents, credentials, reservations};
use crate::net::caller;
use crate::ops;

#[async_trait]
impl AgentsApiServer for Api {
    async fn agent_register(&self, p: RegisterParams) -> RpcResult<AgentResult> {
        let authenticated = caller::current();
        let r =
            self.core.write(move |tx, now| ops::agents::register(tx, now, p.clone(), authenticated.as_deref())).await;
        Ok(r.map_err(|e| e.as_io(true))?)
    }

    async fn agent_authenticate(&self, p: AuthenticateParams) -> RpcResult<AuthenticateResult> {
        let agent = p.agent_id.clone();
        self.core.read(move |tx, _| credentials::verify(tx, &p.agent_id, &p.secret)).await?;
        let authenticated = caller::authenticate(&agent)
            .ok_or_else(|| crate::error::Error::Internal("no connection to authenticate".into()))?;
        Ok(AuthenticateResult { agent_id: agent, authenticated })
    }

    async fn agent_list(&self, p: AgentListParams) -> RpcResult<AgentsResult> {
        let r = self.core.read(move |tx, _| agents::list(tx, &p)).await;
        Ok(r.map_err(|e| e.as_io(false))?)
    }

    async fn agent_show(&self, p: AgentRef) -> RpcResult<Agent> {
        let r = self.core.read(move |tx, _| agents::show(tx, &p.agent_id)).await;
        Ok(r.map_err(|e| e.as_io(false))?)
    }

    async fn agent_heartbeat(&self, p: HeartbeatParams) -> RpcResult<AgentResult> {
        let r = self.core.write(move |tx, now| agents::heartbeat(tx, now, p.clone())).await;
        Ok(r.map_err(|e| e.as_io(true))?)
    }

    async fn reserve(&self, p: ReserveParams) -> RpcResult<ReserveResult> {
        let r = self.core.write_as(&p.agent.clone(), move |tx, now| ops::agents::reserve(tx, now, p.clone())).await;
        Ok(r.map_err(|e| e.as_io(true))?)
    }

    async fn release(&self, p: ReleaseParams) -> RpcResult<ReleaseResult> {
        let r = self.core.write_as(&p.agent.clone(), move |tx, now| ops::agents::release(tx, now, p.clone())).await;
        Ok(r.map_err(|e| e.as_io(true))?)
    }

    async fn reservation_list(&self, p: ReservationListParams) -> RpcResult<ReservationsResult> {
        let r = self.core.read(move |tx, now| reservations::list(tx, now, p.clone())).await;
        Ok(r.map_err(|e| e.as_io(false))?)
    }

    async fn reservation_check(&self, p: CheckPathsParams) -> RpcResult<CheckPathsResult> {
        let r = self.core.read(move |tx, now| reservations::check_page(tx, now, p.clone())).await;
        Ok(r.map_err(|e| e.as_io(false))?)
    }
}
