//! The one place where every JSON-RPC method is registered: [`Rpc`] implements the
//! `CoordApiServer` trait generated from `coord_proto::api`, delegating to the [`Store`]
//! seam. No storage logic lives here.

use std::sync::Arc;
use std::time::Instant;

use coord_proto::PROTOCOL_VERSION;
use coord_proto::api::*;
use coord_proto::types::*;
use jsonrpsee::core::{RpcResult, SubscriptionResult, async_trait};
use jsonrpsee::{PendingSubscriptionSink, RpcModule};
use tokio::sync::watch;

use crate::events::subscription;
use crate::store::Store;

/// Static facts about the running daemon, reported by `system.hello`.
#[derive(Debug, Clone)]
pub struct DaemonInfo {
    pub socket: String,
    pub db: String,
    pub started_at: String,
    pub started: Instant,
}

pub struct Rpc<S> {
    store: Arc<S>,
    info: DaemonInfo,
    methods: Vec<String>,
    shutdown: watch::Sender<bool>,
}

/// Build the module holding every method. `shutdown` is set when a client asks the daemon
/// to stop.
pub fn module<S: Store>(store: Arc<S>, info: DaemonInfo, shutdown: watch::Sender<bool>) -> RpcModule<()> {
    // Discover the names from the generated modules themselves, so the list cannot drift.
    let names: Vec<String> = {
        let probe = Rpc { store: store.clone(), info: info.clone(), methods: vec![], shutdown: shutdown.clone() };
        let mut v: Vec<String> = merged(probe).method_names().map(str::to_string).collect();
        v.sort();
        v
    };
    merged(Rpc { store, info, methods: names, shutdown })
}

fn merged<S: Store>(rpc: Rpc<S>) -> RpcModule<()> {
    let mut m = RpcModule::new(());
    let parts: [jsonrpsee::Methods; 6] = [
        SystemApiServer::into_rpc(rpc.clone()).into(),
        InboxApiServer::into_rpc(rpc.clone()).into(),
        EventsApiServer::into_rpc(rpc.clone()).into(),
        OrchApiServer::into_rpc(rpc.clone()).into(),
        AgentsApiServer::into_rpc(rpc.clone()).into(),
        MailApiServer::into_rpc(rpc).into(),
    ];
    for part in parts {
        m.merge(part).expect("method names are unique across namespaces");
    }
    m
}

impl<S> Clone for Rpc<S> {
    fn clone(&self) -> Self {
        Rpc {
            store: self.store.clone(),
            info: self.info.clone(),
            methods: self.methods.clone(),
            shutdown: self.shutdown.clone(),
        }
    }
}

#[async_trait]
impl<S: Store> SystemApiServer for Rpc<S> {
    async fn hello(&self) -> RpcResult<HelloResult> {
        Ok(HelloResult {
            server: "coordd".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            protocol_version: PROTOCOL_VERSION,
            pid: std::process::id(),
            socket: self.info.socket.clone(),
            db: self.info.db.clone(),
            started_at: self.info.started_at.clone(),
            uptime_ms: self.info.started.elapsed().as_millis() as u64,
            last_event_id: self.store.last_event_id(),
            schema_version: self.store.info().schema_version,
            methods: self.methods.clone(),
        })
    }

    async fn shutdown(&self, params: ShutdownParams) -> RpcResult<ShutdownResult> {
        tracing::info!(reason = params.reason.as_deref().unwrap_or("requested"), "shutdown requested");
        let _ = self.shutdown.send(true);
        Ok(ShutdownResult { pid: std::process::id() })
    }
}

#[async_trait]
impl<S: Store> InboxApiServer for Rpc<S> {
    async fn init(&self, params: InitParams) -> RpcResult<InitResult> {
        let strict_agents = self.store.init(params).await?;
        let info = self.store.info();
        Ok(InitResult {
            db: info.location,
            socket: self.info.socket.clone(),
            schema_version: info.schema_version,
            journal_mode: info.journal_mode,
            strict_agents,
        })
    }

    async fn send(&self, params: SendParams) -> RpcResult<MessageResult> {
        Ok(self.store.send(params).await?)
    }

