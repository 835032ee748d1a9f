//! The subscription loop behind `events.subscribe`, and so behind every wait.
//!
//! Order matters: subscribe to the bus first, then read the cursor and replay what the
//! database already holds after it, then stream live events. An event committed between
//! the two steps is therefore either replayed or received live, never missed; events are
//! deduplicated by id. When the bus overflows (the subscriber fell behind), the loop
//! replays from its cursor instead of dropping anything.

use std::sync::Arc;

use jsonrpsee::core::{SubscriptionError, SubscriptionResult};
use jsonrpsee::types::ErrorObjectOwned;
use jsonrpsee::{PendingSubscriptionSink, SubscriptionSink};
use tokio::sync::broadcast::error::RecvError;

use coord_proto::types::EventFilter;

use crate::events::Resolved;
use crate::store::Store;

/// Events read per replay query.
const REPLAY_PAGE: u32 = 500;

pub async fn run<S: Store>(store: Arc<S>, pending: PendingSubscriptionSink, filter: EventFilter) -> SubscriptionResult {
    let mut rx = store.subscribe();
    let now = store.last_event_id();
    let resolved = match store.resolve_filter(filter, now).await {
        Ok(r) => r,
        Err(e) => {
            pending.reject(ErrorObjectOwned::from(e)).await;
            return Ok(());
        }
    };
    let sink = pending.accept().await?;
    let mut cursor = replay(&*store, &resolved, resolved.after, &sink).await?;
    loop {
        tokio::select! {
            _ = sink.closed() => return Ok(()),
            msg = rx.recv() => match msg {
                Ok(p) => {
                    if p.event.event_id <= cursor {
                        continue;
                    }
                    cursor = p.event.event_id;
                    if resolved.matches(&p.event) {
                        sink.send(p.json()?).await?;
                    }
                }
                Err(RecvError::Lagged(n)) => {
                    tracing::debug!(skipped = n, cursor, "subscriber lagged; replaying from the database");
                    cursor = replay(&*store, &resolved, cursor, &sink).await?;
                }
                Err(RecvError::Closed) => return Ok(()),
            }
        }
    }
}

/// Send every stored event after `cursor` that matches; return the new cursor.
async fn replay<S: Store>(
    store: &S,
    resolved: &Resolved,
    mut cursor: i64,
    sink: &SubscriptionSink,
) -> Result<i64, SubscriptionError> {
    loop {
        let page = Resolved { after: cursor, f: resolved.f.clone() };
        let events = store.events_after(page, REPLAY_PAGE).await?;
        let n = events.len();
        for e in events {
            cursor = e.event_id;
            let json = serde_json::value::to_raw_value(&e)?;
            sink.send(json).await?;
        }
        if n < REPLAY_PAGE as usize {
            return Ok(cursor);
        }
    }
}
