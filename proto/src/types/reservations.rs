//! File-scope reservations and the status summary (the agent registry and mail are in `agents.rs`).

use super::*;
use serde::{Deserialize, Serialize};

/// A file-scope reservation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Reservation {
    /// `res_…`.
    pub reservation_id: String,
    /// A path or glob, relative to the project (repository) root.
    pub scope: String,
    /// Holder.
    pub agent_id: String,
    /// The task id, unique within its run.
    pub task_id: String,
    /// Shared reservations coexist with each other, never with an exclusive one.
    pub shared: bool,
    /// State.
    pub state: ReservationState,
    /// Active, but `expires_at` has passed: anyone may take it over.
    pub stale: bool,
    /// Fencing generation of the scope: one more than any reservation it replaced.
    pub generation: i64,
    /// A renewal moves `expires_at` only.
    pub created_at: String,
    /// When it expires.
    pub expires_at: String,
    /// When it was released or taken over.
    pub released_at: Option<String>,
}

/// Params of `reservations.reserve`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(transform = super::require("task_id"))]
pub struct ReserveParams {
    /// The holder.
    pub agent: String,
    /// A path or glob relative to the project root (below).
    pub scope: String,
    /// Required (`missing_task_id` without it).
    #[serde(default)]
    pub task_id: Option<String>,
    /// Minutes, 5 to 1440; default 120.
    #[serde(default)]
    pub ttl_minutes: Option<u32>,
    /// Shared reservations coexist with each other, never with an exclusive one. Default: `false`.
    #[serde(default)]
    pub shared: bool,
    /// Take over overlapping reservations that have expired.
    #[serde(default)]
    pub takeover_stale: bool,
}

/// Result of `reservations.reserve`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReserveResult {
    /// The reservation.
    pub reservation: Reservation,
    /// Stale reservations this one took over (now `expired`).
    pub taken_over: Vec<Reservation>,
    /// True when the agent already held this exact scope and the call extended it.
    pub renewed: bool,
    /// The event that recorded the change; usable as an `after_event` cursor.
    pub event_id: i64,
}

/// Params of `reservations.release`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReleaseParams {
    /// The owner releasing the reservation.
    pub agent: String,
    /// A path or glob relative to the project root.
    pub scope: String,
}

/// Result of `reservations.release`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReleaseResult {
    /// The reservation.
    pub reservation: Reservation,
    /// The event that recorded the change; usable as an `after_event` cursor.
    pub event_id: i64,
}

/// Params of `reservations.list`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReservationListParams {
    /// Only this holder.
    #[serde(default)]
    pub agent: Option<String>,
    /// Only this task.
    #[serde(default)]
    pub task_id: Option<String>,
    /// Only reservations whose scope covers this file: who holds it?
    #[serde(default)]
    pub path: Option<String>,
    /// Include released and expired ones (the history), newest first.
    #[serde(default)]
    pub include_history: bool,
    /// 1 to 10000. Default: 10000.
    #[serde(default)]
    pub limit: Option<u32>,
    /// Only reservations after this one in the list's order (a `next_after` of an earlier
    /// page).
    #[serde(default)]
    pub after: Option<String>,
}

/// Result of `reservations.list`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReservationsResult {
    /// The reservations.
    pub reservations: Vec<Reservation>,
    /// The list stopped early, before its `limit`, to keep the reply under
    /// [`crate::MAX_REPLY_BYTES`] (protocol §1.7): continue with `after` = `next_after`.
    #[serde(default)]
    pub truncated: bool,
    /// Where to continue when `truncated`: the `reservation_id` of the last one returned.
    #[serde(default)]
    pub next_after: Option<String>,
}

/// Params of `reservations.check`: may `agent` commit changes to these paths?
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CheckPathsParams {
    /// The committing agent; none means every holder is someone else.
    #[serde(default)]
    pub agent: Option<String>,
    /// Files to check, relative to the project root.
    pub paths: Vec<String>,
    /// Skip this many conflicts (a `next_after` of an earlier page). Default: 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u32>,
}

/// A path inside another agent's active exclusive reservation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PathConflict {
    /// The path.
    pub path: String,
    /// The reservation.
    pub reservation: Reservation,
}

/// Result of `reservations.check`: empty `conflicts` means the commit may go ahead.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CheckPathsResult {
    /// The conflicts.
    pub conflicts: Vec<PathConflict>,
    /// The list stopped early to keep the reply under [`crate::MAX_REPLY_BYTES`] (protocol
    /// §1.7): continue with `offset` = `next_after`.
    #[serde(default)]
    pub truncated: bool,
    /// Where to continue when `truncated`: how many conflicts came before the next page.
    #[serde(default)]
    pub next_after: Option<u32>,
}

/// Params of `inbox.status`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StatusParams {
    /// Only this task.
    #[serde(default)]
    pub task_id: Option<String>,
    /// Only this agent.
    #[serde(default)]
    pub agent: Option<String>,
}

/// A message that requires an ack and has none yet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct UnackedItem {
    /// The mail.
    #[serde(flatten)]
    pub mail: MailItem,
    /// Seconds since the message was sent.
    pub waiting_seconds: u64,
}

/// Counts of mail (per recipient) and reservations by state.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StatusCounts {
    /// How many unread mail rows.
    pub unread: u64,
    /// How many read mail rows.
    pub read: u64,
    /// How many acked mail rows.
    pub acked: u64,
    /// Messages requiring an ack that have none yet.
    pub unacked_required: u64,
    /// How many reservations are active.
    pub reservations_active: u64,
    /// How many reservations are stale.
    pub reservations_stale: u64,
    /// How many reservations are released.
    pub reservations_released: u64,
    /// How many reservations are expired.
    pub reservations_expired: u64,
}

/// Result of `inbox.status`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StatusResult {
    /// Active reservations, stale ones included (flagged).
    pub reservations: Vec<Reservation>,
    /// Unacked messages that require an ack, oldest first.
    pub unacked: Vec<UnackedItem>,
    /// The counts.
    pub counts: StatusCounts,
}

/// Params of `inbox.init`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct InitParams {
    /// Require registration: sends from or to unknown agents then fail. Unset leaves the
    /// setting as it is.
    #[serde(default)]
    pub strict_agents: Option<bool>,
    /// Require credentials: every write made as an agent then needs a connection that
    /// authenticated as that agent (`agents.authenticate`). Unset leaves the setting as it
    /// is; while it is on, changing a setting needs an authenticated connection.
    #[serde(default)]
    pub require_credentials: Option<bool>,
    /// The project's lead: with credentials required, only the lead and the admins may
    /// change the policy, these settings and the roster. The first `init` that names one
    /// decides; changing it later needs the lead's (or an admin's) connection. Unset leaves
    /// it as it is; an empty string removes it (not while credentials are required).
    #[serde(default)]
    pub lead: Option<String>,
    /// The admins, who share the lead's authority; the list replaces the stored one. Unset
    /// leaves it as it is.
    #[serde(default)]
    pub admins: Option<Vec<String>>,
}
