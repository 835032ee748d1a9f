//! The repository traits: everything the domain rules need from storage, one trait per
//! domain, handed out one at a time by [`Tx`]. A backend implements them all; every rule in
//! `domain` and `ops` is written against them once, with no SQL.
//!
//! Conventions: read methods take `&self` (a read snapshot only hands out `&dyn Tx`, whose
//! `tx.threads()` gives `&dyn Threads`), write methods `&mut self` (only the writer's
//! transaction hands out `tx.threads_mut()`). Records carry the protocol's entity types
//! where the domain only passes values through, and [`Ts`] wherever a rule compares times.

use coord_proto::types::*;

pub use super::records::*;
pub use super::within::Within;
use crate::error::Result;
use crate::time::Ts;

/// Threads and read marks.
pub trait Threads {
    fn thread(&self, thread_id: &str) -> Result<Option<StoredThread>>;
    fn thread_exists(&self, thread_id: &str) -> Result<bool>;
    /// Insert a new thread with its final values (it has no lease yet).
    fn thread_insert(&mut self, t: &Thread) -> Result<()>;
    /// Write a thread's mutable fields: assignee, status, latest message, `updated_at`.
    fn thread_save(&mut self, t: &Thread) -> Result<()>;
    fn threads_fetch(&self, q: &FetchQuery) -> Result<Vec<StoredThread>>;
    /// Threads matching every given filter, most recently active first.
    fn threads_list(&self, p: &ListParams, limit: u32) -> Result<Vec<StoredThread>>;
    /// The distinct tasks of the threads an agent holds (claimed, in progress, blocked).
    fn tasks_running(&self, agent: &str) -> Result<Vec<String>>;
    /// The agent has read `thread_id` up to `event_id` (never moves back).
    fn read_mark(&mut self, agent: &str, thread_id: &str, event_id: i64) -> Result<()>;
}

/// Leases (one row per thread, replaced by each new grant).
pub trait Leases {
    /// A new grant: replaces the thread's lease row, not released, expiry unreported.
    fn lease_grant(&mut self, thread_id: &str, lease: &LeaseRow) -> Result<()>;
    fn lease_set_expiry(&mut self, thread_id: &str, expires_at: Ts) -> Result<()>;
    /// Release the live lease, if any.
    fn lease_release(&mut self, thread_id: &str, at: Ts) -> Result<()>;
    /// Unreleased leases that expired at or before `now` and were not reported yet.
    fn leases_expired_unreported(&self, now: Ts) -> Result<Vec<(String, LeaseRow)>>;
    fn lease_mark_reported(&mut self, thread_id: &str) -> Result<()>;
    /// The earliest expiry among unreleased, unreported leases.
    fn lease_next_expiry(&self) -> Result<Option<Ts>>;
}

/// Messages and their artifacts.
pub trait Messages {
    /// Insert a message and its artifacts.
    fn message_insert(&mut self, m: &Message) -> Result<()>;
    /// A message with its artifacts.
    fn message(&self, message_id: &str) -> Result<Option<Message>>;
    /// A thread's messages in event order, each with its artifacts.
    fn thread_messages(&self, thread_id: &str) -> Result<Vec<Message>>;
    /// A thread's messages after event `after_event`, in event order, each with its
    /// artifacts: read until they hold `max_bytes` of text ([`Within`]).
    fn thread_messages_after(&self, thread_id: &str, after_event: i64, max_bytes: usize) -> Result<Within<Message>>;
    /// The event id of a thread's newest message (0 when it has none).
    fn last_message_event(&self, thread_id: &str) -> Result<i64>;
    /// The event id of the newest message `from_agent` sent in a thread (0 when it sent
    /// none).
    fn last_message_event_from(&self, thread_id: &str, from_agent: &str) -> Result<i64>;
    /// A thread's newest message of a kind.
    fn latest_message_of_kind(&self, thread_id: &str, kind: MessageKind) -> Result<Option<Message>>;
    /// The event id and thread of a message (for `after_message` cursors).
    fn message_cursor(&self, message_id: &str) -> Result<Option<(i64, String)>>;
}

