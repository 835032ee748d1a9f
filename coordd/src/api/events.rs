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

use coord_proto::api::EventsApiServer;
use coord_proto::error::SUBSCRIBER_TOO_SLOW;
use coord_proto::types::*;
use jsonrpsee::core::server::Extensions;
use jsonrpsee::core::{RpcResult, SubscriptionError, SubscriptionResult, async_trait};
use jsonrpsee::types::ErrorObjectOwned;
use jsonrpsee::{PendingSubscriptionSink, SubscriptionSink};
use serde_json::value::RawValue;
use std::sync::Arc;

use super::Api;
use crate::bus::{Missed, Published};
use crate::core::Core;
use crate::domain::events;
use crate::outbox::{CONNECTION_BUDGET, Full, Meter, Outbox, SUBSCRIPTION_BUDGET};
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
        let Some(outbox) = ext.get::<Outbox>().cloned() else {
            let e = crate::error::Error::Internal("this connection cannot carry subscriptions".into());
            pending.reject(ErrorObjectOwned::from(e)).await;
            return Ok(());
        };
        let mut rx = self.core.bus.subscribe();
        let now = self.core.bus.last_event_id();
        let q = match self.core.read(move |tx, _| events::resolve(tx, filter, now)).await {
            Ok(q) => q,
            Err(e) => {
                pending.reject(ErrorObjectOwned::from(e)).await;
                return Ok(());
            }
        };
        let sink = pending.accept().await?;
        let sub = Subscriber::new(&sink, outbox)?;
        let mut cursor = replay(&self.core, &q, q.after, &sub).await?;
        loop {
            tokio::select! {
                _ = sink.closed() => return Ok(()),
                msg = rx.recv() => match msg {
                    Ok(p) => {
                        if p.event.event_id <= cursor {
                            continue;
                        }
                        if events::matches(&q, &p.event) {
                            let Some(json) = event_json(&self.core, &p).await? else { continue };
                            match sub.outbox.try_push(sub.notification(&json)?, &sub.meter) {
                                Ok(()) => {}
                                Err(Full::Closed) => return Ok(()),
                                Err(full) => {
                                    sub.cut_loose(cursor, full);
                                    return Ok(());
                                }
                            }
                        }
                        cursor = p.event.event_id;
                    }
                    Err(Missed::Lagged(n)) => {
                        tracing::debug!(skipped = n, cursor, "subscriber lagged; replaying from the store");
                        cursor = replay(&self.core, &q, cursor, &sub).await?;
                    }
                    Err(Missed::Closed) => return Ok(()),
                }
            }
        }
    }
}

/// One subscription's way out: its notification envelope, its meter, the outbox.
struct Subscriber {
    outbox: Outbox,
    meter: Arc<Meter>,
    /// `"method":…,"params":{"subscription":…` of every notification.
    head: String,
}

impl Subscriber {
    fn new(sink: &SubscriptionSink, outbox: Outbox) -> Result<Subscriber, SubscriptionError> {
        let id = serde_json::to_string(&sink.subscription_id())?;
        let head =
            format!(r#"{{"jsonrpc":"2.0","method":{},"params":{{"subscription":{id}"#, json_str(sink.method_name())?);
        Ok(Subscriber { outbox, meter: Arc::default(), head })
    }

    fn notification(&self, event: &RawValue) -> Result<Box<RawValue>, SubscriptionError> {
        Ok(RawValue::from_string(format!(r#"{},"result":{}}}}}"#, self.head, event.get()))?)
    }

    /// End the subscription with an error that says why and where to resume.
    fn cut_loose(&self, cursor: i64, full: Full) {
        let (whose, queued, budget) = match full {
            Full::Connection => ("connection", self.outbox.meter().bytes(), CONNECTION_BUDGET),
            _ => ("subscription", self.meter.bytes(), SUBSCRIPTION_BUDGET),
        };
        tracing::info!(cursor, queued, whose, "cutting a subscriber loose: it does not read its events");
        let error = serde_json::json!({
            "code": SUBSCRIBER_TOO_SLOW,
            "message": format!(
                "subscription ended: its client is not reading its events ({queued} bytes waiting to be written \
                 on this {whose}, budget {budget}); subscribe again with after_event {cursor}"
            ),
            "data": {"code": "subscriber_too_slow", "details": {
                "cursor": cursor, "queued_bytes": queued, "budget": budget, "budget_of": whose,
            }},
        });
        let last = format!(r#"{},"error":{error}}}}}"#, self.head);
        if let Ok(json) = RawValue::from_string(last) {
            let _ = self.outbox.push_final(json, &self.meter);
        }
    }
}

fn json_str(s: &str) -> serde_json::Result<String> {
    serde_json::to_string(s)
}

/// The JSON of a live event, loaded from the store when the bus carried it slim.
async fn event_json(core: &Core, p: &Published) -> Result<Option<Box<RawValue>>, SubscriptionError> {
    if !p.slim {
        return Ok(Some(p.json()?));
    }
    let id = p.event.event_id;
    let page = EventQuery { after: id - 1, filter: EventFilter::default() };
    let found = core.read(move |tx, _| tx.events_page(&page, 1, 1)).await?;
    match found.into_iter().next() {
        Some(e) if e.event_id == id => Ok(Some(serde_json::value::to_raw_value(&e)?)),
        _ => {
            tracing::warn!(event_id = id, "a published event is missing from the store");
            Ok(None)
        }
    }
}

/// Send every stored event after `cursor` that matches, waiting for room as needed;
/// return the new cursor.
async fn replay(core: &Core, q: &EventQuery, mut cursor: i64, sub: &Subscriber) -> Result<i64, SubscriptionError> {
    loop {
        let page = EventQuery { after: cursor, filter: q.filter.clone() };
        let events = core.read(move |tx, _| tx.events_page(&page, REPLAY_PAGE, REPLAY_PAGE_BYTES)).await?;
        if events.is_empty() {
            return Ok(cursor);
        }
        for e in events {
            cursor = e.event_id;
            let json = sub.notification(&serde_json::value::to_raw_value(&e)?)?;
            drop(e);
            sub.outbox.push(json, Some(&sub.meter)).await?;
        }
    }
}
