//! [`EventStream`]: an event subscription that survives its connection. When the
//! connection drops, the daemon restarts (or is upgraded), or the daemon ends the
//! subscription for any reason (shutdown, a slow subscriber cut loose past its memory
//! budget, a client-side buffer overflow), the stream reconnects (never starting a daemon:
//! one stopped on purpose stays stopped until someone starts it), with a bounded backoff,
//! and subscribes again after the
//! last event it delivered. The daemon replays stored events after that cursor before it
//! streams new ones, so the caller sees every matching event exactly once, in order.
//!
//! What the daemon sends on a subscription is read as JSON first: an event becomes an
//! [`Event`]; anything else (a final notification that ends the subscription, whatever it
//! carries) is never surfaced as an event, only as the end of that subscription, and the
//! stream resumes from its own cursor.

use std::time::Duration;

use coord_proto::api::{EVENTS_SUBSCRIBE, EVENTS_UNSUBSCRIBE};
use coord_proto::types::{Event, EventFilter};
use jsonrpsee::core::client::{Subscription, SubscriptionClientT};
use jsonrpsee::rpc_params;
use serde_json::Value;
use tokio::time::Instant;

use crate::{Client, ClientError, Reach};

/// First pause before reconnecting; it doubles after every failed attempt.
pub const RECONNECT_FIRST_DELAY: Duration = Duration::from_millis(50);
/// Longest pause between two reconnection attempts.
pub const RECONNECT_MAX_DELAY: Duration = Duration::from_secs(2);
/// How long the stream keeps trying to reach a daemon before it reports the last error.
pub const RECONNECT_GIVE_UP: Duration = Duration::from_secs(300);

/// What a stream tells its owner about its connection (for a line on stderr).
#[derive(Debug, Clone)]
pub enum Notice {
    /// The subscription ended (`reason`); the stream is reconnecting and will resume after
    /// `after_event` (`None`: after the message the filter named, nothing delivered yet).
    Reconnecting { after_event: Option<i64>, reason: String },
    /// Subscribed again; events after `after_event` follow.
    Resumed { after_event: Option<i64> },
}

type NoticeFn = Box<dyn FnMut(&Notice) + Send>;

/// A resumable event subscription (see the module docs). Obtained from
/// [`Client::subscribe`].
pub struct EventStream {
    reach: Reach,
    /// The filter as given, cursors included; a resumed subscription replaces the cursor
    /// with `cursor` once an event was delivered.
    filter: EventFilter,
    /// The id of the last event delivered (or the starting cursor).
    cursor: Option<i64>,
    sub: Option<Subscription<Value>>,
    /// The connection the stream opened itself after losing the first one.
    own: Option<Client>,
    notice: Option<NoticeFn>,
}

impl EventStream {
    pub(crate) async fn open(client: &Client, mut filter: EventFilter) -> Result<EventStream, ClientError> {
        if filter.after_event.is_none() && filter.after_message.is_none() && filter.after_latest_from.is_none() {
            // Start at the newest event now, and remember it: a resumed subscription must
            // start from the same place, not from whatever is newest by then. (A start
            // after a message, or after an agent's latest message in a thread, is the same
            // place each time the daemon resolves it.)
            filter.after_event = Some(client.newest_event().await?);
        }
        let cursor = filter.after_event;
        let sub = subscribe_raw(client, &filter).await?;
        Ok(EventStream { reach: client.reach.clone(), filter, cursor, sub: Some(sub), own: None, notice: None })
    }

    /// Be told when the stream loses its subscription and when it resumes (e.g. to say so
    /// on stderr).
    pub fn on_notice(mut self, f: impl FnMut(&Notice) + Send + 'static) -> Self {
        self.notice = Some(Box::new(f));
        self
    }

    /// The id of the last event delivered, else the cursor the stream started after
    /// (`None` only when it started after a message, or after an agent's latest message,
    /// and delivered nothing yet).
    pub fn cursor(&self) -> Option<i64> {
        self.cursor
    }

    /// The next event within `timeout` (`None`: wait forever); reconnection time counts.
    /// `Ok(None)` means the time ran out.
    pub async fn next_within(&mut self, timeout: Option<Duration>) -> Result<Option<Event>, ClientError> {
        match timeout {
            Some(t) => match tokio::time::timeout(t, self.next_event()).await {
                Ok(r) => r.map(Some),
                Err(_) => Ok(None),
            },
            None => self.next_event().await.map(Some),
        }
    }