/// The event stream.
pub trait Events {
    /// Store an event (its `event_id` is ignored) and return the id it got: larger than
    /// every id before it. Publishing is separate ([`Tx::publish`]).
    fn event_insert(&mut self, e: &Event) -> Result<i64>;
    /// Stored events matching `q`, oldest first, at most `limit`, each with its message.
    fn events_after(&self, q: &EventQuery, limit: u32) -> Result<Vec<Event>>;
    /// Like [`Events::events_after`], but a backend may stop early once the events it has
    /// read weigh `max_bytes` (estimated JSON size; always at least one event), so a page
    /// of large events stays small in memory. The default reads a whole page.
    fn events_page(&self, q: &EventQuery, limit: u32, max_bytes: usize) -> Result<Vec<Event>> {
        let _ = max_bytes;
        self.events_after(q, limit)
    }
    /// The newest stored event id (0 when there is none).
    fn last_event_id(&self) -> Result<i64>;
    /// The copies the messages of these events got (`event_ids`: message events), as
    /// `(event_id, recipient, priority, expires_at)` in event then recipient order: what a
    /// replayed event's `mail` is made of. One query, whatever the number of events.
    fn events_mail(&self, event_ids: &[i64]) -> Result<Vec<CopyOf>>;
}

/// A copy as [`Events::events_mail`] reads it: its message's event, its recipient, its
/// priority and its expiry.
pub type CopyOf = (i64, String, Priority, Option<Ts>);

/// Per-recipient mail.
pub trait Mail {
    fn mail_insert(&mut self, row: &MailRow) -> Result<()>;
    /// Write a copy's state and timestamps back.
    fn mail_save(&mut self, row: &MailRow) -> Result<()>;
    fn mail_item(&self, recipient: &str, message_id: &str) -> Result<Option<MailRow>>;
    /// Newest first, at most `q.limit`, read until they hold `q.max_bytes` of text.
    fn mail_list(&self, q: &MailQuery) -> Result<Within<MailRow>>;
    /// Queued copies, urgent first, then oldest.
    fn mail_queued(&self, q: &QueuedQuery) -> Result<Vec<MailRow>>;
    /// `(queued, of which urgent)`.
    fn mail_queued_count(&self, recipients: &[String], now: Ts) -> Result<(u64, u64)>;
    /// A message's copies still queued at `now`, by recipient.
    fn mail_queued_copies(&self, message_id: &str, now: Ts) -> Result<Vec<MailRow>>;
    /// Copies requiring an ack that have none (and were not withdrawn), oldest first: of a
    /// task's threads and/or to or from an agent.
    fn mail_unacked(&self, task_id: Option<&str>, agent: Option<&str>, limit: u32) -> Result<Vec<MailRow>>;
    /// Copy counts by `(state, requires_ack)`, of a task's threads and/or to an agent
    /// (withdrawn copies not counted).
    fn mail_counts(&self, task_id: Option<&str>, agent: Option<&str>) -> Result<Vec<(MailState, bool, u64)>>;
    /// Copies for a timeline, newest first, at most `q.limit`, read until they hold
    /// `q.max_bytes` of text (a message's copies are never split).
    fn mail_timeline(&self, q: &TimelineQuery) -> Result<Within<MailRow>>;
}

