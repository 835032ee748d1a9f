//! Who may call each method: one table, [`TABLE`], beside the methods of [`crate::api`].
//!
//! The daemon enforces it: at the entry of every call it checks the [`Caller`] rule against
//! the connection (the agents it authenticated as, or the dashboard's page) and the
//! [`Page`] rule; the [`Object`] rule is checked by the domain rules, which know the object
//! (the thread's lease holder, the run's creator…). The OpenRPC document's "Who may call"
//! (and so `docs/protocol.md`'s method table) is written from it by [`describe`], with the
//! rule itself as the method's `x-authority`.
//!
//! Identities are proven only while the project requires credentials
//! (`inbox.init --require-credentials`); without them any connection may act as any agent,
//! so only the object rules that hold by name (the lease holder, a mail's recipient or
//! sender, a reservation's holder, a request's recipient) still apply.
//!
//! A method without an entry fails `every_method_has_exactly_one_entry` here, and the
//! daemon refuses to build its method table.

use serde_json::{Value, json};

/// Who may make the call at all: checked at its entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caller {
    /// A read: anyone, nothing checked.
    Read,
    /// Anyone; its object rule may ask more.
    Anyone,
    /// Any agent: with credentials required, a connection authenticated as one.
    Agent,
    /// The agent the params name in this field, on a connection authenticated as that agent
    /// (with the field left out: any agent).
    AsAgent(&'static str),
    /// The project's lead or an admin; with a field, acting as itself in it.
    Lead(Option<&'static str>),
}

/// Whose object it must be: checked by the rules, which know the object. Unless its text
/// says it holds by name, only while credentials are required.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Object {
    /// No object rule.
    None,
    /// `agents.authenticate`: the agent's secret.
    Secret,
    /// `inbox.init`: a change of the settings or roles is the lead's or an admin's.
    Settings,
    /// `agents.register`: an agent's own registration, or the lead's or an admin's.
    Roster,
    /// `inbox.claim`: a thread assigned to an agent is that agent's, the lead's or an
    /// admin's.
    Assignee,
    /// The thread's live lease holder (by name).
    LeaseHolder,
    /// `inbox.cancel`: the thread's creator, the lead or an admin.
    ThreadCreator,
    /// `inbox.reply`: an `answer` to a blocked thread comes from its creator, the lead, an
    /// admin or the overseer.
    Answer,
    /// `orch.answer`: the answer comes from the run's creator, the lead, an admin or the
    /// overseer.
    TaskAnswer,
    /// The run's creator, the lead or an admin.
    RunOwner,
    /// `orch.worktreePrune`: with a run, its creator, the lead or an admin; without, the
    /// lead or an admin.
    Worktrees,
    /// `launch.*`: the creator of the attempt's run, the lead or an admin.
    Launcher,
    /// `mail.check`, `mail.pending`: a task's mailbox is its worker's, the lead's or an
    /// admin's.
    Mailbox,
    /// A recipient of the message (by name).
    Recipient,
    /// The message's sender (by name).
    Sender,
    /// The reservation's holder (by name).
    ReservationHolder,
    /// `control.send`: an answer is the request's recipient's (or, for a request to the
    /// lead, the overseer's), by name.
    RequestRecipient,
    /// `dashboard.status`: the URL (its token) only to the lead, an admin or the page.
    DashboardUrl,
}

/// What the dashboard's page (the overseer, a person) may do with the method. A daemon
/// started with `--dashboard-acts-as-anyone` lets its page do whatever any connection may.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Page {
    /// A read: the page may.
    Reads,
    /// As its overseer (the token is its credential), or as an agent whose secret it
    /// presented (`agents.authenticate`).
    AsOverseer,
    /// Only as an agent whose secret it presented, like any connection.
    AsConnection,
    /// Never.
    Never,
}

/// One method's entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Authority {
    /// The method's wire name.
    pub method: &'static str,
    /// Who may call it.
    pub caller: Caller,
    /// Whose object it must be.
    pub object: Object,
    /// What the dashboard's page may do with it.
    pub page: Page,
}

const fn read(method: &'static str) -> Authority {
    Authority { method, caller: Caller::Read, object: Object::None, page: Page::Reads }
}

const fn entry(method: &'static str, caller: Caller, object: Object, page: Page) -> Authority {
    Authority { method, caller, object, page }
}

use Caller::{Agent, AsAgent, Lead};
use Page::{AsConnection, AsOverseer, Never};

