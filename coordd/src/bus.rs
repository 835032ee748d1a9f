//! The in-process event bus: events published after their commit, in commit order, to
//! every subscription of this daemon. It is the same whatever the storage backend; a
//! backend publishes into it once its events are durable.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use coord_proto::types::Event;
use tokio::sync::broadcast;

/// Events the bus holds for a slow subscriber before it lags (it then catches up from
/// storage by its cursor; see `api::events`).
pub const BUS_CAPACITY: usize = 8192;

/// An event as published after its commit. Its JSON is built lazily, once, by the first
/// subscription that sends it (never on the writer thread), and shared by the others.
pub struct Published {
    pub event: Event,
    json: std::sync::OnceLock<Box<serde_json::value::RawValue>>,
}

impl Published {
    pub fn new(event: Event) -> Self {
        Published { event, json: std::sync::OnceLock::new() }
    }

    /// The event as JSON.
    pub fn json(&self) -> serde_json::Result<Box<serde_json::value::RawValue>> {
        if let Some(j) = self.json.get() {
            return Ok(j.clone());
        }
        let j = serde_json::value::to_raw_value(&self.event)?;
        Ok(self.json.get_or_init(|| j).clone())
    }
}

/// The bus: a broadcast of published events and the id of the newest one.
#[derive(Clone)]
pub struct Bus {
    tx: broadcast::Sender<Arc<Published>>,
    last: Arc<AtomicI64>,
}

/// What a subscriber gets from [`BusReceiver::recv`] besides an event.
pub enum Missed {
    /// The subscriber fell behind and this many events were dropped for it.
    Lagged(u64),
    /// The bus is gone (the daemon is stopping).
    Closed,
}

pub struct BusReceiver(broadcast::Receiver<Arc<Published>>);

impl BusReceiver {
    pub async fn recv(&mut self) -> Result<Arc<Published>, Missed> {
        self.0.recv().await.map_err(|e| match e {
            broadcast::error::RecvError::Lagged(n) => Missed::Lagged(n),
            broadcast::error::RecvError::Closed => Missed::Closed,
        })
    }
}

impl Bus {
    /// A bus whose newest event so far is `last_event_id`.
    pub fn new(last_event_id: i64) -> Bus {
        let (tx, _) = broadcast::channel(BUS_CAPACITY);
        Bus { tx, last: Arc::new(AtomicI64::new(last_event_id)) }
    }

    /// Events published from now on.
    pub fn subscribe(&self) -> BusReceiver {
        BusReceiver(self.tx.subscribe())
    }

    /// Id of the newest committed and published event.
    pub fn last_event_id(&self) -> i64 {
        self.last.load(Ordering::SeqCst)
    }

    /// Publish a committed batch, in commit order.
    pub fn publish(&self, events: Vec<Event>) {
        let Some(last) = events.last().map(|e| e.event_id) else { return };
        self.last.fetch_max(last, Ordering::SeqCst);
        if self.tx.receiver_count() == 0 {
            return;
        }
        for event in events {
            // A receiver may have gone meanwhile: nobody is waiting, which is fine.
            let _ = self.tx.send(Arc::new(Published::new(event)));
        }
    }

    /// Subscriptions currently listening (for tests and status).
    pub fn receivers(&self) -> usize {
        self.tx.receiver_count()
    }
}
