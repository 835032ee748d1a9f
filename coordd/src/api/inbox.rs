//! `inbox.*`.

use coord_proto::api::InboxApiServer;
use coord_proto::types::*;
use jsonrpsee::core::{RpcResult, async_trait};

use super::Api;
use crate::domain::inbox::{lease, read};
use crate::net::caller;
use crate::ops;

#[async_trait]
impl InboxApiServer for Api {
    async fn init(&self, p: InitParams) -> RpcResult<InitResult> {
        let s = self.core.write_acting(move |tx, now, acting| ops::settings::init(tx, now, &p, acting)).await?;
        let info = self.core.store.info();
        Ok(InitResult {
            db: info.location,
            socket: self.info.socket.clone(),
            schema_version: info.schema_version,
            journal_mode: info.journal_mode,
            strict_agents: s.strict_agents,
            require_credentials: s.require_credentials,
            lead: s.roles.lead,
            admins: s.roles.admins,
        })
    }

    async fn send(&self, p: SendParams) -> RpcResult<MessageResult> {
        Ok(self.core.write_as(&p.from.clone(), move |tx, now| ops::messages::send(tx, now, p.clone())).await?)
    }

    async fn fetch(&self, p: FetchParams) -> RpcResult<ThreadsResult> {
        Ok(self.core.read_as(&p.agent.clone(), move |tx, now| read::fetch(tx, now, p.clone())).await?)
    }

    async fn claim(&self, p: ClaimParams) -> RpcResult<LeaseResult> {
        let acting = caller::acting();
        Ok(self
            .core
            .write_as(&p.agent.clone(), move |tx, now| ops::messages::claim(tx, now, p.clone(), &acting))
            .await?)
    }

    async fn renew(&self, p: RenewParams) -> RpcResult<LeaseResult> {
        Ok(self.core.write_as(&p.agent.clone(), move |tx, now| lease::renew(tx, now, p.clone())).await?)
    }

    async fn update(&self, p: UpdateParams) -> RpcResult<MessageResult> {
        Ok(self.core.write_as(&p.agent.clone(), move |tx, now| ops::messages::update(tx, now, p.clone())).await?)
    }

    async fn reply(&self, p: ReplyParams) -> RpcResult<MessageResult> {
        let acting = caller::acting();
        Ok(self
            .core
            .write_as(&p.from.clone(), move |tx, now| ops::messages::reply(tx, now, p.clone(), &acting))
            .await?)
    }

    async fn done(&self, p: FinishParams) -> RpcResult<MessageResult> {
        let agent = p.agent.clone();
        Ok(self
            .core
            .write_as(&agent, move |tx, now| ops::messages::finish(tx, now, p.clone(), ThreadStatus::Done))
            .await?)
    }

    async fn fail(&self, p: FinishParams) -> RpcResult<MessageResult> {
        let agent = p.agent.clone();
        Ok(self
            .core
            .write_as(&agent, move |tx, now| ops::messages::finish(tx, now, p.clone(), ThreadStatus::Failed))
            .await?)
    }

    async fn cancel(&self, p: CancelParams) -> RpcResult<MessageResult> {
        let acting = caller::acting();
        Ok(self
            .core
            .write_as(&p.agent.clone(), move |tx, now| ops::messages::cancel(tx, now, p.clone(), &acting))
            .await?)
    }

    async fn list(&self, p: ListParams) -> RpcResult<ThreadsResult> {
        Ok(self.core.read(move |tx, now| read::list(tx, now, p.clone())).await?)
    }

    async fn show(&self, p: ShowParams) -> RpcResult<ShowResult> {
        Ok(self.core.read(move |tx, now| read::show(tx, now, &p)).await?)
    }

    async fn mark_read(&self, p: MarkReadParams) -> RpcResult<MarkReadResult> {
        Ok(self.core.write_as(&p.agent.clone(), move |tx, now| read::mark_read(tx, now, p.clone())).await?)
    }

    async fn status(&self, p: StatusParams) -> RpcResult<StatusResult> {
        let r = self.core.read(move |tx, now| ops::status::status(tx, now, &p)).await;
        Ok(r.map_err(|e| e.as_io(false))?)
    }
}