    async fn fetch(&self, params: FetchParams) -> RpcResult<ThreadsResult> {
        Ok(ThreadsResult { threads: self.store.fetch(params).await? })
    }

    async fn claim(&self, params: ClaimParams) -> RpcResult<LeaseResult> {
        Ok(self.store.claim(params).await?)
    }

    async fn renew(&self, params: RenewParams) -> RpcResult<LeaseResult> {
        Ok(self.store.renew(params).await?)
    }

    async fn update(&self, params: UpdateParams) -> RpcResult<MessageResult> {
        Ok(self.store.update(params).await?)
    }

    async fn reply(&self, params: ReplyParams) -> RpcResult<MessageResult> {
        Ok(self.store.reply(params).await?)
    }

    async fn done(&self, params: FinishParams) -> RpcResult<MessageResult> {
        Ok(self.store.finish(params, ThreadStatus::Done).await?)
    }

    async fn fail(&self, params: FinishParams) -> RpcResult<MessageResult> {
        Ok(self.store.finish(params, ThreadStatus::Failed).await?)
    }

    async fn cancel(&self, params: CancelParams) -> RpcResult<MessageResult> {
        Ok(self.store.cancel(params).await?)
    }

    async fn list(&self, params: ListParams) -> RpcResult<ThreadsResult> {
        Ok(ThreadsResult { threads: self.store.list(params).await? })
    }

    async fn show(&self, params: ShowParams) -> RpcResult<ShowResult> {
        Ok(self.store.show(params).await?)
    }

    async fn mark_read(&self, params: MarkReadParams) -> RpcResult<MarkReadResult> {
        Ok(self.store.mark_read(params).await?)
    }

    async fn status(&self, params: StatusParams) -> RpcResult<StatusResult> {
        Ok(self.store.status(params).await?)
    }
}

#[async_trait]
impl<S: Store> EventsApiServer for Rpc<S> {
    async fn events_list(&self, params: EventsListParams) -> RpcResult<EventsResult> {
        Ok(self.store.events_list(params).await?)
    }

    async fn subscribe_events(&self, pending: PendingSubscriptionSink, filter: EventFilter) -> SubscriptionResult {
        subscription::run(self.store.clone(), pending, filter).await
    }
}

#[async_trait]
impl<S: Store> OrchApiServer for Rpc<S> {
    async fn run_create(&self, params: RunCreateParams) -> RpcResult<RunView> {
        Ok(self.store.run_create(params).await?)
    }

    async fn run_list(&self) -> RpcResult<RunsResult> {
        Ok(self.store.run_list().await?)
    }

    async fn run_show(&self, params: RunRef) -> RpcResult<RunView> {
        Ok(self.store.run_show(params).await?)
    }

    async fn task_add(&self, params: TaskAddParams) -> RpcResult<TaskView> {
        Ok(self.store.task_add(params).await?)
    }

    async fn task_list(&self, params: TaskListParams) -> RpcResult<TasksResult> {
        Ok(TasksResult { tasks: self.store.task_list(params).await? })
    }

    async fn task_show(&self, params: TaskRef) -> RpcResult<TaskView> {
        Ok(self.store.task_show(params).await?)
    }

    async fn dep_add(&self, params: DepParams) -> RpcResult<TaskView> {
        Ok(self.store.dep_change(params, true).await?)
    }

    async fn dep_remove(&self, params: DepParams) -> RpcResult<TaskView> {
        Ok(self.store.dep_change(params, false).await?)
    }

    async fn ready(&self, params: TaskListParams) -> RpcResult<TasksResult> {
        Ok(TasksResult { tasks: self.store.ready(params).await? })
    }

    async fn dispatch(&self, params: DispatchParams) -> RpcResult<DispatchResult> {
        Ok(self.store.dispatch(params).await?)
    }

    async fn reconcile(&self, params: RunRef) -> RpcResult<TasksResult> {
        Ok(TasksResult { tasks: self.store.reconcile(params).await? })
    }

    async fn blocked(&self, params: RunRef) -> RpcResult<BlockedResult> {
        Ok(self.store.blocked(params).await?)
    }

