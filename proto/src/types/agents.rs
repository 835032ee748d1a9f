//! Entities, params and results of the `bb agent` layer: the agent registry, mail with
//! per-recipient read/ack state, file-scope reservations, and the status summary.

use serde::{Deserialize, Serialize};

use super::*;

/// The recipient name that delivers a message to every registered agent.
pub const BROADCAST: &str = "broadcast";

/// Shortest and longest registered agent id, in characters.
pub const AGENT_ID_MIN: usize = 3;
/// See [`AGENT_ID_MIN`].
pub const AGENT_ID_MAX: usize = 48;

/// Reservation TTL bounds and default, in minutes.
pub const RESERVATION_TTL_MIN: u32 = 5;
/// See [`RESERVATION_TTL_MIN`].
pub const RESERVATION_TTL_MAX: u32 = 1440;
/// See [`RESERVATION_TTL_MIN`].
pub const RESERVATION_TTL_DEFAULT: u32 = 120;

/// Default and largest `limit` of `mail.list`.
pub const MAIL_LIMIT_DEFAULT: u32 = 50;
/// See [`MAIL_LIMIT_DEFAULT`].
pub const MAIL_LIMIT_MAX: u32 = 500;

string_enum!(
    /// What an agent says it is doing (`agents.heartbeat`).
    AgentStatus {
        /// At registration.
        Idle = "idle",
        /// Working.
        Busy = "busy",
        /// Waiting on someone.
        Waiting = "waiting",
        /// Gone.
        Offline = "offline",
    }
);

string_enum!(
    /// Category of a mail message. HANDOFF and BLOCKED require an ack by default.
    Category {
        /// Work handed over; requires an ack by default.
        Handoff = "HANDOFF",
        /// The sender is blocked; requires an ack by default.
        Blocked = "BLOCKED",
        /// A decision to record.
        Decision = "DECISION",
        /// For information.
        Info = "INFO",
    }
);

impl Category {
    /// Whether a message of this category requires an ack unless the sender says otherwise.
    pub const fn requires_ack_by_default(self) -> bool {
        matches!(self, Category::Handoff | Category::Blocked)
    }
}

string_enum!(
    /// A recipient's state of one message: unread, then read, then acked (terminal).
    MailState {
        /// Not read yet.
        Unread = "unread",
        /// Read by the recipient.
        Read = "read",
        /// Acked by the recipient. Terminal.
        Acked = "acked",
    }
);

string_enum!(
    /// Stored state of a reservation. An `active` one whose `expires_at` has passed is
    /// stale (see [`Reservation::stale`]) until someone takes it over or its owner releases it.
    ReservationState {
        /// Held (stale once its `expires_at` has passed, flagged `stale: true`).
        Active = "active",
        /// Released by its owner.
        Released = "released",
        /// Taken over after it went stale.
        Expired = "expired",
    }
);

/// An agent of the project: registered, or recorded when first seen (unless strict).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Agent {
    /// Agent name.
    pub agent_id: String,
    /// The id by default; `""` for a recorded agent.
    pub display_name: String,
    /// `""` for a recorded agent.
    pub role: String,
    /// Life-cycle state.
    pub status: AgentStatus,
    /// False for an agent recorded because it was seen, not registered.
    pub registered: bool,
    /// When it was registered or first recorded.
    pub created_at: String,
    /// Advances on every call the agent makes; none for an agent only ever written to.
    pub last_seen_at: Option<String>,
    /// Grows by one with every registration change.
    pub version: i64,
}

/// Params of `agents.register`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RegisterParams {
    /// `^[a-z0-9]+(?:-[a-z0-9]+)*$`, 3 to 48 characters.
    #[schemars(length(min = 3, max = 48), pattern(r"^[a-z0-9]+(?:-[a-z0-9]+)*$"))]
    pub agent_id: String,
    /// Not blank (trimmed), ≤ 100 characters.
    pub role: String,
    /// ≤ 200 characters (trimmed). Default: the id.
    #[serde(default)]
    pub display_name: Option<String>,
    /// Update the display name and role of an existing agent instead of failing.
    #[serde(default)]
    pub force_update: bool,
    /// With `force_update`: issue a new secret (the old one stops working).
    #[serde(default)]
    pub rotate_secret: bool,
}

/// Result of `agents.register` and `agents.heartbeat`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AgentResult {
    /// Agent name.
    pub agent: Agent,
    /// The event recorded, if the call changed anything but `last_seen_at`.
    pub event_id: Option<i64>,
    /// The agent's secret, when this call issued one (a registration, or a rotation): shown
    /// once, stored only hashed. `null` otherwise.
    #[serde(default)]
    pub secret: Option<String>,
}

/// The environment variable the CLIs and the MCP server read an agent's secret from.
pub const AGENT_SECRET_ENV: &str = "COORD_AGENT_SECRET";

/// The agent a secret was issued to: secrets read `cs_<agent id>_<64 hex digits>`.
pub fn secret_agent(secret: &str) -> Option<&str> {
    let rest = secret.strip_prefix("cs_")?;
    let (agent, key) = rest.rsplit_once('_')?;
    (!agent.is_empty() && key.len() == 64 && key.bytes().all(|b| b.is_ascii_hexdigit())).then_some(agent)
}

