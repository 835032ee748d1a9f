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

impl Paged<ShowParams> for ShowResult {
    fn next(&self, asked: ShowParams) -> Option<ShowParams> {
        let after = self.next_after.filter(|_| self.truncated)?;
        Some(ShowParams { after_event: Some(after), ..asked })
    }
    fn extend(&mut self, later: Self) {
        self.messages.extend(later.messages);
        (self.thread, self.truncated, self.next_after) = (later.thread, later.truncated, later.next_after);
    }
}

impl Paged<MailParams> for MailResult {
    fn next(&self, asked: MailParams) -> Option<MailParams> {
        let before = self.next_after.filter(|_| self.truncated)?;
        let limit = rest(asked.limit, Some(MAIL_LIMIT_DEFAULT), self.mail.len())?;
        Some(MailParams { before_event: Some(before), limit, ..asked })
    }
    fn extend(&mut self, later: Self) {
        self.mail.extend(later.mail);
        (self.truncated, self.next_after) = (later.truncated, later.next_after);
    }
}

impl Paged<TaskListParams> for TasksResult {
    fn next(&self, asked: TaskListParams) -> Option<TaskListParams> {
        let after = self.next_after.clone().filter(|_| self.truncated)?;
        let limit = rest(asked.limit, None, self.tasks.len())?;
        Some(TaskListParams { after: Some(after), limit, ..asked })
    }
    fn extend(&mut self, later: Self) {
        self.tasks.extend(later.tasks);
        (self.truncated, self.next_after) = (later.truncated, later.next_after);
    }
}

impl Paged<TimelineParams> for TimelineView {
    fn next(&self, asked: TimelineParams) -> Option<TimelineParams> {
        let before = self.next_after.filter(|_| self.truncated)?;
        let limit = rest(asked.limit, Some(TIMELINE_LIMIT_DEFAULT), self.items.len())?;
        Some(TimelineParams { before_event: Some(before), limit, ..asked })
    }
    fn extend(&mut self, later: Self) {
        self.items.extend(later.items);
        (self.truncated, self.next_after) = (later.truncated, later.next_after);
    }
}

impl Paged<EventsListParams> for EventsResult {
    fn next(&self, asked: EventsListParams) -> Option<EventsListParams> {
        let after = self.next_after.filter(|_| self.truncated)?;
        let limit = rest(asked.limit, Some(coord_proto::DEFAULT_LIMIT), self.events.len())?;
        let filter = EventFilter { after_event: Some(after), after_message: None, ..asked.filter };
        Some(EventsListParams { filter, limit })
    }
    fn extend(&mut self, later: Self) {
        self.events.extend(later.events);
        (self.truncated, self.next_after) = (later.truncated, later.next_after);
    }
}

/// `Paged` for a list continued with an `after` param naming the last item's id.
macro_rules! paged_after {
    ($result:ty, $params:ty, $items:ident) => {
        impl Paged<$params> for $result {
            fn next(&self, asked: $params) -> Option<$params> {
                let after = self.next_after.clone().filter(|_| self.truncated)?;
                Some(<$params>::from_after(asked, after))
            }
            fn extend(&mut self, later: Self) {
                self.$items.extend(later.$items);
                (self.truncated, self.next_after) = (later.truncated, later.next_after);
            }
        }
    };
}

/// Params that continue after an item's id.
trait FromAfter {
    fn from_after(self, after: String) -> Self;
}

macro_rules! from_after {
    ($($params:ty),*) => {$(
        impl FromAfter for $params {
            fn from_after(self, after: String) -> Self {
                Self { after: Some(after), ..self }
            }
        }
    )*};
}

from_after!(AgentListParams, SessionListParams, AgentsViewParams, RunViewParams);
paged_after!(AgentsResult, AgentListParams, agents);
paged_after!(SessionsResult, SessionListParams, sessions);
paged_after!(AgentsView, AgentsViewParams, agents);
paged_after!(RunGraph, RunViewParams, tasks);

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

impl Paged<RequestsParams> for RequestsResult {
    fn next(&self, asked: RequestsParams) -> Option<RequestsParams> {
        let after = self.next_after.clone().filter(|_| self.truncated)?;
        let limit = rest(asked.limit, Some(coord_proto::DEFAULT_LIMIT), self.requests.len())?;
        Some(RequestsParams { after: Some(after), limit, ..asked })
    }
    fn extend(&mut self, later: Self) {
        self.requests.extend(later.requests);
        (self.truncated, self.next_after) = (later.truncated, later.next_after);
    }
}

impl Paged<ListParams> for ThreadsResult {
    fn next(&self, asked: ListParams) -> Option<ListParams> {
        let after = self.next_after.clone().filter(|_| self.truncated)?;
        let limit = rest(asked.limit, Some(coord_proto::DEFAULT_LIMIT), self.threads.len())?;
        Some(ListParams { after: Some(after), limit, ..asked })
    }
    fn extend(&mut self, later: Self) {
        self.threads.extend(later.threads);
        (self.truncated, self.next_after) = (later.truncated, later.next_after);
    }
}

impl Paged<FetchParams> for ThreadsResult {
    fn next(&self, asked: FetchParams) -> Option<FetchParams> {
        let after = self.next_after.clone().filter(|_| self.truncated)?;
        let limit = rest(asked.limit, Some(coord_proto::DEFAULT_LIMIT), self.threads.len())?;
        Some(FetchParams { after: Some(after), limit, ..asked })
    }
    fn extend(&mut self, later: Self) {
        <Self as Paged<ListParams>>::extend(self, later)
    }
}

impl Paged<ReservationListParams> for ReservationsResult {
    fn next(&self, asked: ReservationListParams) -> Option<ReservationListParams> {
        let after = self.next_after.clone().filter(|_| self.truncated)?;
        let limit = rest(asked.limit, Some(coord_proto::MAX_LIMIT), self.reservations.len())?;
        Some(ReservationListParams { after: Some(after), limit, ..asked })
    }
    fn extend(&mut self, later: Self) {
        self.reservations.extend(later.reservations);
        (self.truncated, self.next_after) = (later.truncated, later.next_after);
    }
}

impl Paged<SearchParams> for SearchResult {
    fn next(&self, asked: SearchParams) -> Option<SearchParams> {
        let offset = self.next_after.filter(|_| self.truncated)?;
        let limit = rest(asked.limit, Some(SEARCH_LIMIT_DEFAULT), self.hits.len())?;
        Some(SearchParams { offset: Some(offset), limit, ..asked })
    }
    fn extend(&mut self, later: Self) {
        self.hits.extend(later.hits);
        (self.truncated, self.next_after) = (later.truncated, later.next_after);
    }
}

from_after!(RunListParams, RunPageParams);
paged_after!(RunsResult, RunListParams, runs);
paged_after!(BlockedResult, RunPageParams, blocked);
paged_after!(CouncilsResult, RunPageParams, councils);