/// The agent registry and project settings.
pub trait Agents {
    fn agent(&self, agent_id: &str) -> Result<Option<Agent>>;
    fn agent_insert(&mut self, a: &Agent) -> Result<()>;
    /// Write an agent's fields back.
    fn agent_save(&mut self, a: &Agent) -> Result<()>;
    /// Advance `last_seen_at`; false when no such agent exists.
    fn agent_touch(&mut self, agent_id: &str, at: Ts) -> Result<bool>;
    /// Advance `last_seen_at` of every agent of `agent_ids`; the ids of those that do not
    /// exist, in the order given. One [`Agents::agent_touch`] each unless a backend does
    /// better (SQLite: one statement).
    fn agents_touch(&mut self, agent_ids: &[&str], at: Ts) -> Result<Vec<String>> {
        let mut missing = Vec::new();
        for id in agent_ids {
            if !self.agent_touch(id, at)? {
                missing.push(id.to_string());
            }
        }
        Ok(missing)
    }
    /// Sorted by id.
    fn agents_list(&self, p: &AgentListParams) -> Result<Vec<Agent>>;
    /// Registered agents other than `except`, sorted.
    fn agents_registered(&self, except: &str) -> Result<Vec<String>>;
    fn setting(&self, key: &str) -> Result<Option<String>>;
    fn setting_put(&mut self, key: &str, value: &str) -> Result<()>;
    /// The hash of an agent's secret, if it has one.
    fn credential_hash(&self, agent_id: &str) -> Result<Option<String>>;
    /// Store (or replace) the hash of an agent's secret.
    fn credential_put(&mut self, agent_id: &str, hash: &str, at: Ts) -> Result<()>;
}

/// File-scope reservations (never deleted).
pub trait Reservations {
    /// Every active reservation (stale ones too), by scope.
    fn reservations_active(&self) -> Result<Vec<StoredReservation>>;
    fn reservation_insert(&mut self, r: &Reservation) -> Result<()>;
    /// Write state, task, `expires_at` and `released_at` back.
    fn reservation_save(&mut self, r: &Reservation) -> Result<()>;
    /// The highest generation any reservation of exactly this scope ever had (0: none).
    fn reservation_max_generation(&self, scope: &str) -> Result<i64>;
    /// Newest first.
    fn reservations_list(&self, q: &ReservationQuery) -> Result<Vec<StoredReservation>>;
    fn reservation_counts(&self, task_id: Option<&str>, agent: Option<&str>, now: Ts) -> Result<ReservationCounts>;
}

/// Linked peer tasks (symmetric, never removed).
pub trait Peers {
    /// Link both ways; false when they already were.
    fn peer_link(&mut self, task_id: &str, peer_task_id: &str, at: Ts) -> Result<bool>;
    /// Sorted.
    fn peers_of(&self, task_id: &str) -> Result<Vec<String>>;
}

/// orch runs.
pub trait Runs {
    fn run(&self, run_id: &str) -> Result<Option<Run>>;
    fn run_insert(&mut self, r: &Run) -> Result<()>;
    /// Write status and `updated_at` back.
    fn run_save(&mut self, r: &Run) -> Result<()>;
    /// By creation.
    fn runs_list(&self) -> Result<Vec<Run>>;
    fn runs_count(&self) -> Result<i64>;
}

