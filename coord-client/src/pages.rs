//! Following bounded replies: a list or read method stops early when its reply would pass
//! `coord_proto::MAX_REPLY_BYTES`, sets `truncated` and says where to go on
//! (`next_after`). [`all`] asks again from there until the list is whole (or the caller's
//! own `limit` is reached), so a program sees every item exactly once.
//!
//! ```no_run
//! # async fn demo(client: &coord_client::Client) -> Result<(), coord_client::ClientError> {
//! use coord_proto::api::InboxApiClient;
//! use coord_proto::types::ShowParams;
//!
//! let p = ShowParams { thread_id: "thr_1".into(), ..Default::default() };
//! let shown = coord_client::pages::all(p, |p| client.show(p)).await?;
//! println!("{} messages", shown.messages.len());
//! # Ok(()) }
//! ```

use std::future::Future;

use coord_proto::types::*;
use coord_proto::{DEFAULT_LIMIT, MAX_LIMIT};

use crate::ClientError;

/// A bounded result and the params `P` that asked for it: how to ask for the next page.
pub trait Paged<P>: Sized {
    /// The params for the page after this one, when this one was truncated.
    fn next(&self, asked: P) -> Option<P>;
    /// Append a later page's items to this one.
    fn extend(&mut self, later: Self);
}

/// Call a bounded method until its list is whole: the first page with every later page's
/// items appended, in order.
pub async fn all<P, R, E, F, Fut>(params: P, call: F) -> Result<R, ClientError>
where
    P: Clone,
    R: Paged<P>,
    F: Fn(P) -> Fut,
    Fut: Future<Output = Result<R, E>>,
    ClientError: From<E>,
{
    let mut whole = call(params.clone()).await?;
    let mut next = whole.next(params);
    while let Some(p) = next {
        let page = call(p.clone()).await?;
        next = page.next(p);
        whole.extend(page);
    }
    Ok(whole)
}

/// What is left of a `limit` (the method's `default` when none was given; `None`: no
/// limit) after `got` items; `None` when nothing is left.
fn rest(limit: Option<u32>, default: Option<u32>, got: usize) -> Option<Option<u32>> {
    match limit.or(default) {
        None => Some(None),
        Some(l) => l.checked_sub(got as u32).filter(|r| *r > 0).map(Some),
    }
}

/// `Paged` for a result whose `$items` continue with the param `$cursor` set to its
/// `next_after`; with `limit $default` (the method's default `limit`, `None` for none),
/// each later page asks only for what is left of the caller's `limit`.
macro_rules! paged {
    ($result:ty, $params:ident, $items:ident, $cursor:ident) => {
        impl Paged<$params> for $result {
            fn next(&self, asked: $params) -> Option<$params> {
                let cursor = self.next_after.as_ref().cloned().filter(|_| self.truncated)?;
                Some($params { $cursor: Some(cursor), ..asked })
            }
            fn extend(&mut self, later: Self) {
                self.$items.extend(later.$items);
                (self.truncated, self.next_after) = (later.truncated, later.next_after);
            }
        }
    };
    ($result:ty, $params:ident, $items:ident, $cursor:ident, limit $default:expr) => {
        impl Paged<$params> for $result {
            fn next(&self, asked: $params) -> Option<$params> {
                let cursor = self.next_after.as_ref().cloned().filter(|_| self.truncated)?;
                let limit = rest(asked.limit, $default, self.$items.len())?;
                Some($params { $cursor: Some(cursor), limit, ..asked })
            }
            fn extend(&mut self, later: Self) {
                self.$items.extend(later.$items);
                (self.truncated, self.next_after) = (later.truncated, later.next_after);
            }
        }
    };
}

paged!(ShowResult, ShowParams, messages, after_event);
paged!(AgentsResult, AgentListParams, agents, after);
paged!(SessionsResult, SessionListParams, sessions, after);
paged!(AgentsView, AgentsViewParams, agents, after);
paged!(RunGraph, RunViewParams, tasks, after);
paged!(BlockedResult, RunPageParams, blocked, after);
paged!(CouncilsResult, RunPageParams, councils, after);
paged!(MailResult, MailParams, mail, before_event, limit Some(MAIL_LIMIT_DEFAULT));
paged!(TimelineView, TimelineParams, items, before_event, limit Some(TIMELINE_LIMIT_DEFAULT));
paged!(TasksResult, TaskListParams, tasks, after, limit None);
paged!(RequestsResult, RequestsParams, requests, after, limit Some(DEFAULT_LIMIT));
paged!(ThreadsResult, ListParams, threads, after, limit Some(DEFAULT_LIMIT));
paged!(ThreadsResult, FetchParams, threads, after, limit Some(DEFAULT_LIMIT));
paged!(ReservationsResult, ReservationListParams, reservations, after, limit Some(MAX_LIMIT));
paged!(SearchResult, SearchParams, hits, offset, limit Some(SEARCH_LIMIT_DEFAULT));
paged!(WorktreesResult, WorktreeParams, worktrees, after);
paged!(PeersResult, PeerListParams, peers, after);
paged!(CheckPathsResult, CheckPathsParams, conflicts, offset);
paged!(TaskView, TaskShowParams, attempts, after_attempt);
paged!(Council, CouncilRef, groups, after_group);

impl Paged<RunListParams> for RunsResult {
    fn next(&self, _: RunListParams) -> Option<RunListParams> {
        Some(RunListParams { after: Some(self.next_after.clone().filter(|_| self.truncated)?) })
    }
    fn extend(&mut self, later: Self) {
        self.runs.extend(later.runs);
        (self.truncated, self.next_after) = (later.truncated, later.next_after);
    }
}

/// Events continue with the filter's `after_event` (a cursor the filter's own
/// `after_message` or `after_latest_from` would otherwise override).
impl Paged<EventsListParams> for EventsResult {
    fn next(&self, asked: EventsListParams) -> Option<EventsListParams> {
        let after = self.next_after.filter(|_| self.truncated)?;
        let limit = rest(asked.limit, Some(DEFAULT_LIMIT), self.events.len())?;
        let filter =
            EventFilter { after_event: Some(after), after_message: None, after_latest_from: None, ..asked.filter };
        Some(EventsListParams { filter, limit })
    }
    fn extend(&mut self, later: Self) {
        self.events.extend(later.events);
        (self.truncated, self.next_after) = (later.truncated, later.next_after);
    }
}

/// Complete a `RunView` (`orch.runShow`, `orch.cancel`) whose `tasks` were truncated: the
/// rest come from `orch.taskList` after its `next_after`, through `task_list`.
pub async fn complete_run_view<E, F, Fut>(mut view: RunView, task_list: F) -> Result<RunView, ClientError>
where
    F: Fn(TaskListParams) -> Fut,
    Fut: Future<Output = Result<TasksResult, E>>,
    ClientError: From<E>,
{
    if let Some(after) = view.next_after.take().filter(|_| view.truncated) {
        let p = TaskListParams { run_id: view.run.run_id.clone(), after: Some(after), ..Default::default() };
        view.tasks.extend(all(p, task_list).await?.tasks);
        view.truncated = false;
    }
    Ok(view)
}
