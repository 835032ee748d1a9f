//! The protocol's handlers: one file per namespace of `coord_proto::api`, each implementing
//! that namespace's generated server trait on [`Api`]. A handler checks nothing itself: it
//! runs one domain rule or `ops` operation in a transaction (or a `services` step) and
//! returns the result. [`module`] merges the namespaces into the one method table the
//! transport serves (and the dashboard's WebSocket), every method behind [`gate`]: who may
//! call it, from the authority table.

mod agents;
mod control;
mod dashboard;
mod events;
pub mod gate;
mod inbox;
mod launch;
mod mail;
mod orch;
mod orch_queue;
mod search;
mod subscriber;
mod system;
mod view;

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use coord_proto::api::*;
use jsonrpsee::{Methods, RpcModule};
use tokio::sync::watch;

use crate::core::Core;
use crate::dashboard::Dashboard;
use crate::progress::ProgressHub;
use crate::services::policy::Snapshots;

/// Static facts about the running daemon, reported by `system.hello`.
#[derive(Debug, Clone)]
pub struct DaemonInfo {
    pub socket: String,
    pub db: String,
    pub started_at: String,
    pub started: Instant,
}

/// The handlers' shared state.
#[derive(Clone)]
pub struct Api {
    core: Arc<Core>,
    info: Arc<DaemonInfo>,
    /// Every method name, sorted (filled once the module is built).
    methods: Arc<OnceLock<Vec<String>>>,
    /// Set when a client asks the daemon to stop.
    shutdown: watch::Sender<bool>,
    /// Progress lines from tool subprocesses (in memory, lossy).
    progress: Arc<ProgressHub>,
    /// Serializes writes of the policy snapshot file.
    snapshots: Arc<Snapshots>,
    /// The web dashboard's listener (`dashboard.*`).
    dashboard: Arc<Dashboard>,
}

/// Every method of every namespace, in one table.
pub fn module(core: Arc<Core>, info: DaemonInfo, shutdown: watch::Sender<bool>, dashboard: Arc<Dashboard>) -> Methods {
    let snapshots = Arc::new(Snapshots::default());
    // The snapshot is refreshed at start (a deleted or stale file is healed) and on every
    // policy change, including those made through another daemon of the same store.
    tokio::spawn(crate::services::policy::keep_current(core.clone(), snapshots.clone()));
    let api = Api {
        core: core.clone(),
        info: Arc::new(info),
        methods: Arc::default(),
        shutdown,
        progress: Arc::default(),
        snapshots,
        dashboard,
    };
    let parts: [Methods; 12] = [
        SystemApiServer::into_rpc(api.clone()).into(),
        InboxApiServer::into_rpc(api.clone()).into(),
        EventsApiServer::into_rpc(api.clone()).into(),
        OrchApiServer::into_rpc(api.clone()).into(),
        OrchQueueApiServer::into_rpc(api.clone()).into(),
        AgentsApiServer::into_rpc(api.clone()).into(),
        MailApiServer::into_rpc(api.clone()).into(),
        LaunchApiServer::into_rpc(api.clone()).into(),
        ControlApiServer::into_rpc(api.clone()).into(),
        ViewApiServer::into_rpc(api.clone()).into(),
        DashboardApiServer::into_rpc(api.clone()).into(),
        SearchApiServer::into_rpc(api.clone()).into(),
    ];
    let mut all = RpcModule::new(());
    for part in parts {
        all.merge(part).expect("method names are unique across namespaces");
    }
    // Discovered from the module itself, so the list cannot drift.
    let mut names: Vec<String> = all.method_names().map(str::to_string).collect();
    names.sort();
    let _ = api.methods.set(names);
    gate::guard(all.into(), core)
}
