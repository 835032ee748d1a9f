//! `mail.*`, `peers.*` and `session.installHooks`. Storage failures here carry the agents
//! layer's I/O codes (`io_write_failed`, `io_read_failed`).

use coord_proto::api::MailApiServer;
use coord_proto::types::*;
use jsonrpsee::core::{RpcResult, async_trait};

use super::Api;
use crate::domain::mail::{copies, delivery, peers};
use crate::net::caller;
use crate::ops;
use crate::services::blocking;
use crate::workspace::sessions;

#[async_trait]
impl MailApiServer for Api {
    async fn mail_list(&self, p: MailParams) -> RpcResult<MailResult> {
        let r = self.core.read_as(&p.agent.clone(), move |tx, now| copies::list(tx, now, p.clone())).await;
        Ok(r.map_err(|e| e.as_io(false))?)
    }

    async fn mail_read(&self, p: MailRef) -> RpcResult<MailItemResult> {
        let r = self.core.write_as(&p.agent.clone(), move |tx, now| ops::agents::mail_read(tx, now, p.clone())).await;
        Ok(r.map_err(|e| e.as_io(true))?)
    }

    async fn mail_ack(&self, p: MailRef) -> RpcResult<MailItemResult> {
        let r = self.core.write_as(&p.agent.clone(), move |tx, now| ops::agents::mail_ack(tx, now, p.clone())).await;
        Ok(r.map_err(|e| e.as_io(true))?)
    }

    async fn mail_check(&self, p: CheckParams) -> RpcResult<CheckResult> {
        let agent = p.agent.clone().unwrap_or_default();
        let acting = caller::acting();
        let r = self.core.write_as(&agent, move |tx, now| ops::agents::mail_check(tx, now, p.clone(), &acting)).await;
        Ok(r.map_err(|e| e.as_io(true))?)
    }

    async fn mail_pending(&self, p: PendingParams) -> RpcResult<PendingResult> {
        let agent = p.agent.clone().unwrap_or_default();
        let r = if p.remind {
            let acting = caller::acting();
            self.core
                .write_as(&agent, move |tx, now| ops::agents::mail_remind(tx, now, p.clone(), &acting))
                .await
                .map_err(|e| e.as_io(true))
        } else {
            self.core.read_as(&agent, move |tx, now| delivery::pending(tx, now, &p)).await.map_err(|e| e.as_io(false))
        };
        Ok(r?)
    }

    async fn mail_withdraw(&self, p: MailRef) -> RpcResult<WithdrawResult> {
        let r = self.core.write_as(&p.agent.clone(), move |tx, now| delivery::withdraw(tx, now, p.clone())).await;
        Ok(r.map_err(|e| e.as_io(true))?)
    }

    async fn peers_link(&self, p: PeerLinkParams) -> RpcResult<PeersResult> {
        let r = self.core.write(move |tx, now| peers::link(tx, now, p.clone())).await;
        Ok(r.map_err(|e| e.as_io(true))?)
    }

    async fn peers_list(&self, p: PeerListParams) -> RpcResult<PeersResult> {
        let r = self.core.read(move |tx, _| peers::list(tx, p)).await;
        Ok(r.map_err(|e| e.as_io(false))?)
    }

    async fn install_hooks(&self, p: InstallHooksParams) -> RpcResult<InstallHooksResult> {
        let db = self.core.db_path.clone();
        Ok(blocking(move || sessions::install(&p, &db)).await?)
    }
}
