//! The storage seam. The RPC layer talks only to [`Store`]; [`crate::sqlite::SqliteStore`]
//! is today's implementation. A PostgreSQL backend for teams spanning machines implements
//! the same trait (LISTEN/NOTIFY in place of the in-process bus) without touching the
//! protocol, the RPC layer or the CLIs.

use std::future::Future;
use std::sync::Arc;

use coord_proto::types::*;
use tokio::sync::broadcast;

use crate::error::Result;
use crate::events::Resolved;

/// An event as published after its commit. Its JSON is built lazily, once, by the first
/// subscription that sends it (never on the writer thread), and shared by the others.
pub struct Published {
    pub event: Event,
    json: std::sync::OnceLock<Box<serde_json::value::RawValue>>,
}

impl Published {
    pub fn new(event: Event) -> Self {
        Published { event, json: std::sync::OnceLock::new() }
    }

    /// The event as JSON.
    pub fn json(&self) -> serde_json::Result<Box<serde_json::value::RawValue>> {
        if let Some(j) = self.json.get() {
            return Ok(j.clone());
        }
        let j = serde_json::value::to_raw_value(&self.event)?;
        Ok(self.json.get_or_init(|| j).clone())
    }
}

/// Facts about the backing store, for discovery and `inbox.init`.
#[derive(Debug, Clone)]
pub struct StoreInfo {
    pub location: String,
    pub schema_version: i64,
    pub journal_mode: String,
}

