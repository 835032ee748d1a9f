//! The JSON-RPC interface, declared once. jsonrpsee generates `CoordApiServer` (implemented
//! by the daemon) and `CoordApiClient` (used by `coord-client`) from this trait.
//!
//! Every method takes exactly one params object. On the wire `params` is that object
//! (by name); a one-element array holding it is accepted too, which is what the generated
//! client sends.

use jsonrpsee::core::{RpcResult, SubscriptionResult};
use jsonrpsee::proc_macros::rpc;

use crate::types::*;

/// Method names, for discovery and documentation.
pub mod methods {
    pub const HELLO: &str = "system.hello";
    pub const SHUTDOWN: &str = "system.shutdown";
    pub const INIT: &str = "inbox.init";
    pub const SEND: &str = "inbox.send";
    pub const FETCH: &str = "inbox.fetch";
    pub const CLAIM: &str = "inbox.claim";
    pub const RENEW: &str = "inbox.renew";
    pub const UPDATE: &str = "inbox.update";
    pub const REPLY: &str = "inbox.reply";
    pub const DONE: &str = "inbox.done";
    pub const FAIL: &str = "inbox.fail";
    pub const CANCEL: &str = "inbox.cancel";
    pub const LIST: &str = "inbox.list";
    pub const SHOW: &str = "inbox.show";
    pub const MARK_READ: &str = "inbox.markRead";
    pub const EVENTS_LIST: &str = "events.list";
    pub const EVENTS_SUBSCRIBE: &str = "events.subscribe";
    pub const EVENTS_NOTIFICATION: &str = "events.event";
    pub const EVENTS_UNSUBSCRIBE: &str = "events.unsubscribe";
    pub const RUN_CREATE: &str = "orch.runCreate";
    pub const RUN_LIST: &str = "orch.runList";
    pub const RUN_SHOW: &str = "orch.runShow";
    pub const TASK_ADD: &str = "orch.taskAdd";
    pub const TASK_LIST: &str = "orch.taskList";
    pub const TASK_SHOW: &str = "orch.taskShow";
    pub const DEP_ADD: &str = "orch.depAdd";
    pub const DEP_REMOVE: &str = "orch.depRemove";
    pub const READY: &str = "orch.ready";
    pub const DISPATCH: &str = "orch.dispatch";
    pub const RECONCILE: &str = "orch.reconcile";
    pub const BLOCKED: &str = "orch.blocked";
    pub const ANSWER: &str = "orch.answer";
    pub const RETRY: &str = "orch.retry";
    pub const REASSIGN: &str = "orch.reassign";
    pub const ORCH_CANCEL: &str = "orch.cancel";
    pub const WORKTREE_LIST: &str = "orch.worktreeList";
    pub const WORKTREE_PRUNE: &str = "orch.worktreePrune";
    pub const COUNCIL_START: &str = "orch.councilStart";
    pub const COUNCIL_SHOW: &str = "orch.councilShow";
    pub const STATUS: &str = "inbox.status";
    pub const AGENT_REGISTER: &str = "agents.register";
    pub const AGENT_LIST: &str = "agents.list";
    pub const AGENT_SHOW: &str = "agents.show";
    pub const AGENT_HEARTBEAT: &str = "agents.heartbeat";
    pub const MAIL_LIST: &str = "mail.list";
    pub const MAIL_READ: &str = "mail.read";
    pub const MAIL_ACK: &str = "mail.ack";
    pub const RESERVE: &str = "reservations.reserve";
    pub const RELEASE: &str = "reservations.release";
    pub const RESERVATION_LIST: &str = "reservations.list";
    pub const RESERVATION_CHECK: &str = "reservations.check";
    pub const MAIL_CHECK: &str = "mail.check";
    pub const MAIL_PENDING: &str = "mail.pending";
    pub const MAIL_WITHDRAW: &str = "mail.withdraw";
    pub const PEERS_LINK: &str = "peers.link";
    pub const PEERS_LIST: &str = "peers.list";
    pub const INSTALL_HOOKS: &str = "session.installHooks";
}

#[rpc(server, client)]
pub trait CoordApi {
    /// Discovery: server identity, versions and the list of methods.
    #[method(name = "system.hello")]
    async fn hello(&self) -> RpcResult<HelloResult>;

