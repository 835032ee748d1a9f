//! `view.*`: read models joining several entities in one call, so that a dashboard draws a
//! view from one call and then follows `events.subscribe` after its `last_event_id`.

use jsonrpsee::core::RpcResult;
use jsonrpsee::proc_macros::rpc;

use crate::types::*;

#[rpc(server, client)]
pub trait ViewApi {
    /// Every agent with its activity, held threads and leases, and pending mail count.
    #[method(name = "view.agents")]
    async fn view_agents(&self, params: AgentsViewParams) -> RpcResult<AgentsView>;

    /// A run as a graph: tasks with their current worker, blocking question or failure
    /// reason, and the run's councils.
    #[method(name = "view.run")]
    async fn view_run(&self, params: RunViewParams) -> RpcResult<RunGraph>;

    /// Mail copies with their delivery state, newest first, by agent, thread or run.
    #[method(name = "view.timeline")]
    async fn view_timeline(&self, params: TimelineParams) -> RpcResult<TimelineView>;
}