/// orch tasks and their dependencies.
pub trait Tasks {
    /// A task with its dependencies.
    fn task(&self, run_id: &str, task_id: &str) -> Result<Option<Task>>;
    /// Insert a task and its dependency edges.
    fn task_insert(&mut self, t: &Task) -> Result<()>;
    /// Write status, attempt and `updated_at` back.
    fn task_save(&mut self, t: &Task) -> Result<()>;
    /// A run's tasks in creation order, with their dependencies.
    fn run_tasks(&self, run_id: &str) -> Result<Vec<Task>>;
    /// A run's tasks in creation order after task `after` (from the first without it), of
    /// `statuses` (any when empty), at most `limit`, with their dependencies: read until
    /// they hold `max_bytes` of text ([`Within`]).
    fn tasks_page(
        &self,
        run_id: &str,
        after: Option<&str>,
        statuses: &[TaskStatus],
        limit: u32,
        max_bytes: usize,
    ) -> Result<Within<Task>>;
    /// Ready tasks, highest priority first, then oldest, with their dependencies.
    fn tasks_ready(&self, run_id: &str, limit: u32) -> Result<Vec<Task>>;
    fn task_deps(&self, run_id: &str, task_id: &str) -> Result<Vec<String>>;
    /// The tasks that depend on this one, sorted.
    fn task_dependents(&self, run_id: &str, task_id: &str) -> Result<Vec<String>>;
    fn task_dep_add(&mut self, run_id: &str, task_id: &str, on: &str) -> Result<()>;
    /// False when there was no such edge.
    fn task_dep_remove(&mut self, run_id: &str, task_id: &str, on: &str) -> Result<bool>;
    fn task_retry(&self, run_id: &str, task_id: &str) -> Result<RetryState>;
    fn task_set_retry(&mut self, run_id: &str, task_id: &str, r: RetryState) -> Result<()>;
    /// Every task with a pending automatic retry, as `(run, task)`.
    fn tasks_retry_pending(&self) -> Result<Vec<(String, String)>>;
    /// Does the run have a task in one of `statuses` (and, when given, with this
    /// `retry_pending`)? Answered from an index without counting the run's tasks.
    fn run_has_task(&self, run_id: &str, statuses: &[TaskStatus], retry_pending: Option<bool>) -> Result<bool>;
    /// `(total, done, failed)` task counts of a run.
    fn run_task_counts(&self, run_id: &str) -> Result<(i64, i64, i64)>;
    /// Write the editable fields back: title, body, acceptance, priority, worker, role,
    /// kind and attempt limit.
    fn task_update(&mut self, t: &Task) -> Result<()>;
    /// Delete a task and its dependency edges, both ways.
    fn task_delete(&mut self, run_id: &str, task_id: &str) -> Result<()>;
}

/// orch attempts.
pub trait Attempts {
    fn attempts_of(&self, run_id: &str, task_id: &str) -> Result<Vec<Attempt>>;
    fn attempt(&self, run_id: &str, task_id: &str, attempt: u32) -> Result<Option<Attempt>>;
    fn attempt_by_thread(&self, thread_id: &str) -> Result<Option<Attempt>>;
    fn attempt_insert(&mut self, a: &Attempt) -> Result<()>;
    /// Write status and `ended_at` back.
    fn attempt_save(&mut self, a: &Attempt) -> Result<()>;
    /// Attempts that have a worktree, of one run or all, by run, task and attempt.
    fn attempts_with_worktree(&self, run_id: Option<&str>) -> Result<Vec<Attempt>>;
}

/// orch council reviews.
pub trait Councils {
    fn council(&self, run_id: &str, council_id: &str) -> Result<Option<CouncilRow>>;
    fn council_insert(&mut self, c: &CouncilRow) -> Result<()>;
    /// Write phase, groups and `updated_at` back.
    fn council_save(&mut self, c: &CouncilRow) -> Result<()>;
    fn councils_count(&self, run_id: &str) -> Result<i64>;
    /// A run's councils in a brainstorm or voting phase.
    fn councils_open(&self, run_id: &str) -> Result<Vec<CouncilRow>>;
    fn member_insert(&mut self, m: &MemberRow) -> Result<()>;
    /// Write the results and the vote thread back.
    fn member_save(&mut self, m: &MemberRow) -> Result<()>;
    /// A council's members in order.
    fn members(&self, run_id: &str, council_id: &str) -> Result<Vec<MemberRow>>;
    /// The member whose brainstorm or vote thread this is.
    fn member_by_thread(&self, thread_id: &str) -> Result<Option<MemberRow>>;
    /// A run's councils, oldest first.
    fn councils_of(&self, run_id: &str) -> Result<Vec<CouncilRow>>;
}

/// orch's stacked tasks: a run's integration branch, and its done tasks' merge state.
pub trait Merges {
    /// Write the run's repository, base branch and revision, and integration branch.
    fn run_set_integration(&mut self, r: &Run) -> Result<()>;
    /// Write a task's merge state and merge commit.
    fn task_set_merge(&mut self, t: &Task) -> Result<()>;
    /// Done tasks whose merge is pending in runs that merge automatically, as `(run, task)`.
    fn tasks_auto_merge_pending(&self) -> Result<Vec<(String, String)>>;
    /// Has the run a task whose merge is pending or in conflict?
    fn run_has_unmerged(&self, run_id: &str) -> Result<bool>;
}