    /// Stop the daemon cleanly after replying.
    #[method(name = "system.shutdown")]
    async fn shutdown(&self, params: ShutdownParams) -> RpcResult<ShutdownResult>;

    /// Make sure the schema is migrated; report where the database lives. Optionally
    /// turn strict agents on or off.
    #[method(name = "inbox.init")]
    async fn init(&self, params: InitParams) -> RpcResult<InitResult>;

    #[method(name = "inbox.send")]
    async fn send(&self, params: SendParams) -> RpcResult<MessageResult>;

    #[method(name = "inbox.fetch")]
    async fn fetch(&self, params: FetchParams) -> RpcResult<ThreadsResult>;

    #[method(name = "inbox.claim")]
    async fn claim(&self, params: ClaimParams) -> RpcResult<LeaseResult>;

    #[method(name = "inbox.renew")]
    async fn renew(&self, params: RenewParams) -> RpcResult<LeaseResult>;

    #[method(name = "inbox.update")]
    async fn update(&self, params: UpdateParams) -> RpcResult<MessageResult>;

    #[method(name = "inbox.reply")]
    async fn reply(&self, params: ReplyParams) -> RpcResult<MessageResult>;

    #[method(name = "inbox.done")]
    async fn done(&self, params: FinishParams) -> RpcResult<MessageResult>;

    #[method(name = "inbox.fail")]
    async fn fail(&self, params: FinishParams) -> RpcResult<MessageResult>;

    #[method(name = "inbox.cancel")]
    async fn cancel(&self, params: CancelParams) -> RpcResult<MessageResult>;

    #[method(name = "inbox.list")]
    async fn list(&self, params: ListParams) -> RpcResult<ThreadsResult>;

    #[method(name = "inbox.show")]
    async fn show(&self, params: ShowParams) -> RpcResult<ShowResult>;

    #[method(name = "inbox.markRead")]
    async fn mark_read(&self, params: MarkReadParams) -> RpcResult<MarkReadResult>;

    /// Read the event stream without waiting.
    #[method(name = "events.list")]
    async fn events_list(&self, params: EventsListParams) -> RpcResult<EventsResult>;

    // ---- orch: the leader's control plane ----------------------------------------------

    #[method(name = "orch.runCreate")]
    async fn run_create(&self, params: RunCreateParams) -> RpcResult<RunView>;

    #[method(name = "orch.runList")]
    async fn run_list(&self) -> RpcResult<RunsResult>;

    /// The run with all its tasks (what `orch status` draws).
    #[method(name = "orch.runShow")]
    async fn run_show(&self, params: RunRef) -> RpcResult<RunView>;

    #[method(name = "orch.taskAdd")]
    async fn task_add(&self, params: TaskAddParams) -> RpcResult<TaskView>;

    #[method(name = "orch.taskList")]
    async fn task_list(&self, params: TaskListParams) -> RpcResult<TasksResult>;

    #[method(name = "orch.taskShow")]
    async fn task_show(&self, params: TaskRef) -> RpcResult<TaskView>;

    #[method(name = "orch.depAdd")]
    async fn dep_add(&self, params: DepParams) -> RpcResult<TaskView>;

    #[method(name = "orch.depRemove")]
    async fn dep_remove(&self, params: DepParams) -> RpcResult<TaskView>;

    /// Ready tasks, highest priority first, then oldest.
    #[method(name = "orch.ready")]
    async fn ready(&self, params: TaskListParams) -> RpcResult<TasksResult>;

    #[method(name = "orch.dispatch")]
    async fn dispatch(&self, params: DispatchParams) -> RpcResult<DispatchResult>;

    /// Re-derive every task's status from its threads; returns the tasks that changed.
    #[method(name = "orch.reconcile")]
    async fn reconcile(&self, params: RunRef) -> RpcResult<TasksResult>;

    #[method(name = "orch.blocked")]
    async fn blocked(&self, params: RunRef) -> RpcResult<BlockedResult>;

    #[method(name = "orch.answer")]
    async fn answer(&self, params: AnswerParams) -> RpcResult<MessageResult>;

    #[method(name = "orch.retry")]
    async fn retry(&self, params: RetryParams) -> RpcResult<DispatchResult>;

    #[method(name = "orch.reassign")]
    async fn reassign(&self, params: RetryParams) -> RpcResult<DispatchResult>;

