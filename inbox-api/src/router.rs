//! [`Router`]: agent name → inbox, created on first use by a factory.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use crate::daemon::{DaemonInbox, DaemonInboxOptions};
use crate::memory::MemoryInbox;
use crate::{Inbox, Message, SendError};

/// Makes the inbox of an agent that has none yet.
pub type Factory = Arc<dyn Fn(&str) -> Arc<dyn Inbox> + Send + Sync>;

/// Agent name → inbox. Inboxes are created on first use by the factory: [`Router::new`]
/// makes [`MemoryInbox`]es, [`Router::daemon`] makes [`DaemonInbox`]es, and
/// [`Router::with_factory`] anything else (tests use memory where production uses the daemon).
///
/// ```
/// use coord_inbox::{Inbox, Message, Router};
/// use coord_proto::types::{ShutdownRequestPayload};
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let router = Router::new();
/// let stop = ShutdownRequestPayload { request_id: "s1".into(), reason: Some("done for today".into()), ..Default::default() };
/// router.send("worker-1", Message::new("lead", "", &stop)).unwrap();
/// assert_eq!(router.agent_names(), vec!["worker-1"]);
/// let got = router.inbox("worker-1").recv().await.unwrap();
/// assert_eq!((got.from.as_str(), got.to.as_str()), ("lead", "worker-1"));
/// router.remove_and_close("worker-1");
/// assert!(router.agent_names().is_empty());
/// # }
/// ```
pub struct Router {
    inboxes: RwLock<HashMap<String, Arc<dyn Inbox>>>,
    factory: Factory,
}

impl Default for Router {
    fn default() -> Self {
        Self::new()
    }
}

impl Router {
    /// A router of [`MemoryInbox`]es with the default capacity.
    pub fn new() -> Router {
        Router::with_factory(Arc::new(|_: &str| Arc::new(MemoryInbox::new()) as Arc<dyn Inbox>))
    }

    pub fn with_factory(factory: Factory) -> Router {
        Router { inboxes: RwLock::default(), factory }
    }

    /// A router of [`DaemonInbox`]es made from `template` (its `agent` replaced by each
    /// name). Needs a tokio runtime when an inbox is created. Each inbox keeps two
    /// connections to the daemon (its feed and its outbox), so route to the agents this
    /// process serves or writes to, not to thousands.
    pub fn daemon(template: DaemonInboxOptions) -> Router {
        Router::with_factory(Arc::new(move |name: &str| {
            let opts = DaemonInboxOptions { agent: name.to_string(), ..template.clone() };
            Arc::new(DaemonInbox::spawn(opts)) as Arc<dyn Inbox>
        }))
    }

    /// The agent's inbox, created if it has none.
    pub fn inbox(&self, agent: &str) -> Arc<dyn Inbox> {
        if let Some(i) = self.inboxes.read().unwrap_or_else(|p| p.into_inner()).get(agent) {
            return i.clone();
        }
        let mut all = self.inboxes.write().unwrap_or_else(|p| p.into_inner());
        all.entry(agent.to_string()).or_insert_with(|| (self.factory)(agent)).clone()
    }

    /// Put a message in `to`'s inbox (created if needed); an empty `msg.to` becomes `to`.
    pub fn send(&self, to: &str, mut msg: Message) -> Result<(), SendError> {
        if msg.to.is_empty() {
            msg.to = to.to_string();
        }
        self.inbox(to).send(msg)
    }

    /// Forget the agent's inbox without closing it (whoever holds it keeps using it).
    pub fn remove(&self, agent: &str) -> Option<Arc<dyn Inbox>> {
        self.inboxes.write().unwrap_or_else(|p| p.into_inner()).remove(agent)
    }

    /// Forget the agent's inbox and close it.
    pub fn remove_and_close(&self, agent: &str) {
        if let Some(i) = self.remove(agent) {
            i.close();
        }
    }

    /// The agents that have an inbox, sorted.
    pub fn agent_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.inboxes.read().unwrap_or_else(|p| p.into_inner()).keys().cloned().collect();
        names.sort();
        names
    }

    /// Close every inbox (closed outside the lock: an inbox's close may take locks too).
    pub fn close(&self) {
        let all: Vec<Arc<dyn Inbox>> =
            self.inboxes.read().unwrap_or_else(|p| p.into_inner()).values().cloned().collect();
        for i in all {
            i.close();
        }
    }
}
