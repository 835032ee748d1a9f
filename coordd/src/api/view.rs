//! `view.*`: read models, each one read of `ops::view`, stamped with the newest event so
//! that a client subscribes after it.

use coord_proto::api::ViewApiServer;
use coord_proto::types::*;
use jsonrpsee::core::{RpcResult, async_trait};

use super::Api;
use crate::ops::view;

#[async_trait]
impl ViewApiServer for Api {
    async fn view_agents(&self, p: AgentsViewParams) -> RpcResult<AgentsView> {
        // Read before the snapshot opens: the view holds at least every event up to it.
        let last = self.core.bus.last_event_id();
        Ok(self.core.read(move |tx, now| view::agents(tx, now, &p, last)).await?)
    }

    async fn view_run(&self, p: RunViewParams) -> RpcResult<RunGraph> {
        let last = self.core.bus.last_event_id();
        Ok(self.core.read(move |tx, _| view::run(tx, &p, last)).await?)
    }

    async fn view_timeline(&self, p: TimelineParams) -> RpcResult<TimelineView> {
        let last = self.core.bus.last_event_id();
        Ok(self.core.read(move |tx, now| view::timeline(tx, now, p, last)).await?)
    }
}