/// Every method of the protocol. A subscription's unsubscribe method has no entry: it ends
/// one of the caller's own subscriptions.
pub const TABLE: &[Authority] = &[
    // system.*
    read("system.hello"),
    read("rpc.discover"),
    entry("system.shutdown", Lead(None), Object::None, Never),
    // inbox.*
    entry("inbox.init", Caller::Anyone, Object::Settings, AsConnection),
    entry("inbox.send", AsAgent("from"), Object::None, AsOverseer),
    read("inbox.fetch"),
    entry("inbox.claim", AsAgent("agent"), Object::Assignee, AsOverseer),
    entry("inbox.renew", AsAgent("agent"), Object::LeaseHolder, AsOverseer),
    entry("inbox.update", AsAgent("agent"), Object::LeaseHolder, AsOverseer),
    entry("inbox.reply", AsAgent("from"), Object::Answer, AsOverseer),
    entry("inbox.done", AsAgent("agent"), Object::LeaseHolder, AsOverseer),
    entry("inbox.fail", AsAgent("agent"), Object::LeaseHolder, AsOverseer),
    entry("inbox.cancel", AsAgent("agent"), Object::ThreadCreator, AsOverseer),
    read("inbox.list"),
    read("inbox.show"),
    entry("inbox.markRead", AsAgent("agent"), Object::None, AsOverseer),
    read("inbox.status"),
    // events.*
    read("events.list"),
    read("events.subscribe"),
    read("events.subscribeBatched"),
    // orch.*
    entry("orch.runCreate", AsAgent("created_by"), Object::None, AsOverseer),
    read("orch.runList"),
    read("orch.runShow"),
    entry("orch.taskAdd", Agent, Object::RunOwner, AsConnection),
    read("orch.taskList"),
    read("orch.taskShow"),
    entry("orch.depAdd", Agent, Object::RunOwner, AsConnection),
    entry("orch.depRemove", Agent, Object::RunOwner, AsConnection),
    read("orch.ready"),
    entry("orch.dispatch", Agent, Object::RunOwner, AsConnection),
    entry("orch.reconcile", Agent, Object::None, AsConnection),
    read("orch.blocked"),
    entry("orch.answer", AsAgent("from"), Object::TaskAnswer, AsOverseer),
    entry("orch.retry", Agent, Object::RunOwner, AsConnection),
    entry("orch.reassign", Agent, Object::RunOwner, AsConnection),
    entry("orch.cancel", Agent, Object::RunOwner, AsConnection),
    read("orch.worktreeList"),
    entry("orch.worktreePrune", Agent, Object::Worktrees, AsConnection),
    entry("orch.councilStart", Agent, Object::RunOwner, AsConnection),
    read("orch.councilShow"),
    read("orch.councilList"),
    entry("orch.taskEdit", Agent, Object::RunOwner, AsConnection),
    entry("orch.taskRemove", Agent, Object::RunOwner, AsConnection),
    entry("orch.merge", Agent, Object::RunOwner, AsConnection),
    entry("orch.runFinish", Agent, Object::RunOwner, AsConnection),
    // The merge queue and review (orch_queue): the verifier acts for the run's creator;
    // a review is written as its author, and the page writes as its overseer.
    entry("orch.runEdit", Agent, Object::RunOwner, AsConnection),
    entry("orch.queueNext", Agent, Object::RunOwner, AsConnection),
    entry("orch.queueReport", Agent, Object::RunOwner, AsConnection),
    read("orch.diff"),
    entry("orch.reviewComment", AsAgent("author"), Object::RunOwner, AsOverseer),
    entry("orch.reviewApprove", AsAgent("author"), Object::RunOwner, AsOverseer),
    entry("orch.reviewRequestChanges", AsAgent("author"), Object::RunOwner, AsOverseer),
    // agents.*, reservations.*
    entry("agents.register", Agent, Object::Roster, AsConnection),
    read("agents.list"),
    read("agents.show"),
    entry("agents.authenticate", Caller::Anyone, Object::Secret, AsConnection),
    entry("agents.heartbeat", AsAgent("agent_id"), Object::None, AsOverseer),
    entry("reservations.reserve", AsAgent("agent"), Object::None, AsOverseer),
    entry("reservations.release", AsAgent("agent"), Object::ReservationHolder, AsOverseer),
    read("reservations.list"),
    read("reservations.check"),
    // mail.*, peers.*, session.*
    read("mail.list"),
    entry("mail.read", AsAgent("agent"), Object::Recipient, AsOverseer),
    entry("mail.ack", AsAgent("agent"), Object::Recipient, AsOverseer),
    entry("mail.check", AsAgent("agent"), Object::Mailbox, AsOverseer),
    entry("mail.pending", AsAgent("agent"), Object::Mailbox, AsOverseer),
    entry("mail.withdraw", AsAgent("agent"), Object::Sender, AsOverseer),
    entry("peers.link", Agent, Object::None, AsConnection),
    read("peers.list"),
    entry("session.installHooks", Lead(None), Object::None, Never),
    // launch.*
    entry("launch.sessionStart", Agent, Object::Launcher, AsConnection),
    entry("launch.sessionExit", Agent, Object::Launcher, AsConnection),
    entry("launch.sessionTail", Agent, Object::Launcher, AsConnection),
    read("launch.sessionList"),
    entry("launch.usage", Agent, Object::Launcher, AsConnection),
    entry("launch.budgetSet", Agent, Object::Launcher, AsConnection),
    read("launch.usageShow"),
    // control.*, policy.*, progress.*
    entry("control.send", AsAgent("from"), Object::RequestRecipient, AsOverseer),
    read("control.requests"),
    read("policy.get"),
    entry("policy.set", Lead(Some("actor")), Object::None, Never),
    read("policy.check"),
    entry("progress.report", AsAgent("agent"), Object::None, AsOverseer),
    read("progress.recent"),
    read("progress.subscribe"),
    // view.*, dashboard.*, messages.*
    read("view.agents"),
    read("view.run"),
    read("view.timeline"),
    entry("dashboard.start", Lead(None), Object::None, Never),
    Authority { method: "dashboard.status", caller: Caller::Read, object: Object::DashboardUrl, page: Page::Reads },
    entry("dashboard.stop", Lead(None), Object::None, Never),
    read("messages.search"),
];

