//! `agents.*` and `reservations.*`: the agent registry and file-scope reservations (the
//! `bb agent` contract).

use jsonrpsee::core::RpcResult;
use jsonrpsee::proc_macros::rpc;

use crate::types::*;

#[rpc(server, client)]
pub trait AgentsApi {
    /// Register an agent (or update a recorded one): its name, role, display name and model.
    ///
    /// Events: `agent.registered`.
    #[method(name = "agents.register")]
    async fn agent_register(&self, params: RegisterParams) -> RpcResult<AgentResult>;

    /// Agents sorted by id.
    #[method(name = "agents.list")]
    async fn agent_list(&self, params: AgentListParams) -> RpcResult<AgentsResult>;

    /// One agent, registered or recorded (the Agent itself, not wrapped).
    #[method(name = "agents.show")]
    async fn agent_show(&self, params: AgentRef) -> RpcResult<Agent>;

    /// Prove that this connection acts for `agent_id` (its secret from `agents.register`);
    /// it stays authenticated until it closes.
    #[method(name = "agents.authenticate")]
    async fn agent_authenticate(&self, params: AuthenticateParams) -> RpcResult<AuthenticateResult>;

    /// Advance an agent's `last_seen_at`; a changed `status` is stored with event
    /// `agent.status`.
    ///
    /// Events: `agent.status` if the status changes.
    #[method(name = "agents.heartbeat")]
    async fn agent_heartbeat(&self, params: HeartbeatParams) -> RpcResult<AgentResult>;

    /// Reserve a file scope for a task.
    ///
    /// Events: `reservation.expired` per takeover, `reservation.created`.
    #[method(name = "reservations.reserve")]
    async fn reserve(&self, params: ReserveParams) -> RpcResult<ReserveResult>;

    /// Release the caller's active reservation of exactly this (normalised) scope.
    ///
    /// Events: `reservation.released`.
    #[method(name = "reservations.release")]
    async fn release(&self, params: ReleaseParams) -> RpcResult<ReleaseResult>;

    /// Reservations that match every given filter.
    #[method(name = "reservations.list")]
    async fn reservation_list(&self, params: ReservationListParams) -> RpcResult<ReservationsResult>;

    /// Which of these paths lie in another agent's active exclusive reservation.
    #[method(name = "reservations.check")]
    async fn reservation_check(&self, params: CheckPathsParams) -> RpcResult<CheckPathsResult>;
}
