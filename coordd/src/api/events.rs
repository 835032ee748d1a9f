//! `events.list` and `events.subscribe`, the subscription behind every wait.
//!
//! Order matters: subscribe to the bus first, then resolve the cursor and replay what the
//! store already holds after it, then stream live events. An event committed between the
//! two steps is therefore either replayed or received live, never missed; events are
//! deduplicated by id. When the bus overflows (the subscriber fell behind), the loop
//! replays from its cursor instead of dropping anything.
//!
//! Notifications go into the connection's [`Outbox`], charged to the subscription's own
//! [`Meter`] until written. Replayed events wait for room (the store holds them meanwhile);
//! a live event that finds the subscription (or its connection) at its budget cuts the
//! subscription loose instead: its last notification is an error carrying the cursor to
//! subscribe again after (every matching event up to it was queued before). A slim event
//! of the bus (see [`crate::bus`]) is loaded from the store before it is sent.
//!
//! A connection without an outbox (the dashboard's WebSocket, served by jsonrpsee's own
//! server) sends through the subscription's sink instead: replays wait for room in its
//! bounded buffer, and a live event that finds it full cuts the subscription loose the same
//! way, with the same last notification.

use coord_proto::api::EventsApiServer;
use coord_proto::error::{INTERNAL_ERROR, SUBSCRIBER_TOO_SLOW};
use coord_proto::types::*;
use jsonrpsee::core::server::Extensions;
use jsonrpsee::core::server::TrySendError;
use jsonrpsee::core::{RpcResult, SubscriptionError, SubscriptionResult, async_trait};
use jsonrpsee::types::ErrorObjectOwned;
use jsonrpsee::{PendingSubscriptionSink, SubscriptionMessage, SubscriptionSink};
use serde_json::value::RawValue;
use std::sync::Arc;

use super::Api;
use crate::bus::{Missed, Published};
use crate::core::Core;
use crate::domain::events;
use crate::net::outbox::{CONNECTION_BUDGET, Closed, Full, Meter, Outbox, SUBSCRIPTION_BUDGET};
use crate::store::repos::EventQuery;

/// Events read per replay query.
const REPLAY_PAGE: u32 = 500;
/// Bytes of events read per replay query (at least one event).
const REPLAY_PAGE_BYTES: usize = 4 * 1024 * 1024;

#[async_trait]
impl EventsApiServer for Api {
    async fn events_list(&self, p: EventsListParams) -> RpcResult<EventsResult> {
        Ok(self.core.read(move |tx, _| events::list(tx, p)).await?)
    }

    async fn subscribe_events(
        &self,
        pending: PendingSubscriptionSink,
        ext: &Extensions,
        filter: EventFilter,
    ) -> SubscriptionResult {
        let mut rx = self.core.bus.subscribe();
        let now = self.core.bus.last_event_id();
        let q = match self.core.read(move |tx, _| events::resolve_wait(tx, filter, now)).await {
            Ok(q) => q,
            Err(e) => {
                pending.reject(ErrorObjectOwned::from(e)).await;
                return Ok(());
            }
        };
        let sink = pending.accept().await?;
        let _open = crate::net::activity::subscription();
        let mut sub = Subscriber::new(sink, ext.get::<Outbox>().cloned())?;
        let mut cursor = match replay(&self.core, &q, q.after, &sub).await {
            Ok(cursor) => cursor,
            Err(e) => return sub.failed(q.after, e),
        };
        loop {
            tokio::select! {
                _ = sub.sink.closed() => return Ok(()),
                msg = rx.recv() => match msg {
                    Ok(p) => {
                        if p.event.event_id <= cursor {
                            continue;
                        }
                        if events::matches(&q, &p.event) {
                            let json = match event_json(&self.core, &p).await {
                                Ok(Some(json)) => json,
                                Ok(None) => continue,
                                Err(e) => return sub.failed(cursor, e),
                            };
                            match sub.live(&json)? {
                                Ok(()) => {}
                                Err(Full::Closed) => return Ok(()),
                                Err(full) => return sub.cut_loose(cursor, full),
                            }
                        }
                        cursor = p.event.event_id;
                    }
                    Err(Missed::Lagged(n)) => {
                        tracing::debug!(skipped = n, cursor, "subscriber lagged; replaying from the store");
                        cursor = match replay(&self.core, &q, cursor, &sub).await {
                            Ok(c) => c,
                            Err(e) => return sub.failed(cursor, e),
                        };
                    }
                    Err(Missed::Closed) => return Ok(()),
                }
            }
        }
    }
}

/// One subscription's way out. On the socket: the connection's outbox, with the
/// subscription's own meter and its notification envelope. Elsewhere (the dashboard's
/// WebSocket, served by jsonrpsee's own server) the sink itself, whose bounded buffer plays
/// the budget's part.
struct Subscriber {
    sink: SubscriptionSink,
    socket: Option<SocketWay>,
}

struct SocketWay {
    outbox: Outbox,
    meter: Arc<Meter>,
    /// `"method":…,"params":{"subscription":…` of every notification.
    head: String,
}

