//! The records the repositories exchange ([`super::repos`]): rows as stored where they are
//! not the protocol's own entity types, and the queries rules hand to storage.

use coord_proto::types::*;

use crate::time::Ts;

/// A thread as stored, with its lease row (whose token never leaves the daemon).
#[derive(Debug, Clone)]
pub struct StoredThread {
    /// `lease` is `None` here; the domain derives the public view from [`Self::lease`].
    pub thread: Thread,
    pub lease: Option<LeaseRow>,
}

/// A thread's current (or last) lease.
#[derive(Debug, Clone, PartialEq)]
pub struct LeaseRow {
    pub agent_id: String,
    pub token: String,
    pub generation: i64,
    pub claimed_at: Ts,
    pub expires_at: Ts,
    pub released_at: Option<Ts>,
}

/// `inbox.fetch`'s query: threads assigned to `agent` in one of `statuses`, highest
/// priority first, then oldest.
#[derive(Debug, Clone)]
pub struct FetchQuery {
    pub agent: String,
    pub statuses: Vec<ThreadStatus>,
    /// Only threads holding a message to the agent, from someone else, past its read mark.
    pub unread: bool,
    /// Only threads after this one in the list's order (a page's cursor).
    pub after: Option<String>,
    pub limit: u32,
}

/// `inbox.fetch`'s page cursor as SQL: threads after thread `{n}` in the order
/// `prio_rank DESC, created_at, thread_id` (`{n}` is the placeholder of its id).
pub const FETCH_AFTER: &str = "AND EXISTS (SELECT 1 FROM threads c WHERE c.thread_id = {n} \
     AND (t.prio_rank < c.prio_rank OR (t.prio_rank = c.prio_rank \
     AND (t.created_at > c.created_at OR (t.created_at = c.created_at AND t.thread_id > c.thread_id)))))";

/// `inbox.list`'s page cursor as SQL: threads after thread `{n}` in the order
/// `updated_at DESC, thread_id`.
pub const LIST_AFTER: &str = "EXISTS (SELECT 1 FROM threads c WHERE c.thread_id = {n} \
     AND (t.updated_at < c.updated_at OR (t.updated_at = c.updated_at AND t.thread_id > c.thread_id)))";

/// A filter over stored events: those after `after` that match `filter` (its cursors are
/// already resolved into `after`).
#[derive(Debug, Clone)]
pub struct EventQuery {
    pub after: i64,
    pub filter: EventFilter,
}

/// One recipient's copy of a message, as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct MailRow {
    pub recipient: String,
    pub message_id: String,
    pub event_id: i64,
    pub thread_id: String,
    pub run_id: String,
    pub task_id: String,
    pub subject: String,
    pub from_agent: String,
    pub kind: MessageKind,
    pub category: Option<Category>,
    pub summary: String,
    pub body: String,
    pub requires_ack: bool,
    pub created_at: String,
    pub state: MailState,
    pub priority: Priority,
    pub delivered_at: Option<Ts>,
    pub read_at: Option<Ts>,
    pub acked_at: Option<Ts>,
    pub expires_at: Option<Ts>,
    pub withdrawn_at: Option<Ts>,
    pub reminded_at: Option<Ts>,
}

/// Queued mail of some recipients at `now` (not delivered, withdrawn or expired).
#[derive(Debug, Clone)]
pub struct QueuedQuery {
    pub recipients: Vec<String>,
    pub now: Ts,
    /// Only these priorities (empty: all).
    pub priorities: Vec<Priority>,
    /// Only mail nobody was reminded of yet.
    pub unreminded: bool,
    pub limit: u32,
}

/// `mail.list`'s query, newest first.
#[derive(Debug, Clone)]
pub struct MailQuery {
    pub recipient: String,
    /// Only copies in this read state; withdrawn copies are in none (they are listed only
    /// without a state filter, as withdrawn).
    pub state: Option<MailState>,
    pub task_id: Option<String>,
    /// Only copies older than this event (paging backwards).
    pub before_event: Option<i64>,
    pub limit: u32,
    /// Stop reading once the copies read hold this much text (the reply's bound).
    pub max_bytes: usize,
}