    /// Cancel one task, or the whole run when no task is named.
    #[method(name = "orch.cancel")]
    async fn orch_cancel(&self, params: CancelTaskParams) -> RpcResult<RunView>;

    #[method(name = "orch.worktreeList")]
    async fn worktree_list(&self, params: WorktreeParams) -> RpcResult<WorktreesResult>;

    #[method(name = "orch.worktreePrune")]
    async fn worktree_prune(&self, params: WorktreeParams) -> RpcResult<WorktreesResult>;

    #[method(name = "orch.councilStart")]
    async fn council_start(&self, params: CouncilStartParams) -> RpcResult<Council>;

    /// The council with its members, groups and tallies (status and report).
    #[method(name = "orch.councilShow")]
    async fn council_show(&self, params: CouncilRef) -> RpcResult<Council>;

    // ---- agents, mail and reservations (the `bb agent` contract) ------------------------

    #[method(name = "agents.register")]
    async fn agent_register(&self, params: RegisterParams) -> RpcResult<AgentResult>;

    /// Agents sorted by id.
    #[method(name = "agents.list")]
    async fn agent_list(&self, params: AgentListParams) -> RpcResult<AgentsResult>;

    #[method(name = "agents.show")]
    async fn agent_show(&self, params: AgentRef) -> RpcResult<Agent>;

    #[method(name = "agents.heartbeat")]
    async fn agent_heartbeat(&self, params: HeartbeatParams) -> RpcResult<AgentResult>;

    /// An agent's mail, newest first.
    #[method(name = "mail.list")]
    async fn mail_list(&self, params: MailParams) -> RpcResult<MailResult>;

    #[method(name = "mail.read")]
    async fn mail_read(&self, params: MailRef) -> RpcResult<MailItemResult>;

    #[method(name = "mail.ack")]
    async fn mail_ack(&self, params: MailRef) -> RpcResult<MailItemResult>;

    #[method(name = "reservations.reserve")]
    async fn reserve(&self, params: ReserveParams) -> RpcResult<ReserveResult>;

    #[method(name = "reservations.release")]
    async fn release(&self, params: ReleaseParams) -> RpcResult<ReleaseResult>;

    #[method(name = "reservations.list")]
    async fn reservation_list(&self, params: ReservationListParams) -> RpcResult<ReservationsResult>;

    /// Which of these paths lie in another agent's active exclusive reservation.
    #[method(name = "reservations.check")]
    async fn reservation_check(&self, params: CheckPathsParams) -> RpcResult<CheckPathsResult>;

    /// Active reservations, unacked messages that require an ack, and counts by state.
    #[method(name = "inbox.status")]
    async fn status(&self, params: StatusParams) -> RpcResult<StatusResult>;

    // ---- the session mailbox ------------------------------------------------------------

    /// Deliver queued mail (marks it delivered; a message is delivered once).
    #[method(name = "mail.check")]
    async fn mail_check(&self, params: CheckParams) -> RpcResult<CheckResult>;

    /// Count queued mail; with `remind`, also hand out (once) what nobody was reminded of.
    #[method(name = "mail.pending")]
    async fn mail_pending(&self, params: PendingParams) -> RpcResult<PendingResult>;

    /// The sender takes back a message that was not delivered yet.
    #[method(name = "mail.withdraw")]
    async fn mail_withdraw(&self, params: MailRef) -> RpcResult<WithdrawResult>;

    #[method(name = "peers.link")]
    async fn peers_link(&self, params: PeerLinkParams) -> RpcResult<PeersResult>;

    #[method(name = "peers.list")]
    async fn peers_list(&self, params: PeerListParams) -> RpcResult<PeersResult>;

    /// Write agent hooks and instructions into a worktree.
    #[method(name = "session.installHooks")]
    async fn install_hooks(&self, params: InstallHooksParams) -> RpcResult<InstallHooksResult>;

    /// Push every matching event, first those already stored after the cursor, then new
    /// ones as they commit, in event order with no gaps and no duplicates.
    #[subscription(
        name = "events.subscribe" => "events.event",
        unsubscribe = "events.unsubscribe",
        item = Event
    )]
    async fn subscribe_events(&self, filter: EventFilter) -> SubscriptionResult;
}