    async fn answer(&self, params: AnswerParams) -> RpcResult<MessageResult> {
        Ok(self.store.answer(params).await?)
    }

    async fn retry(&self, params: RetryParams) -> RpcResult<DispatchResult> {
        Ok(self.store.retry(params, false).await?)
    }

    async fn reassign(&self, params: RetryParams) -> RpcResult<DispatchResult> {
        Ok(self.store.retry(params, true).await?)
    }

    async fn orch_cancel(&self, params: CancelTaskParams) -> RpcResult<RunView> {
        Ok(self.store.orch_cancel(params).await?)
    }

    async fn worktree_list(&self, params: WorktreeParams) -> RpcResult<WorktreesResult> {
        Ok(self.store.worktrees(params, false).await?)
    }

    async fn worktree_prune(&self, params: WorktreeParams) -> RpcResult<WorktreesResult> {
        Ok(self.store.worktrees(params, true).await?)
    }

    async fn council_start(&self, params: CouncilStartParams) -> RpcResult<Council> {
        Ok(self.store.council_start(params).await?)
    }

    async fn council_show(&self, params: CouncilRef) -> RpcResult<Council> {
        Ok(self.store.council_show(params).await?)
    }
}

#[async_trait]
impl<S: Store> AgentsApiServer for Rpc<S> {
    async fn agent_register(&self, params: RegisterParams) -> RpcResult<AgentResult> {
        Ok(self.store.agent_register(params).await?)
    }

    async fn agent_list(&self, params: AgentListParams) -> RpcResult<AgentsResult> {
        Ok(AgentsResult { agents: self.store.agent_list(params).await? })
    }

    async fn agent_show(&self, params: AgentRef) -> RpcResult<Agent> {
        Ok(self.store.agent_show(params).await?)
    }

    async fn agent_heartbeat(&self, params: HeartbeatParams) -> RpcResult<AgentResult> {
        Ok(self.store.agent_heartbeat(params).await?)
    }

    async fn reserve(&self, params: ReserveParams) -> RpcResult<ReserveResult> {
        Ok(self.store.reserve(params).await?)
    }

    async fn release(&self, params: ReleaseParams) -> RpcResult<ReleaseResult> {
        Ok(self.store.release(params).await?)
    }

    async fn reservation_list(&self, params: ReservationListParams) -> RpcResult<ReservationsResult> {
        Ok(ReservationsResult { reservations: self.store.reservation_list(params).await? })
    }

    async fn reservation_check(&self, params: CheckPathsParams) -> RpcResult<CheckPathsResult> {
        Ok(CheckPathsResult { conflicts: self.store.reservation_check(params).await? })
    }
}

#[async_trait]
impl<S: Store> MailApiServer for Rpc<S> {
    async fn mail_list(&self, params: MailParams) -> RpcResult<MailResult> {
        Ok(MailResult { mail: self.store.mail_list(params).await? })
    }

    async fn mail_read(&self, params: MailRef) -> RpcResult<MailItemResult> {
        Ok(self.store.mail_mark(params, false).await?)
    }

    async fn mail_ack(&self, params: MailRef) -> RpcResult<MailItemResult> {
        Ok(self.store.mail_mark(params, true).await?)
    }

    async fn mail_check(&self, params: CheckParams) -> RpcResult<CheckResult> {
        Ok(self.store.mail_check(params).await?)
    }

    async fn mail_pending(&self, params: PendingParams) -> RpcResult<PendingResult> {
        Ok(self.store.mail_pending(params).await?)
    }

    async fn mail_withdraw(&self, params: MailRef) -> RpcResult<WithdrawResult> {
        Ok(self.store.mail_withdraw(params).await?)
    }

    async fn peers_link(&self, params: PeerLinkParams) -> RpcResult<PeersResult> {
        Ok(self.store.peers_link(params).await?)
    }

    async fn peers_list(&self, params: PeerListParams) -> RpcResult<PeersResult> {
        Ok(self.store.peers_list(params).await?)
    }

    async fn install_hooks(&self, params: InstallHooksParams) -> RpcResult<InstallHooksResult> {
        Ok(self.store.install_hooks(params).await?)
    }
}