/// Params of `agents.authenticate`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AuthenticateParams {
    /// The agent this connection proves it acts for.
    pub agent_id: String,
    /// The agent's secret, as given by `agents.register`.
    pub secret: String,
}

/// Result of `agents.authenticate`: every agent this connection is now authenticated as.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AuthenticateResult {
    /// Agent name.
    pub agent_id: String,
    /// Whether the secret matched.
    pub authenticated: Vec<String>,
}

/// Params of `agents.list`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AgentListParams {
    /// The role.
    #[serde(default)]
    pub role: Option<String>,
    /// Only this state.
    #[serde(default)]
    pub status: Option<AgentStatus>,
    /// Also list agents that were seen but never registered.
    #[serde(default)]
    pub include_unregistered: bool,
    /// Only agents after this one in the list's order (a `next_after` of an earlier page).
    #[serde(default)]
    pub after: Option<String>,
}

/// Result of `agents.list`: sorted by id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AgentsResult {
    /// The agents.
    pub agents: Vec<Agent>,
    /// The list stopped early to keep the reply under [`crate::MAX_REPLY_BYTES`]
    /// (protocol §1.7): continue with `after` = `next_after`.
    #[serde(default)]
    pub truncated: bool,
    /// Where to continue when `truncated`: the `agent_id` of the last agent returned.
    #[serde(default)]
    pub next_after: Option<String>,
}

/// Params of `agents.show`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AgentRef {
    /// Agent name.
    pub agent_id: String,
}

/// Params of `agents.heartbeat`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct HeartbeatParams {
    /// The agent whose heartbeat this is.
    pub agent_id: String,
    /// Its new status, if it changed.
    #[serde(default)]
    pub status: Option<AgentStatus>,
}

/// The copies a message got when it was written (an event's `mail`): every one of them
/// starts queued in its recipient's session mailbox.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EventMail {
    /// One per copy, in name order: an agent, or `task:<id>` for mail to a task. Empty when
    /// the message got no copy (sent to its own sender, or an answer to a typed request).
    pub recipients: Vec<String>,
    /// The copies' priority (the send's, else the thread's).
    pub priority: Priority,
    /// When the queued copies expire (`expires_in_seconds`), if they do.
    #[serde(default)]
    pub expires_at: Option<String>,
}

/// One message as one recipient sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MailItem {
    /// The message (`msg_…`).
    pub message_id: String,
    /// The thread (`thr_…`).
    pub thread_id: String,
    /// The thread's.
    pub run_id: String,
    /// The task (the seed's bead) of the message's thread.
    pub task_id: String,
    /// Sender.
    pub from_agent: String,
    /// This recipient (also for a broadcast).
    pub to_agent: String,
    /// Mail category (`HANDOFF`, `BLOCKED`, `DECISION`, `INFO`), or null.
    pub category: Option<Category>,
    /// The thread's subject.
    pub subject: String,
    /// The message's.
    pub summary: String,
    /// Full text, `""` if none.
    pub body: String,
    /// Kind.
    pub kind: MessageKind,
    /// Whether the recipient is asked to ack it.
    pub requires_ack: bool,
    /// This recipient's state.
    pub state: MailState,
    /// The thread's priority when sent (`urgent` mail is surfaced first).
    pub priority: Priority,
    /// The whole lifecycle: queued, delivered, read, acked, expired or withdrawn.
    pub delivery: Delivery,
    /// When the message was sent.
    pub created_at: String,
    /// When `mail.check` delivered this copy (or it was read or acked).
    pub delivered_at: Option<String>,
    /// When the recipient read it, or null.
    pub read_at: Option<String>,
    /// When the recipient acked it, or null.
    pub acked_at: Option<String>,
    /// From `expires_in_seconds`: a copy still queued past it is `expired`.
    pub expires_at: Option<String>,
    /// When the sender withdrew it.
    pub withdrawn_at: Option<String>,
    /// The event that recorded the message.
    pub event_id: i64,
}

/// Params of `mail.list`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MailParams {
    /// The recipient.
    pub agent: String,
    /// Only items in this state. Default: all.
    #[serde(default)]
    pub state: Option<MailState>,
    /// Only messages of threads with this `task_id`. Default: all.
    #[serde(default)]
    pub task_id: Option<String>,
    /// Default 50, at most 500.
    #[serde(default)]
    pub limit: Option<u32>,
    /// Only copies older than this event (paging backwards: a `next_after` of an earlier
    /// page).
    #[serde(default)]
    pub before_event: Option<i64>,
}

/// Result of `mail.list`: newest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MailResult {
    /// The mail.
    pub mail: Vec<MailItem>,
    /// The list stopped early, before its `limit`, to keep the reply under
    /// [`crate::MAX_REPLY_BYTES`] (protocol §1.7): continue with `before_event` = `next_after`.
    #[serde(default)]
    pub truncated: bool,
    /// Where to continue when `truncated`: the `event_id` of the last (oldest) copy returned.
    #[serde(default)]
    pub next_after: Option<i64>,
}

/// Params of `mail.read` and `mail.ack`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MailRef {
    /// Agent name.
    pub agent: String,
    /// The message (`msg_…`).
    pub message_id: String,
}

/// Result of `mail.read` and `mail.ack`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MailItemResult {
    /// The mail.
    pub mail: MailItem,
    /// The event recorded, or none when the state did not change.
    pub event_id: Option<i64>,
}
