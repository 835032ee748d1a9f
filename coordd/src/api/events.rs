//! `events.list`, and `events.subscribe` (the subscription behind every wait) with its
//! batched twin `events.subscribeBatched` (the dashboard's: arrays of events).
//!
//! Order matters: subscribe to the bus first, then resolve the cursor and replay what the
//! store already holds after it, then stream live events. An event committed between the
//! two steps is therefore either replayed or received live, never missed; events are
//! deduplicated by id. When the bus overflows (the subscriber fell behind), the loop
//! replays from its cursor instead of dropping anything. A replayed message event carries
//! its copies (`mail`) as a live one does, read once per replayed page.
//!
//! Each notification carries a [`Batch`]: one event, or for a batched subscription the
//! matching events that were ready together (a committed group, a replayed page), so a
//! burst costs a page a few WebSocket messages rather than one per event. Replayed batches
//! wait for room (the store holds the rest meanwhile); a live batch that finds the
//! subscription (or its connection) at its budget cuts the subscription loose instead: its
//! last notification is an error carrying the cursor to subscribe again after (every
//! matching event up to it was queued before). See [`super::subscriber`] for the ways out.
//! A slim event of the bus (see [`crate::bus`]) is loaded from the store before it is sent;
//! the subscription wants events complete ([`crate::bus::Bus::subscribe_complete`]), and
//! would read the store from its cursor, as after a lag, if a partial one reached it.

use coord_proto::api::EventsApiServer;
use coord_proto::types::*;
use jsonrpsee::PendingSubscriptionSink;
use jsonrpsee::core::server::Extensions;
use jsonrpsee::core::{RpcResult, SubscriptionError, SubscriptionResult, async_trait};
use jsonrpsee::types::ErrorObjectOwned;
use serde_json::value::RawValue;
use std::sync::Arc;

use super::Api;
use super::subscriber::{Batch, Subscriber};
use crate::bus::{Missed, Published};
use crate::core::Core;
use crate::domain::events;
use crate::net::outbox::{Full, Outbox};
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
        subscribe(&self.core, pending, ext, filter, false).await
    }

    async fn subscribe_event_batches(
        &self,
        pending: PendingSubscriptionSink,
        ext: &Extensions,
        filter: EventFilter,
    ) -> SubscriptionResult {
        subscribe(&self.core, pending, ext, filter, true).await
    }
}

/// What ended a run of live events: nothing (wait for the next), the bus dropping some
/// for this subscriber (read the store from the cursor), or the bus closing.
enum After {
    More,
    Lagged,
    Closed,
}

async fn subscribe(
    core: &Core,
    pending: PendingSubscriptionSink,
    ext: &Extensions,
    filter: EventFilter,
    batched: bool,
) -> SubscriptionResult {
    let mut rx = core.bus.subscribe_complete().await;
    let now = core.bus.last_event_id();
    let q = match core.read(move |tx, _| events::resolve_wait(tx, filter, now)).await {
        Ok(q) => q,
        Err(e) => {
            pending.reject(ErrorObjectOwned::from(e)).await;
            return Ok(());
        }
    };
    let sink = pending.accept().await?;
    let _open = crate::net::activity::subscription();
    let mut sub = Subscriber::new(sink, ext.get::<Outbox>().cloned(), batched)?;
    let mut cursor = match replay(core, &q, q.after, &sub).await {
        Ok(cursor) => cursor,
        Err(e) => return sub.failed(q.after, e),
    };
    let mut last_sent = None;
    loop {
        let mut msg = tokio::select! {
            _ = sub.sink.closed() => return Ok(()),
            msg = rx.recv() => msg,
        };
        // This event and those ready behind it, up to one notification's worth.
        let mut batch = Batch::new(cursor);
        let after = loop {
            match msg {
                Ok(p) if p.event.event_id > cursor && p.partial => {
                    tracing::warn!(
                        event_id = p.event.event_id,
                        cursor,
                        "a partial event reached a subscription; reading the store"
                    );
                    break After::Lagged;
                }
                Ok(p) if p.event.event_id > cursor => {
                    if events::matches(&q, &p.event) {
                        match event_json(core, &p).await {
                            Ok(Some(json)) => batch.push(json),
                            Ok(None) => {}
                            Err(e) => return sub.failed(batch.from, e),
                        }
                    }
                    cursor = p.event.event_id;
                }
                Ok(_) => {}
                Err(Missed::Lagged(n)) => {
                    tracing::debug!(skipped = n, cursor, "subscriber lagged; replaying from the store");
                    break After::Lagged;
                }
                Err(Missed::Closed) => break After::Closed,
            }
            if sub.full(&batch) {
                break After::More;
            }
            match rx.try_recv() {
                Some(next) => msg = next,
                // Events are flowing (the last batch went out less than a frame ago): wait
                // for more until a frame after it, so a burst is one batch per frame.
                None => match sub.gather_until(last_sent) {
                    Some(until) => match tokio::time::timeout_at(until, rx.recv()).await {
                        Ok(next) => msg = next,
                        Err(_) => break After::More,
                    },
                    None => break After::More,
                },
            }
        };
        if !batch.is_empty() {
            match sub.live(&batch)? {
                Ok(()) => last_sent = Some(tokio::time::Instant::now()),
                Err(Full::Closed) => return Ok(()),
                Err(full) => return sub.cut_loose(batch.from, full),
            }
        }
        match after {
            After::More => {}
            After::Lagged => {
                cursor = match replay(core, &q, cursor, &sub).await {
                    Ok(c) => c,
                    Err(e) => return sub.failed(cursor, e),
                };
            }
            After::Closed => return Ok(()),
        }
    }
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

/// Send every stored event after `cursor` that matches, in batches, waiting for room as
/// needed; return the new cursor.
async fn replay(core: &Core, q: &EventQuery, mut cursor: i64, sub: &Subscriber) -> Result<i64, SubscriptionError> {
    loop {
        let page = EventQuery { after: cursor, filter: q.filter.clone() };
        let events = core.read(move |tx, _| events::replay_page(tx, &page, REPLAY_PAGE, REPLAY_PAGE_BYTES)).await?;
        if events.is_empty() {
            return Ok(cursor);
        }
        let mut batch = Batch::new(cursor);
        for e in events {
            cursor = e.event_id;
            batch.push(Arc::new(serde_json::value::to_raw_value(&e)?));
            drop(e);
            if sub.full(&batch) {
                sub.replayed(&batch).await?;
                batch = Batch::new(cursor);
            }
        }
        if !batch.is_empty() {
            sub.replayed(&batch).await?;
        }
    }
}
