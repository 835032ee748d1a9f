//! Who is calling: the agents the connection a call came on has authenticated as
//! (`agents.authenticate`). The transport runs every call inside [`scope`]; outside one
//! (the daemon's own background duties) there is no caller, and nothing to check.

use std::collections::BTreeSet;
use std::future::Future;
use std::sync::{Arc, Mutex};

/// One connection's identity: the agents it proved it acts for.
#[derive(Debug, Default)]
pub struct Caller {
    agents: Mutex<BTreeSet<String>>,
}

tokio::task_local! {
    static CALLER: Arc<Caller>;
}

/// Run `f` as a call made on the connection of `caller`.
pub fn scope<F: Future>(caller: Arc<Caller>, f: F) -> impl Future<Output = F::Output> {
    CALLER.scope(caller, f)
}

/// Run `f` (a synchronous call) as a call made on the connection of `caller`.
pub fn sync_scope<R>(caller: Arc<Caller>, f: impl FnOnce() -> R) -> R {
    CALLER.sync_scope(caller, f)
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
