//! Who is calling: the agents the connection a call came on has authenticated as
//! (`agents.authenticate`). The transport runs every call inside [`scope`]; outside one
//! (the daemon's own background duties) there is no caller, and nothing to check. A
//! dashboard connection is a [`Page`]: the overseer, a person. What a call still needs of
//! its connection once its entry was checked (`api::gate`) travels with it ([`with_need`])
//! to its write, which checks it in its transaction.

use std::collections::BTreeSet;
use std::future::Future;
use std::sync::{Arc, Mutex};

use crate::domain::credentials::Need;

/// One connection's identity: the agents it proved it acts for, or, for the dashboard's
/// page, the person it is.
#[derive(Debug, Default)]
pub struct Caller {
    agents: Mutex<BTreeSet<String>>,
    page: Option<Page>,
}

/// The dashboard page's identity: a person (the overseer), never an agent. Its token is
/// its credential, so it writes as the overseer without `agents.authenticate`; it writes
/// as no one else, and does not change the policy, unless the daemon was started with
/// `--dashboard-acts-as-anyone`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    pub overseer: String,
    pub anyone: bool,
}

impl Caller {
    /// A dashboard connection: it writes as the overseer (its token is its credential),
    /// and as an agent only once it authenticated as that agent.
    pub fn page(page: Page) -> Caller {
        Caller { agents: Mutex::default(), page: Some(page) }
    }
}

/// The page's identity when the current call came from the dashboard's page.
pub fn page() -> Option<Page> {
    CALLER.try_with(|c| c.page.clone()).ok().flatten()
}

tokio::task_local! {
    static CALLER: Arc<Caller>;
    static NEED: Option<Need>;
}

/// Run `f` (one call's handler) with what it still needs of its connection: its writes
/// check it in their transaction (`Core::write`).
pub fn with_need<F: Future>(need: Option<Need>, f: F) -> impl Future<Output = F::Output> {
    NEED.scope(need, f)
}

/// What the current call still needs of its connection, if anything.
pub fn need() -> Option<Need> {
    NEED.try_with(Clone::clone).ok().flatten()
}

/// Run `f` as a call made on the connection of `caller`.
pub fn scope<F: Future>(caller: Arc<Caller>, f: F) -> impl Future<Output = F::Output> {
    CALLER.scope(caller, f)
}

/// Run `f` (a synchronous call) as a call made on the connection of `caller`.
pub fn sync_scope<R>(caller: Arc<Caller>, f: impl FnOnce() -> R) -> R {
    CALLER.sync_scope(caller, f)
}

/// Who the current call acts as, for the checks of `credentials::Acting`: its connection's
/// agents and the dashboard page's overseer (and whether the page may act only as them).
pub fn acting() -> crate::domain::credentials::Acting {
    crate::domain::credentials::Acting::new(current(), page().map(|p| (p.overseer, !p.anyone)))
}

/// The agents the current call's connection authenticated as; `None` for the daemon's own
/// work (no connection).
pub fn current() -> Option<Vec<String>> {
    CALLER.try_with(|c| c.agents.lock().map(|a| a.iter().cloned().collect()).unwrap_or_default()).ok()
}

/// Record that the current call's connection proved it acts for `agent`; the agents it is
/// now authenticated as, or `None` outside a connection.
pub fn authenticate(agent: &str) -> Option<Vec<String>> {
    CALLER
        .try_with(|c| {
            let mut a = c.agents.lock().ok()?;
            a.insert(agent.to_string());
            Some(a.iter().cloned().collect())
        })
        .ok()
        .flatten()
}
