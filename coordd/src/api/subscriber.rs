//! One event subscription's way out, and the batches it sends.
//!
//! On the socket a notification goes into the connection's [`Outbox`], charged to the
//! subscription's own [`Meter`] until written. Elsewhere (the dashboard's WebSocket, served
//! by jsonrpsee's own server) it goes through the subscription's sink, whose bounded buffer
//! plays the budget's part. Either way a replayed notification waits for room, and a live
//! one that finds none cuts the subscription loose ([`Subscriber::cut_loose`]).
//!
//! A [`Batch`] is what one notification carries: one event (`events.subscribe`), or the
//! events that were ready together (`events.subscribeBatched`, an array). While events
//! flow, a batched subscription sends at most one batch per [`GATHER`] (a frame): a lone
//! event after a quiet spell goes at once, a burst goes as a few large batches.

use coord_proto::error::{INTERNAL_ERROR, SUBSCRIBER_TOO_SLOW};
use jsonrpsee::core::server::TrySendError;
use jsonrpsee::core::{SubscriptionError, SubscriptionResult};
use jsonrpsee::{SubscriptionMessage, SubscriptionSink};
use serde_json::value::RawValue;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

use crate::net::outbox::{CONNECTION_BUDGET, Closed, Full, Meter, Outbox, SUBSCRIPTION_BUDGET};

/// Most events in one batch of `events.subscribeBatched`.
pub const BATCH_EVENTS: usize = 256;
/// Bytes of events after which a batch is sent (a larger event goes alone).
pub const BATCH_BYTES: usize = 256 * 1024;
/// Batches a WebSocket subscription may have waiting in its connection's buffer before a
/// live one cuts it loose: at most about `BATCH_QUEUE × BATCH_BYTES` held for a page that
/// does not read.
const BATCH_QUEUE: usize = 64;

/// While events flow, a batched subscription sends at most one batch per this long (about
/// a frame of the page, which draws at most once per frame anyway).
pub const GATHER: Duration = Duration::from_millis(16);

/// The events of one notification, as JSON, and the cursor before them.
pub struct Batch {
    /// Every event before these was sent (or did not match).
    pub from: i64,
    events: Vec<Arc<Box<RawValue>>>,
    bytes: usize,
}

impl Batch {
    pub fn new(from: i64) -> Batch {
        Batch { from, events: Vec::new(), bytes: 0 }
    }

    pub fn push(&mut self, json: Arc<Box<RawValue>>) {
        self.bytes += json.get().len();
        self.events.push(json);
    }

    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }
}

pub struct Subscriber {
    pub sink: SubscriptionSink,
    socket: Option<SocketWay>,
    /// Events per notification: 1 (`events.subscribe`, the event itself) or up to
    /// [`BATCH_EVENTS`] (`events.subscribeBatched`, an array).
    per_notification: usize,
}

struct SocketWay {
    outbox: Outbox,
    meter: Arc<Meter>,
    /// `"method":…,"params":{"subscription":…` of every notification.
    head: String,
}

impl Subscriber {
    pub fn new(sink: SubscriptionSink, outbox: Option<Outbox>, batched: bool) -> Result<Subscriber, SubscriptionError> {
        let socket = match outbox {
            Some(outbox) => {
                let id = serde_json::to_string(&sink.subscription_id())?;
                let method = serde_json::to_string(sink.method_name())?;
                let head = format!(r#"{{"jsonrpc":"2.0","method":{method},"params":{{"subscription":{id}"#);
                Some(SocketWay { outbox, meter: Arc::default(), head })
            }
            None => None,
        };
        Ok(Subscriber { sink, socket, per_notification: if batched { BATCH_EVENTS } else { 1 } })
    }

    /// Until when a batched subscription waits for more events before sending: a frame
    /// after its last batch, if that is still to come (events are flowing); never for a
    /// plain subscription, nor after a quiet spell (a lone event goes at once).
    pub fn gather_until(&self, last_sent: Option<Instant>) -> Option<Instant> {
        let until = last_sent? + GATHER;
        (self.per_notification > 1 && until > Instant::now()).then_some(until)
    }

    /// Is `batch` as large as one notification takes?
    pub fn full(&self, batch: &Batch) -> bool {
        batch.events.len() >= self.per_notification || batch.bytes >= BATCH_BYTES
    }

    /// A notification's `result`: the event, or the array of the batch's events.
    fn result(&self, batch: &Batch) -> Result<Box<RawValue>, SubscriptionError> {
        if self.per_notification == 1
            && let [one] = batch.events.as_slice()
        {
            return Ok((**one).clone());
        }
        let mut text = String::with_capacity(batch.bytes + batch.events.len() + 2);
        text.push('[');
        for (i, e) in batch.events.iter().enumerate() {
            if i > 0 {
                text.push(',');
            }
            text.push_str(e.get());
        }
        text.push(']');
        Ok(RawValue::from_string(text)?)
    }

    fn on_socket(w: &SocketWay, result: &RawValue) -> Result<Box<RawValue>, SubscriptionError> {
        Ok(RawValue::from_string(format!(r#"{},"result":{}}}}}"#, w.head, result.get()))?)
    }

    fn message(&self, result: &RawValue) -> Result<SubscriptionMessage, SubscriptionError> {
        Ok(SubscriptionMessage::new(self.sink.method_name(), self.sink.subscription_id(), &result)?)
    }

    /// Send a replayed batch, waiting for room (the store holds the rest meanwhile).
    pub async fn replayed(&self, batch: &Batch) -> Result<(), SubscriptionError> {
        let result = self.result(batch)?;
        match &self.socket {
            Some(w) => Ok(w.outbox.push(Self::on_socket(w, &result)?, Some(&w.meter)).await?),
            None => Ok(self.sink.send(self.message(&result)?).await.map_err(|_| Closed)?),
        }
    }

    /// Send a live batch now, or say why it cannot go.
    pub fn live(&mut self, batch: &Batch) -> Result<Result<(), Full>, SubscriptionError> {
        let result = self.result(batch)?;
        match &self.socket {
            Some(w) => Ok(w.outbox.try_push(Self::on_socket(w, &result)?, &w.meter)),
            None => {
                if self.per_notification > 1 && self.queued() >= BATCH_QUEUE {
                    return Ok(Err(Full::Subscription));
                }
                let msg = self.message(&result)?;
                Ok(self.sink.try_send(msg).map_err(|e| match e {
                    TrySendError::Full(_) => Full::Subscription,
                    TrySendError::Closed(_) => Full::Closed,
                }))
            }
        }
    }

    /// Messages waiting in the WebSocket connection's buffer.
    fn queued(&self) -> usize {
        self.sink.max_capacity() - self.sink.capacity()
    }

    /// End the subscription with an error that says why and where to resume.
    pub fn cut_loose(&self, cursor: i64, full: Full) -> SubscriptionResult {
        let (whose, queued, budget) = match (&self.socket, full) {
            (Some(w), Full::Connection) => ("connection", w.outbox.meter().bytes(), CONNECTION_BUDGET),
            (Some(w), _) => ("subscription", w.meter.bytes(), SUBSCRIPTION_BUDGET),
            (None, _) if self.per_notification > 1 => ("subscription", self.queued(), BATCH_QUEUE),
            (None, _) => ("subscription", self.queued(), self.sink.max_capacity()),
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
    pub fn failed(&self, cursor: i64, e: SubscriptionError) -> SubscriptionResult {
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