/// `view.timeline`'s query: copies newest first, narrowed by at most one of `agent`
/// (recipient or sender), `thread_id` and `run_id`, before an event.
#[derive(Debug, Clone, Default)]
pub struct TimelineQuery {
    pub agent: Option<String>,
    pub thread_id: Option<String>,
    pub run_id: Option<String>,
    pub before_event: Option<i64>,
    pub limit: u32,
    /// Stop reading once the copies read hold this much text (the reply's bound).
    pub max_bytes: usize,
}

/// A reservation as stored; `reservation.stale` is derived by the domain from `expires`.
#[derive(Debug, Clone)]
pub struct StoredReservation {
    pub reservation: Reservation,
    pub expires: Ts,
}

/// `reservations.list`'s storage-side filter (the path filter is the domain's).
#[derive(Debug, Clone, Default)]
pub struct ReservationQuery {
    pub agent: Option<String>,
    pub task_id: Option<String>,
    pub include_history: bool,
}

/// Reservations by state, with active ones split by whether `expires_at` has passed.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReservationCounts {
    pub active: u64,
    pub stale: u64,
    pub released: u64,
    pub expired: u64,
}

/// A task's retry bookkeeping (not part of the protocol's `Task`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RetryState {
    /// Automatic retries used.
    pub auto_retries: u32,
    /// A failure scheduled an automatic retry that has not happened yet.
    pub pending: bool,
}

/// A council as stored; `groups_json` is the domain's own serialisation.
#[derive(Debug, Clone)]
pub struct CouncilRow {
    pub run_id: String,
    pub council_id: String,
    pub topic: String,
    pub body: String,
    pub phase: CouncilPhase,
    pub groups_json: String,
    pub created_at: String,
    pub updated_at: String,
}

/// One reviewer of a council, as stored.
#[derive(Debug, Clone)]
pub struct MemberRow {
    pub run_id: String,
    pub council_id: String,
    pub reviewer: String,
    pub ord: i64,
    pub brainstorm_thread_id: String,
    /// The payload that finished the brainstorm thread (`null` if it did not finish done).
    pub brainstorm_json: Option<String>,
    pub vote_thread_id: Option<String>,
    pub vote_json: Option<String>,
}

/// A typed request as stored: the thread it opened and who asked whom.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestRow {
    pub request_id: String,
    pub msg_type: String,
    pub thread_id: String,
    pub message_id: String,
    pub from_agent: String,
    pub to_agent: String,
    pub run_id: String,
    pub task_id: String,
    pub created_at: String,
}

/// `control.requests`' query: open requests oldest first, or with `include_closed` all of
/// them newest first.
#[derive(Debug, Clone, Default)]
pub struct RequestQuery {
    pub request_id: Option<String>,
    pub to: Option<String>,
    pub from: Option<String>,
    pub run_id: Option<String>,
    pub types: Vec<String>,
    pub include_closed: bool,
    /// Only requests after this one in the list's order (a page's cursor).
    pub after: Option<String>,
    pub limit: u32,
}

/// A search, as the rules hand it to storage.
#[derive(Debug, Clone)]
pub struct SearchQuery {
    /// What to look for.
    pub text: SearchText,
    pub agent: Option<String>,
    pub thread_id: Option<String>,
    pub run_id: Option<String>,
    pub task_id: Option<String>,
    pub kinds: Vec<MessageKind>,
    /// Created at or after (fixed-width RFC 3339 text compares as time).
    pub since: Option<String>,
    pub until: Option<String>,
    pub limit: u32,
    pub mark_open: String,
    pub mark_close: String,
}

/// The words of a search, or a query in the backend's own language.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SearchText {
    /// Every word must match (each a run of non-space characters holding a letter or digit).
    Words(Vec<String>),
    /// An SQLite FTS5 query, as the user wrote it (`syntax: "fts5"`).
    Fts5(String),
}