/// The merge queue's candidates (one per done attempt of a code task), the review
/// comments on task diffs, and the run and task settings they follow.
pub trait Queue {
    /// Write a run's queue settings: verify, require_approval, auto_merge, merge_retries.
    fn run_set_settings(&mut self, r: &Run) -> Result<()>;
    /// Write a task's own verify command.
    fn task_set_verify(&mut self, t: &Task) -> Result<()>;
    /// Insert a candidate, or replace the one of its run, task and attempt.
    fn candidate_put(&mut self, c: &MergeCandidate) -> Result<()>;
    fn candidate(&self, run_id: &str, task_id: &str, attempt: u32) -> Result<Option<MergeCandidate>>;
    /// The task's newest candidate (its highest attempt).
    fn candidate_latest(&self, run_id: &str, task_id: &str) -> Result<Option<MergeCandidate>>;
    /// Candidates in these states, of one run or all, in queue order (`seq`, then when
    /// they were made).
    fn candidates_in(&self, run_id: Option<&str>, states: &[QueueState]) -> Result<Vec<MergeCandidate>>;
    /// How many of the task's candidates are in these states.
    fn candidates_count(&self, run_id: &str, task_id: &str, states: &[QueueState]) -> Result<u32>;
    /// The highest `seq` given in the run (0 when none).
    fn queue_last_seq(&self, run_id: &str) -> Result<i64>;
    fn comment_insert(&mut self, c: &ReviewComment) -> Result<()>;
    /// The comments on one attempt of a task, oldest first.
    fn comments_of(&self, run_id: &str, task_id: &str, attempt: u32) -> Result<Vec<ReviewComment>>;
    /// Mark the attempt's unsent comments as carried by `message_id`.
    fn comments_mark_sent(&mut self, run_id: &str, task_id: &str, attempt: u32, message_id: &str) -> Result<()>;
}

/// Full-text search over messages. The index is fed off the send path: a message is
/// searchable once [`Search::search_index_pending`] has run after it was written.
pub trait Search {
    /// Index up to `limit` messages not indexed yet, oldest first; how many were indexed.
    /// The position is saved in the same transaction, so a crash loses nothing.
    fn search_index_pending(&mut self, limit: u32) -> Result<u32>;
    /// Are messages waiting to be indexed?
    fn search_pending(&self) -> Result<bool>;
    /// Indexed messages matching the query and filters, best first.
    fn messages_search(&self, q: &SearchQuery) -> Result<Vec<SearchHit>>;
}

/// Typed requests (the threads that permission, shutdown and plan-approval requests open).
pub trait Requests {
    fn request_insert(&mut self, r: &RequestRow) -> Result<()>;
    fn request(&self, request_id: &str) -> Result<Option<RequestRow>>;
    /// The request that opened this thread, if one did.
    fn request_of_thread(&self, thread_id: &str) -> Result<Option<RequestRow>>;
    /// Requests matching `q`, each with its thread's status.
    fn requests_list(&self, q: &RequestQuery) -> Result<Vec<(RequestRow, ThreadStatus)>>;
}

/// Launched sessions (`launch.*`): the worker processes launchers started for attempts.
pub trait Launches {
    /// Insert a running session unless its thread (its attempt) already has one: one
    /// statement, so the check and the insert are one step on both backends. `false`:
    /// refused, nothing written.
    fn launch_insert(&mut self, s: &LaunchSession) -> Result<bool>;
    fn launch_session(&self, session_id: &str) -> Result<Option<LaunchSession>>;
    /// Write the state and how it ended back.
    fn launch_save(&mut self, s: &LaunchSession) -> Result<()>;
    /// Sessions matching `q` (run, task, launcher, running only), oldest first.
    fn launch_list(&self, q: &SessionListParams) -> Result<Vec<LaunchSession>>;
    /// A session's usage and budget, once it reported usage or got a budget.
    fn usage(&self, session_id: &str) -> Result<Option<SessionUsage>>;
    /// Insert or replace a session's usage and budget.
    fn usage_save(&mut self, u: &SessionUsage) -> Result<()>;
    /// The usage of a run's sessions, oldest change first.
    fn usage_of_run(&self, run_id: &str) -> Result<Vec<SessionUsage>>;
    /// A run's budget, once one was set.
    fn run_budget(&self, run_id: &str) -> Result<Option<RunBudget>>;
    /// Insert or replace a run's budget.
    fn run_budget_save(&mut self, b: &RunBudget) -> Result<()>;
}