/// Everything the protocol needs from storage. Writes return only after they are durable
/// and their events are published; reads never write.
pub trait Store: Send + Sync + 'static {
    fn info(&self) -> StoreInfo;
    /// Finish pending writes and release the storage; called once at shutdown.
    fn close(&self) -> impl Future<Output = ()> + Send;
    /// Id of the newest published event.
    fn last_event_id(&self) -> i64;
    /// A receiver of events published from now on.
    fn subscribe(&self) -> broadcast::Receiver<Arc<Published>>;

    /// Apply `inbox.init`'s settings; returns whether strict agents is on.
    fn init(&self, p: InitParams) -> impl Future<Output = Result<bool>> + Send;
    fn send(&self, p: SendParams) -> impl Future<Output = Result<MessageResult>> + Send;
    fn claim(&self, p: ClaimParams) -> impl Future<Output = Result<LeaseResult>> + Send;
    fn renew(&self, p: RenewParams) -> impl Future<Output = Result<LeaseResult>> + Send;
    fn update(&self, p: UpdateParams) -> impl Future<Output = Result<MessageResult>> + Send;
    fn reply(&self, p: ReplyParams) -> impl Future<Output = Result<MessageResult>> + Send;
    fn finish(&self, p: FinishParams, status: ThreadStatus) -> impl Future<Output = Result<MessageResult>> + Send;
    fn cancel(&self, p: CancelParams) -> impl Future<Output = Result<MessageResult>> + Send;
    fn mark_read(&self, p: MarkReadParams) -> impl Future<Output = Result<MarkReadResult>> + Send;

    fn fetch(&self, p: FetchParams) -> impl Future<Output = Result<Vec<Thread>>> + Send;
    fn list(&self, p: ListParams) -> impl Future<Output = Result<Vec<Thread>>> + Send;
    fn show(&self, p: ShowParams) -> impl Future<Output = Result<ShowResult>> + Send;
    fn events_list(&self, p: EventsListParams) -> impl Future<Output = Result<EventsResult>> + Send;
    // orch
    fn run_create(&self, p: RunCreateParams) -> impl Future<Output = Result<RunView>> + Send;
    fn run_list(&self) -> impl Future<Output = Result<RunsResult>> + Send;
    fn run_show(&self, p: RunRef) -> impl Future<Output = Result<RunView>> + Send;
    fn task_add(&self, p: TaskAddParams) -> impl Future<Output = Result<TaskView>> + Send;
    fn task_list(&self, p: TaskListParams) -> impl Future<Output = Result<Vec<Task>>> + Send;
    fn task_show(&self, p: TaskRef) -> impl Future<Output = Result<TaskView>> + Send;
    fn dep_change(&self, p: DepParams, add: bool) -> impl Future<Output = Result<TaskView>> + Send;
    fn ready(&self, p: TaskListParams) -> impl Future<Output = Result<Vec<Task>>> + Send;
    fn dispatch(&self, p: DispatchParams) -> impl Future<Output = Result<DispatchResult>> + Send;
    fn reconcile(&self, p: RunRef) -> impl Future<Output = Result<Vec<Task>>> + Send;
    fn blocked(&self, p: RunRef) -> impl Future<Output = Result<BlockedResult>> + Send;
    fn answer(&self, p: AnswerParams) -> impl Future<Output = Result<MessageResult>> + Send;
    fn retry(&self, p: RetryParams, reassign: bool) -> impl Future<Output = Result<DispatchResult>> + Send;
    fn orch_cancel(&self, p: CancelTaskParams) -> impl Future<Output = Result<RunView>> + Send;
    fn worktrees(&self, p: WorktreeParams, prune: bool) -> impl Future<Output = Result<WorktreesResult>> + Send;
    fn council_start(&self, p: CouncilStartParams) -> impl Future<Output = Result<Council>> + Send;
    fn council_show(&self, p: CouncilRef) -> impl Future<Output = Result<Council>> + Send;

    // agents, mail, reservations
    fn agent_register(&self, p: RegisterParams) -> impl Future<Output = Result<AgentResult>> + Send;
    fn agent_list(&self, p: AgentListParams) -> impl Future<Output = Result<Vec<Agent>>> + Send;
    fn agent_show(&self, p: AgentRef) -> impl Future<Output = Result<Agent>> + Send;
    fn agent_heartbeat(&self, p: HeartbeatParams) -> impl Future<Output = Result<AgentResult>> + Send;
    fn mail_list(&self, p: MailParams) -> impl Future<Output = Result<Vec<MailItem>>> + Send;
    /// `mail.read`, or `mail.ack` when `ack`.
    fn mail_mark(&self, p: MailRef, ack: bool) -> impl Future<Output = Result<MailItemResult>> + Send;
    fn reserve(&self, p: ReserveParams) -> impl Future<Output = Result<ReserveResult>> + Send;
    fn release(&self, p: ReleaseParams) -> impl Future<Output = Result<ReleaseResult>> + Send;
    fn reservation_list(&self, p: ReservationListParams) -> impl Future<Output = Result<Vec<Reservation>>> + Send;
    fn reservation_check(&self, p: CheckPathsParams) -> impl Future<Output = Result<Vec<PathConflict>>> + Send;
    fn status(&self, p: StatusParams) -> impl Future<Output = Result<StatusResult>> + Send;
    // the session mailbox
    fn mail_check(&self, p: CheckParams) -> impl Future<Output = Result<CheckResult>> + Send;
    fn mail_pending(&self, p: PendingParams) -> impl Future<Output = Result<PendingResult>> + Send;
    fn mail_withdraw(&self, p: MailRef) -> impl Future<Output = Result<WithdrawResult>> + Send;
    fn peers_link(&self, p: PeerLinkParams) -> impl Future<Output = Result<PeersResult>> + Send;
    fn peers_list(&self, p: PeerListParams) -> impl Future<Output = Result<PeersResult>> + Send;
    fn install_hooks(&self, p: InstallHooksParams) -> impl Future<Output = Result<InstallHooksResult>> + Send;

    /// Validate a filter and resolve its cursor (`default_after` when it names none).
    fn resolve_filter(&self, f: EventFilter, default_after: i64) -> impl Future<Output = Result<Resolved>> + Send;
    /// Stored events matching `r` (after `r.after`), oldest first, at most `limit`.
    fn events_after(&self, r: Resolved, limit: u32) -> impl Future<Output = Result<Vec<Event>>> + Send;
}