impl Subscriber {
    fn new(sink: SubscriptionSink, outbox: Option<Outbox>) -> Result<Subscriber, SubscriptionError> {
        let socket = match outbox {
            Some(outbox) => {
                let id = serde_json::to_string(&sink.subscription_id())?;
                let method = json_str(sink.method_name())?;
                let head = format!(r#"{{"jsonrpc":"2.0","method":{method},"params":{{"subscription":{id}"#);
                Some(SocketWay { outbox, meter: Arc::default(), head })
            }
            None => None,
        };
        Ok(Subscriber { sink, socket })
    }

    fn message(&self, event: &RawValue) -> Result<SubscriptionMessage, SubscriptionError> {
        Ok(SubscriptionMessage::new(self.sink.method_name(), self.sink.subscription_id(), &event)?)
    }

    /// Send a replayed event, waiting for room (the store holds the rest meanwhile).
    async fn replayed(&self, event: &RawValue) -> Result<(), SubscriptionError> {
        match &self.socket {
            Some(w) => {
                let json = RawValue::from_string(format!(r#"{},"result":{}}}}}"#, w.head, event.get()))?;
                Ok(w.outbox.push(json, Some(&w.meter)).await?)
            }
            None => Ok(self.sink.send(self.message(event)?).await.map_err(|_| Closed)?),
        }
    }

    /// Send a live event now, or say why it cannot go.
    fn live(&mut self, event: &RawValue) -> Result<Result<(), Full>, SubscriptionError> {
        match &self.socket {
            Some(w) => {
                let json = RawValue::from_string(format!(r#"{},"result":{}}}}}"#, w.head, event.get()))?;
                Ok(w.outbox.try_push(json, &w.meter))
            }
            None => {
                let msg = self.message(event)?;
                Ok(self.sink.try_send(msg).map_err(|e| match e {
                    TrySendError::Full(_) => Full::Subscription,
                    TrySendError::Closed(_) => Full::Closed,
                }))
            }
        }
    }

    /// End the subscription with an error that says why and where to resume.
    fn cut_loose(&self, cursor: i64, full: Full) -> SubscriptionResult {
        let (whose, queued, budget) = match (&self.socket, full) {
            (Some(w), Full::Connection) => ("connection", w.outbox.meter().bytes(), CONNECTION_BUDGET),
            (Some(w), _) => ("subscription", w.meter.bytes(), SUBSCRIPTION_BUDGET),
            (None, _) => ("subscription", self.sink.max_capacity() - self.sink.capacity(), self.sink.max_capacity()),
        };
        tracing::info!(cursor, queued, whose, "cutting a subscriber loose: it does not read its events");
        let unit = if self.socket.is_some() { "bytes" } else { "messages" };
        let error = serde_json::json!({
            "code": SUBSCRIBER_TOO_SLOW,
            "message": format!(
                "subscription ended: its client is not reading its events ({queued} {unit} waiting to be written \
                 on this {whose}, budget {budget}); subscribe again with after_event {cursor}"
            ),
            "data": {"code": "subscriber_too_slow", "details": {
                "cursor": cursor, "queued_bytes": queued, "budget": budget, "budget_of": whose,
            }},
        });
        self.end(error)
    }

    /// End the subscription after an internal failure (the store could not be read), in
    /// the same shape as [`Subscriber::cut_loose`]: every event up to `cursor` was sent.
    fn failed(&self, cursor: i64, e: SubscriptionError) -> SubscriptionResult {
        let why = match serde_json::to_value(&e)? {
            serde_json::Value::String(s) => s,
            other => other.to_string(),
        };
        tracing::warn!(cursor, error = %why, "ending a subscription: it could not go on");
        self.end(serde_json::json!({
            "code": INTERNAL_ERROR,
            "message": format!("subscription ended: {why}; subscribe again with after_event {cursor}"),
            "data": {"code": "internal_error", "details": {"cursor": cursor}},
        }))
    }

    /// Send `error` as the subscription's last notification (`params.error`), and end it.
    fn end(&self, error: serde_json::Value) -> SubscriptionResult {
        match &self.socket {
            Some(w) => {
                let last = format!(r#"{},"error":{error}}}}}"#, w.head);
                if let Ok(json) = RawValue::from_string(last) {
                    let _ = w.outbox.push_final(json, &w.meter);
                }
                Ok(())
            }
            // jsonrpsee sends this as the subscription's last notification, in the same shape.
            None => Err(SubscriptionError::from_json(serde_json::value::to_raw_value(&error)?)),
        }
    }
}

fn json_str(s: &str) -> serde_json::Result<String> {
    serde_json::to_string(s)
}

/// The JSON of a live event, loaded from the store when the bus carried it slim (once
/// for all the subscriptions sending it at the same time).
async fn event_json(core: &Core, p: &Published) -> Result<Option<Arc<Box<RawValue>>>, SubscriptionError> {
    if !p.slim {
        return Ok(Some(Arc::new(p.json()?)));
    }
    let id = p.event.event_id;
    p.loaded(|| async move {
        let page = EventQuery { after: id - 1, filter: EventFilter::default() };
        let found = core.read(move |tx, _| events::page(tx, &page, 1, 1)).await?;
        match found.into_iter().next() {
            Some(mut e) if e.event_id == id => {
                // The store keeps no note of the copies; the slim event still carries it.
                e.mail = p.event.mail.clone();
                Ok(Some(serde_json::value::to_raw_value(&e)?))
            }
            _ => {
                tracing::warn!(event_id = id, "a published event is missing from the store");
                Ok::<_, SubscriptionError>(None)
            }
        }
    })
    .await
}

/// Send every stored event after `cursor` that matches, waiting for room as needed;
/// return the new cursor.
async fn replay(core: &Core, q: &EventQuery, mut cursor: i64, sub: &Subscriber) -> Result<i64, SubscriptionError> {
    loop {
        let page = EventQuery { after: cursor, filter: q.filter.clone() };
        let events = core.read(move |tx, _| events::page(tx, &page, REPLAY_PAGE, REPLAY_PAGE_BYTES)).await?;
        if events.is_empty() {
            return Ok(cursor);
        }
        for e in events {
            cursor = e.event_id;
            let json = serde_json::value::to_raw_value(&e)?;
            drop(e);
            sub.replayed(&json).await?;
        }
    }
}