    /// The next event, waiting as long as it takes. `Some(Err)` is an error the stream
    /// cannot resume from (the daemon refused the filter, a protocol mismatch, no daemon
    /// reachable for [`RECONNECT_GIVE_UP`]); it never returns `None`.
    pub async fn next(&mut self) -> Option<Result<Event, ClientError>> {
        Some(self.next_event().await)
    }

    async fn next_event(&mut self) -> Result<Event, ClientError> {
        loop {
            let item = match self.sub.as_mut() {
                Some(sub) => sub.next().await,
                None => None,
            };
            let reason = match item {
                Some(Ok(v)) => match classify(v)? {
                    Item::Event(ev) if self.cursor.is_some_and(|c| ev.event_id <= c) => continue,
                    Item::Event(ev) => {
                        self.cursor = Some(ev.event_id);
                        return Ok(*ev);
                    }
                    Item::End(why) => why,
                },
                Some(Err(e)) => format!("unreadable notification: {e}"),
                None => match self.sub.as_ref().and_then(Subscription::close_reason) {
                    Some(jsonrpsee::core::client::SubscriptionCloseReason::Lagged) => {
                        "this client fell behind the event stream".into()
                    }
                    _ => "the daemon ended the subscription or the connection".into(),
                },
            };
            self.sub = None;
            self.resume(reason).await?;
        }
    }

    /// Subscribe again after the cursor, reconnecting as needed.
    async fn resume(&mut self, reason: String) -> Result<(), ClientError> {
        let mut filter = self.filter.clone();
        if let Some(c) = self.cursor {
            filter.after_event = Some(c);
            filter.after_message = None;
            filter.after_latest_from = None;
        }
        self.tell(Notice::Reconnecting { after_event: self.cursor, reason });
        let started = Instant::now();
        let mut backoff = crate::Backoff::new(RECONNECT_FIRST_DELAY, RECONNECT_MAX_DELAY);
        loop {
            // The current connection may still be fine (only the subscription ended).
            if let Some(c) = self.own.as_ref().filter(|c| c.is_connected()) {
                match subscribe_raw(c, &filter).await {
                    Ok(sub) => return self.resumed(sub),
                    Err(e) if !transient(&e) => return Err(e),
                    Err(_) => self.own = None,
                }
            }
            match self.reach.reconnect().await {
                Ok(c) => match subscribe_raw(&c, &filter).await {
                    Ok(sub) => {
                        self.own = Some(c);
                        return self.resumed(sub);
                    }
                    Err(e) if !transient(&e) => return Err(e),
                    Err(e) if started.elapsed() >= RECONNECT_GIVE_UP => return Err(e),
                    Err(_) => {}
                },
                Err(e) if !transient(&e) || started.elapsed() >= RECONNECT_GIVE_UP => return Err(e),
                Err(_) => {}
            }
            backoff.pause().await;
        }
    }

    fn resumed(&mut self, sub: Subscription<Value>) -> Result<(), ClientError> {
        self.sub = Some(sub);
        self.tell(Notice::Resumed { after_event: self.cursor });
        Ok(())
    }

    fn tell(&mut self, n: Notice) {
        if let Some(f) = self.notice.as_mut() {
            f(&n);
        }
    }
}

/// One notification of the subscription.
enum Item {
    Event(Box<Event>),
    /// Not an event: the daemon's word that the subscription ends.
    End(String),
}

/// Tell an event from anything else the daemon may send on the subscription. Something
/// with an `event_id` that does not read as an [`Event`] is an error rather than a reason
/// to resume: resuming would replay the same unreadable event forever.
fn classify(v: Value) -> Result<Item, ClientError> {
    if v.get("event_id").is_none() {
        return Ok(Item::End(format!("the daemon ended the subscription ({v})")));
    }
    match serde_json::from_value::<Event>(v) {
        Ok(ev) => Ok(Item::Event(Box::new(ev))),
        Err(e) => Err(ClientError::Transport(format!(
            "an event this client cannot read ({e}); is the daemon newer than this client?"
        ))),
    }
}

/// Worth trying again: the daemon is away or the connection broke. Not: the daemon
/// answered and refused (a bad filter, a protocol mismatch).
fn transient(e: &ClientError) -> bool {
    matches!(e, ClientError::Connect { .. } | ClientError::DaemonUnavailable { .. } | ClientError::Transport(_))
}

async fn subscribe_raw(c: &Client, filter: &EventFilter) -> Result<Subscription<Value>, ClientError> {
    Ok(SubscriptionClientT::subscribe::<Value, _>(&c.rpc, EVENTS_SUBSCRIBE, rpc_params![filter], EVENTS_UNSUBSCRIBE)
        .await?)
}