/// One transaction (or read snapshot), handing out one repository at a time: a rule asks
/// for the repository it needs (`tx.threads()` to read, `tx.threads_mut()` to write), so
/// what it touches, and every cross-domain read, shows at the call. A backend implements
/// every repository trait on its transaction type and [`repositories!`] inside its `Tx`.
pub trait Tx {
    fn threads(&self) -> &dyn Threads;
    fn threads_mut(&mut self) -> &mut dyn Threads;
    fn leases(&self) -> &dyn Leases;
    fn leases_mut(&mut self) -> &mut dyn Leases;
    fn messages(&self) -> &dyn Messages;
    fn messages_mut(&mut self) -> &mut dyn Messages;
    fn events(&self) -> &dyn Events;
    fn events_mut(&mut self) -> &mut dyn Events;
    fn mail(&self) -> &dyn Mail;
    fn mail_mut(&mut self) -> &mut dyn Mail;
    fn agents(&self) -> &dyn Agents;
    fn agents_mut(&mut self) -> &mut dyn Agents;
    fn reservations(&self) -> &dyn Reservations;
    fn reservations_mut(&mut self) -> &mut dyn Reservations;
    fn peers(&self) -> &dyn Peers;
    fn peers_mut(&mut self) -> &mut dyn Peers;
    fn runs(&self) -> &dyn Runs;
    fn runs_mut(&mut self) -> &mut dyn Runs;
    fn tasks(&self) -> &dyn Tasks;
    fn tasks_mut(&mut self) -> &mut dyn Tasks;
    fn attempts(&self) -> &dyn Attempts;
    fn attempts_mut(&mut self) -> &mut dyn Attempts;
    fn councils(&self) -> &dyn Councils;
    fn councils_mut(&mut self) -> &mut dyn Councils;
    fn requests(&self) -> &dyn Requests;
    fn requests_mut(&mut self) -> &mut dyn Requests;
    fn launches(&self) -> &dyn Launches;
    fn launches_mut(&mut self) -> &mut dyn Launches;
    fn merges(&self) -> &dyn Merges;
    fn merges_mut(&mut self) -> &mut dyn Merges;
    fn search(&self) -> &dyn Search;
    fn search_mut(&mut self) -> &mut dyn Search;
    fn queue(&self) -> &dyn Queue;
    fn queue_mut(&mut self) -> &mut dyn Queue;
    /// Publish `event` once this transaction commits (dropped if it rolls back).
    fn publish(&mut self, event: Event);
}

/// The repository accessors of [`Tx`], for a transaction type that implements every
/// repository trait itself (use inside its `impl Tx`).
#[macro_export]
macro_rules! repositories {
    () => {
        $crate::repositories!(
            threads threads_mut Threads, leases leases_mut Leases, messages messages_mut Messages,
            events events_mut Events, mail mail_mut Mail, agents agents_mut Agents,
            reservations reservations_mut Reservations, peers peers_mut Peers, runs runs_mut Runs,
            tasks tasks_mut Tasks, attempts attempts_mut Attempts, councils councils_mut Councils,
            requests requests_mut Requests, launches launches_mut Launches, merges merges_mut Merges,
            search search_mut Search, queue queue_mut Queue
        );
    };
    ($($get:ident $get_mut:ident $repo:ident),*) => {
        $(
            fn $get(&self) -> &dyn $crate::store::repos::$repo {
                self
            }
            fn $get_mut(&mut self) -> &mut dyn $crate::store::repos::$repo {
                self
            }
        )*
    };
}