/// The entry of `method`, if it has one.
pub fn of(method: &str) -> Option<&'static Authority> {
    TABLE.iter().find(|a| a.method == method)
}

impl Caller {
    /// The params field naming the agent the call acts as, if the rule has one.
    pub fn field(self) -> Option<&'static str> {
        match self {
            Caller::AsAgent(f) | Caller::Lead(Some(f)) => Some(f),
            _ => None,
        }
    }

    fn text(self) -> String {
        match self {
            Caller::Read => "anyone (read-only)".into(),
            Caller::Anyone => "anyone".into(),
            Caller::Agent => "any agent (with credentials required: a connection authenticated as one)".into(),
            Caller::AsAgent(f) => {
                format!("the agent named in `{f}` (with credentials required: on a connection authenticated as it)")
            }
            Caller::Lead(None) => "anyone; with credentials required, only the project's lead or an admin".into(),
            Caller::Lead(Some(f)) => format!(
                "the agent named in `{f}`; with credentials required, only the project's lead or an admin, \
                 authenticated as itself"
            ),
        }
    }

    fn key(self) -> &'static str {
        match self {
            Caller::Read => "read",
            Caller::Anyone => "anyone",
            Caller::Agent => "agent",
            Caller::AsAgent(_) => "as_agent",
            Caller::Lead(_) => "lead",
        }
    }
}

