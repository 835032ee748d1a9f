//! `events.list` and `events.subscribe`, the subscription behind every wait.
//!
//! Order matters: subscribe to the bus first, then resolve the cursor and replay what the
//! store already holds after it, then stream live events. An event committed between the
//! two steps is therefore either replayed or received live, never missed; events are
//! deduplicated by id. When the bus overflows (the subscriber fell behind), the loop
//! replays from its cursor instead of dropping anything.

use coord_proto::api::EventsApiServer;
use coord_proto::types::*;
use jsonrpsee::core::{RpcResult, SubscriptionError, SubscriptionResult, async_trait};
use jsonrpsee::types::ErrorObjectOwned;
use jsonrpsee::{PendingSubscriptionSink, SubscriptionSink};

use super::Api;
use crate::bus::Missed;
use crate::core::Core;
use crate::domain::events;
use crate::store::repos::EventQuery;

/// Events read per replay query.
const REPLAY_PAGE: u32 = 500;

#[async_trait]
impl EventsApiServer for Api {
    async fn events_list(&self, p: EventsListParams) -> RpcResult<EventsResult> {
        Ok(self.core.read(move |tx, _| events::list(tx, p)).await?)
    }

    async fn subscribe_events(&self, pending: PendingSubscriptionSink, filter: EventFilter) -> SubscriptionResult {
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
        let _open = crate::activity::subscription();
        let mut cursor = replay(&self.core, &q, q.after, &sink).await?;
        loop {
            tokio::select! {
                _ = sink.closed() => return Ok(()),
                msg = rx.recv() => match msg {
                    Ok(p) => {
                        if p.event.event_id <= cursor {
                            continue;
                        }
                        cursor = p.event.event_id;
                        if events::matches(&q, &p.event) {
                            sink.send(p.json()?).await?;
                        }
                    }
                    Err(Missed::Lagged(n)) => {
                        tracing::debug!(skipped = n, cursor, "subscriber lagged; replaying from the store");
                        cursor = replay(&self.core, &q, cursor, &sink).await?;
                    }
                    Err(Missed::Closed) => return Ok(()),
                }
            }
        }
    }
}

/// Send every stored event after `cursor` that matches; return the new cursor.
async fn replay(
    core: &Core,
    q: &EventQuery,
    mut cursor: i64,
    sink: &SubscriptionSink,
) -> Result<i64, SubscriptionError> {
    loop {
        let page = EventQuery { after: cursor, filter: q.filter.clone() };
        let events = core.read(move |tx, _| tx.events_after(&page, REPLAY_PAGE)).await?;
        let n = events.len();
        for e in events {
            cursor = e.event_id;
            sink.send(serde_json::value::to_raw_value(&e)?).await?;
        }
        if n < REPLAY_PAGE as usize {
            return Ok(cursor);
        }
    }
}
