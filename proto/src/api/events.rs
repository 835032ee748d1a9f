//! `events.*`: the shared event stream, read once or subscribed to.

use jsonrpsee::core::{RpcResult, SubscriptionResult};
use jsonrpsee::proc_macros::rpc;

use crate::types::*;

#[rpc(server, client)]
pub trait EventsApi {
    /// Read the event stream without waiting.
    #[method(name = "events.list")]
    async fn events_list(&self, params: EventsListParams) -> RpcResult<EventsResult>;

    /// Push every matching event, first those already stored after the cursor, then new
    /// ones as they commit, in event order with no gaps and no duplicates. A subscriber
    /// that does not read its events is cut loose: its last notification carries an error
    /// (`subscriber_too_slow`, -32005) with the cursor to subscribe again after.
    #[subscription(
        name = "events.subscribe" => "events.event",
        unsubscribe = "events.unsubscribe",
        item = Event,
        with_extensions
    )]
    async fn subscribe_events(&self, filter: EventFilter) -> SubscriptionResult;

    /// `events.subscribe` with the events in batches: each notification carries an array
    /// of the matching events that were ready together (at least one, in event order), so
    /// a burst costs a client a few messages instead of one per event. What a page uses.
    #[subscription(
        name = "events.subscribeBatched" => "events.batch",
        unsubscribe = "events.unsubscribeBatched",
        item = Vec<Event>,
        with_extensions
    )]
    async fn subscribe_event_batches(&self, filter: EventFilter) -> SubscriptionResult;
}