impl Object {
    fn text(self) -> Option<&'static str> {
        Some(match self {
            Object::None => return None,
            Object::Secret => "with that agent's secret",
            Object::Settings => "a change of the settings or roles: with credentials required, the lead or an admin",
            Object::Roster => {
                "with credentials required, an agent may update only its own registration; registering \
                 or updating another is the lead's or an admin's"
            }
            Object::Assignee => {
                "with credentials required, a thread assigned to an agent may be claimed only by that \
                 agent, the lead or an admin"
            }
            Object::LeaseHolder => "only the holder of the thread's live lease",
            Object::ThreadCreator => "with credentials required, only the thread's creator, the lead or an admin",
            Object::Answer => {
                "with credentials required, an `answer` to a blocked thread (which resumes it) only from \
                 the thread's creator, the lead, an admin or the dashboard's overseer"
            }
            Object::TaskAnswer => {
                "with credentials required, the answer comes only from the run's creator, the lead, an \
                 admin or the dashboard's overseer"
            }
            Object::RunOwner => "with credentials required, only the run's creator, the lead or an admin",
            Object::Worktrees => {
                "with credentials required, with `run_id` only the run's creator, the lead or an admin; \
                 without it, the lead or an admin"
            }
            Object::Launcher => {
                "with credentials required, only the creator of the attempt's run (a launcher acts for \
                 it), the lead or an admin"
            }
            Object::Mailbox => {
                "with credentials required, a task's mailbox (`task_id`) only for the task's worker, the \
                 lead or an admin"
            }
            Object::Recipient => "only a recipient of the message",
            Object::Sender => "only the message's sender",
            Object::ReservationHolder => "only the reservation's holder",
            Object::RequestRecipient => {
                "an answer only from the request's recipient (or, for a request to the lead, the \
                 dashboard's overseer)"
            }
            Object::DashboardUrl => {
                "with credentials required, the `url` (its token is the overseer's credential) only for \
                 the lead, an admin or the page itself"
            }
        })
    }

    fn key(self) -> &'static str {
        match self {
            Object::None => "none",
            Object::Secret => "secret",
            Object::Settings => "settings",
            Object::Roster => "roster",
            Object::Assignee => "assignee",
            Object::LeaseHolder => "lease_holder",
            Object::ThreadCreator => "thread_creator",
            Object::Answer => "answer",
            Object::TaskAnswer => "task_answer",
            Object::RunOwner => "run_owner",
            Object::Worktrees => "worktrees",
            Object::Launcher => "launcher",
            Object::Mailbox => "mailbox",
            Object::Recipient => "recipient",
            Object::Sender => "sender",
            Object::ReservationHolder => "reservation_holder",
            Object::RequestRecipient => "request_recipient",
            Object::DashboardUrl => "dashboard_url",
        }
    }
}

impl Page {
    fn text(self) -> Option<&'static str> {
        match self {
            Page::Reads => None,
            Page::AsOverseer => Some("the dashboard's page as its overseer, or as an agent whose secret it presented"),
            Page::AsConnection => Some("the dashboard's page only as an agent whose secret it presented"),
            Page::Never => Some("never the dashboard's page"),
        }
    }

    fn key(self) -> &'static str {
        match self {
            Page::Reads => "reads",
            Page::AsOverseer => "as_overseer",
            Page::AsConnection => "as_connection",
            Page::Never => "never",
        }
    }
}

impl Authority {
    /// The "Who may call" sentence of the method's documentation.
    pub fn text(&self) -> String {
        let mut parts = vec![self.caller.text()];
        parts.extend(self.object.text().map(str::to_string));
        parts.extend(self.page.text().map(str::to_string));
        format!("Who may call: {}.", parts.join("; "))
    }

    /// The rule as data (the method's `x-authority` in the OpenRPC document): `caller`
    /// (`read`, `anyone`, `agent`, `as_agent`, `lead`), `field` (the params field naming the
    /// acting agent, or null), `object` and `page`.
    pub fn json(&self) -> Value {
        json!({
            "caller": self.caller.key(),
            "field": self.caller.field(),
            "object": self.object.key(),
            "page": self.page.key(),
        })
    }
}

/// Add a method's "Who may call" to its OpenRPC entry: appended to its `description`, and
/// as `x-authority`.
pub fn describe(method: &mut Value) {
    let Some(a) = method.get("name").and_then(Value::as_str).and_then(of) else { return };
    let text = match method.get("description").and_then(Value::as_str).filter(|d| !d.is_empty()) {
        Some(d) => format!("{d} {}", a.text()),
        None => a.text(),
    };
    method["description"] = text.into();
    method["x-authority"] = a.json();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_has_exactly_one_entry() {
        let methods: Vec<&str> = crate::openrpc::methods().iter().map(|m| m.name).collect();
        for m in &methods {
            let n = TABLE.iter().filter(|a| a.method == *m).count();
            assert_eq!(n, 1, "{m} has {n} entries in proto/src/authority.rs's TABLE: give it exactly one");
        }
        for a in TABLE {
            assert!(methods.contains(&a.method), "{} is in the authority table but is no method", a.method);
        }
    }

    #[test]
    fn reads_are_reads_for_the_page_too_and_subscriptions_are_reads() {
        for m in crate::openrpc::methods() {
            let a = of(m.name).unwrap();
            assert_eq!(a.caller == Caller::Read, a.page == Page::Reads, "{}: a read is a read for the page", m.name);
            if m.subscription.is_some() {
                assert_eq!(a.caller, Caller::Read, "{}: the daemon checks no subscription: it must be a read", m.name);
            }
        }
    }
}
