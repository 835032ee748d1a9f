//! The in-process event bus: events published after their commit, in commit order, to
//! every subscription of this daemon. It is the same whatever the storage backend; a
//! backend publishes into it once its events are durable.
//!
//! The bus is bounded by bytes as well as by count. An event heavier than
//! [`INLINE_EVENT_BYTES`] (a large body, payload or artifact list), or any event while the
//! bus already holds [`BUS_BUDGET`] bytes, travels *slim*: without its summary, payloads,
//! body and artifacts, which a subscription that wants to send it loads from the store by
//! id (see `api::events`). What filters look at (ids, types, statuses, agents, the
//! message's kind) is always kept. So the bus holds at most [`BUS_BUDGET`] bytes plus
//! [`BUS_CAPACITY`] slim events, however large the events are and however slow its
//! subscribers.
//!
//! An event may also be published *partial*: its row alone, without its message and copies.
//! A backend that reads back what other daemons committed (PostgreSQL's follower) reads
//! them in full only while a client's subscription wants them ([`Bus::subscribe_complete`]);
//! the daemon's own services look at event rows only. Such a read is made under
//! [`Bus::partial_read`], and a subscription that wants events complete waits for every
//! partial read under way before it subscribes: it never receives a partial event (what
//! such a read published before it subscribed, it reads from the store after its cursor).

use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock, RwLockReadGuard, TryLockError};

use coord_proto::types::Event;
use serde_json::Value;
use tokio::sync::broadcast;

use crate::weight::weight;

/// Events the bus holds for a slow subscriber before it lags (it then catches up from
/// storage by its cursor; see `api::events`).
pub const BUS_CAPACITY: usize = 8192;
/// Events heavier than this (estimated JSON bytes) are published slim.
pub const INLINE_EVENT_BYTES: usize = 4096;
/// Bytes of full events the bus may hold; past it every event is published slim.
pub const BUS_BUDGET: usize = 16 * 1024 * 1024;

/// An event as published after its commit. Its JSON is built lazily, once, by the first
/// subscription that sends it (never on the writer thread), and shared by the others.
pub struct Published {
    pub event: Event,
    /// The event lost its heavy fields: load it from the store before sending it.
    pub slim: bool,
    /// The event was read without its message and copies (no subscription wanted them
    /// complete; a subscription that does never receives one).
    pub partial: bool,
    json: std::sync::OnceLock<Box<serde_json::value::RawValue>>,
    /// A slim event loaded from the store, shared by the subscriptions sending it at the
    /// same time and freed when the last of them is done (the bus never holds it).
    loaded: tokio::sync::Mutex<std::sync::Weak<Box<serde_json::value::RawValue>>>,
    /// Bytes charged to the bus while this event is alive.
    weight: usize,
    held: Arc<AtomicUsize>,
}

impl Published {
    /// The event as JSON (of a full event; a slim one must be loaded first).
    pub fn json(&self) -> serde_json::Result<Box<serde_json::value::RawValue>> {
        if let Some(j) = self.json.get() {
            return Ok(j.clone());
        }
        let j = serde_json::value::to_raw_value(&self.event)?;
        Ok(self.json.get_or_init(|| j).clone())
    }

    /// A slim event's JSON, loaded by `load` once for all the subscriptions that send it
    /// at the same time: N subscribers of a 5 MB message read and serialize it once, not N
    /// times at once.
    pub async fn loaded<E, F, Fut>(&self, load: F) -> Result<Option<Arc<Box<serde_json::value::RawValue>>>, E>
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = Result<Option<Box<serde_json::value::RawValue>>, E>>,
    {
        let mut shared = self.loaded.lock().await;
        if let Some(j) = shared.upgrade() {
            return Ok(Some(j));
        }
        let Some(j) = load().await? else { return Ok(None) };
        let j = Arc::new(j);
        *shared = Arc::downgrade(&j);
        Ok(Some(j))
    }
}

impl Drop for Published {
    fn drop(&mut self) {
        self.held.fetch_sub(self.weight, Ordering::AcqRel);
    }
}

/// The bus: a broadcast of published events and the id of the newest one.
#[derive(Clone)]
pub struct Bus {
    tx: broadcast::Sender<Arc<Published>>,
    last: Arc<AtomicI64>,
    /// Estimated bytes of the events alive on the bus.
    held: Arc<AtomicUsize>,
    /// Subscriptions that want every event complete ([`Bus::subscribe_complete`]).
    complete: Arc<AtomicUsize>,
    /// Held (shared) by each partial read while it reads and publishes.
    reading: Arc<RwLock<()>>,
}

/// What a subscriber gets from [`BusReceiver::recv`] besides an event.
pub enum Missed {
    /// The subscriber fell behind and this many events were dropped for it.
    Lagged(u64),
    /// The bus is gone (the daemon is stopping).
    Closed,
}

pub struct BusReceiver {
    rx: broadcast::Receiver<Arc<Published>>,
    _wanting: Option<Wanting>,
}

/// A subscription counted by [`Bus::wants_complete`] while it lives.
struct Wanting(Arc<AtomicUsize>);

impl Drop for Wanting {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl BusReceiver {
    pub async fn recv(&mut self) -> Result<Arc<Published>, Missed> {
        self.rx.recv().await.map_err(|e| match e {
            broadcast::error::RecvError::Lagged(n) => Missed::Lagged(n),
            broadcast::error::RecvError::Closed => Missed::Closed,
        })
    }

    /// The next event if one is ready now (`None`: none is).
    pub fn try_recv(&mut self) -> Option<Result<Arc<Published>, Missed>> {
        match self.rx.try_recv() {
            Ok(p) => Some(Ok(p)),
            Err(broadcast::error::TryRecvError::Empty) => None,
            Err(broadcast::error::TryRecvError::Lagged(n)) => Some(Err(Missed::Lagged(n))),
            Err(broadcast::error::TryRecvError::Closed) => Some(Err(Missed::Closed)),
        }
    }
}

impl Bus {
    /// A bus whose newest event so far is `last_event_id`.
    pub fn new(last_event_id: i64) -> Bus {
        let (tx, _) = broadcast::channel(BUS_CAPACITY);
        Bus {
            tx,
            last: Arc::new(AtomicI64::new(last_event_id)),
            held: Arc::default(),
            complete: Arc::default(),
            reading: Arc::default(),
        }
    }

    /// Events published from now on, for a reader of event rows: its events may be
    /// partial (see the module's doc).
    pub fn subscribe(&self) -> BusReceiver {
        BusReceiver { rx: self.tx.subscribe(), _wanting: None }
    }

    /// Events published from now on, for a subscription that wants them complete (a
    /// client's): it is counted first, so every read that starts from now on is complete;
    /// then it waits for the partial reads already under way to publish what they read, and
    /// only then subscribes. So it never receives a partial event.
    pub async fn subscribe_complete(&self) -> BusReceiver {
        self.complete.fetch_add(1, Ordering::AcqRel);
        let wanting = Wanting(self.complete.clone());
        if matches!(self.reading.try_write(), Err(TryLockError::WouldBlock)) {
            let reading = self.reading.clone();
            let _ = tokio::task::spawn_blocking(move || drop(reading.write())).await;
        }
        BusReceiver { rx: self.tx.subscribe(), _wanting: Some(wanting) }
    }

    /// Whether a subscription wants events complete now.
    pub fn wants_complete(&self) -> bool {
        self.complete.load(Ordering::Acquire) > 0
    }

    /// Permission to read committed events without their messages and copies and publish
    /// them partial ([`Bus::publish_partial`]) while the guard lives; `None` while a
    /// subscription wants events complete (read them in full).
    pub fn partial_read(&self) -> Option<RwLockReadGuard<'_, ()>> {
        let guard = self.reading.read().unwrap_or_else(|e| e.into_inner());
        (!self.wants_complete()).then_some(guard)
    }

    /// Id of the newest committed and published event.
    pub fn last_event_id(&self) -> i64 {
        self.last.load(Ordering::SeqCst)
    }

    /// Estimated bytes the bus holds now.
    pub fn held_bytes(&self) -> usize {
        self.held.load(Ordering::Acquire)
    }

    /// Publish a committed batch, in commit order.
    pub fn publish(&self, events: Vec<Event>) {
        self.publish_as(events, false)
    }

    /// Publish committed events read without their messages and copies, in commit order.
    pub fn publish_partial(&self, events: Vec<Event>) {
        self.publish_as(events, true)
    }

    fn publish_as(&self, events: Vec<Event>, partial: bool) {
        let Some(last) = events.last().map(|e| e.event_id) else { return };
        self.last.fetch_max(last, Ordering::SeqCst);
        if self.tx.receiver_count() == 0 {
            return;
        }
        for mut event in events {
            let mut weight = weight(&event);
            let slim = weight > INLINE_EVENT_BYTES || self.held_bytes() + weight > BUS_BUDGET;
            if slim {
                slim_down(&mut event);
                weight = self::weight(&event);
            }
            self.held.fetch_add(weight, Ordering::AcqRel);
            let published = Published {
                event,
                slim,
                partial,
                json: Default::default(),
                loaded: Default::default(),
                weight,
                held: self.held.clone(),
            };
            // A receiver may have gone meanwhile: nobody is waiting, which is fine.
            let _ = self.tx.send(Arc::new(published));
        }
    }

    /// Subscriptions currently listening (for tests and status).
    pub fn receivers(&self) -> usize {
        self.tx.receiver_count()
    }
}

/// Drop what filters never look at and what can be large.
fn slim_down(e: &mut Event) {
    e.summary = String::new();
    e.payload_json = Value::Object(Default::default());
    if let Some(m) = &mut e.message {
        m.summary = String::new();
        m.body = String::new();
        m.payload_json = Value::Object(Default::default());
        m.artifacts = Vec::new();
    }
}

#[cfg(test)]
mod tests {
    use coord_proto::types::*;

    use crate::weight::EVENT_OVERHEAD;

    use super::*;

    fn event(id: i64, body: usize) -> Event {
        Event {
            event_id: id,
            event_type: EventType::MessageSent,
            source: "inbox".into(),
            run_id: String::new(),
            task_id: String::new(),
            thread_id: "thr_1".into(),
            actor: "a".into(),
            assigned_to: "b".into(),
            created_by: "a".into(),
            thread_status: Some(ThreadStatus::Pending),
            task_status: None,
            message_id: Some("msg_1".into()),
            summary: "s".into(),
            payload_json: serde_json::json!({}),
            created_at: "2026-01-01T00:00:00.000Z".into(),
            message: Some(Message {
                message_id: "msg_1".into(),
                thread_id: "thr_1".into(),
                from_agent: "a".into(),
                to_agent: "b".into(),
                kind: MessageKind::Question,
                summary: "s".into(),
                body: "x".repeat(body),
                payload_json: serde_json::json!({"k": [1, 2, {"deep": "v"}]}),
                created_at: "2026-01-01T00:00:00.000Z".into(),
                event_id: id,
                category: None,
                requires_ack: false,
                msg_type: Some("permission_request".into()),
                artifacts: vec![],
            }),
            message_type: Some("permission_request".into()),
            mail: None,
        }
    }

    #[tokio::test]
    async fn heavy_events_travel_slim_and_keep_what_filters_read() {
        let bus = Bus::new(0);
        let mut rx = bus.subscribe();
        bus.publish(vec![event(1, 10), event(2, 5 * 1024 * 1024)]);
        let small = rx.recv().await.ok().unwrap();
        assert!(!small.slim);
        assert_eq!(small.event.message.as_ref().unwrap().body.len(), 10);
        let big = rx.recv().await.ok().unwrap();
        assert!(big.slim);
        let m = big.event.message.as_ref().unwrap();
        assert_eq!((m.kind, m.body.len(), big.event.thread_id.as_str()), (MessageKind::Question, 0, "thr_1"));
        assert_eq!((m.msg_type.as_deref(), m.to_agent.as_str()), (Some("permission_request"), "b"));
        assert!(bus.held_bytes() < 2 * INLINE_EVENT_BYTES, "{}", bus.held_bytes());
        drop((small, big, rx));
        assert_eq!(bus.held_bytes(), 0, "events leave the bus once every subscriber has them");
    }

    #[tokio::test]
    async fn past_its_budget_the_bus_publishes_everything_slim() {
        let bus = Bus::new(0);
        let _stuck = bus.subscribe();
        // Each under the inline size; together (within the bus's capacity) well over its budget.
        let (n, full) = (BUS_CAPACITY - 1, weight(&event(1, 2900)));
        let mut slim = event(1, 2900);
        slim_down(&mut slim);
        assert!(full < INLINE_EVENT_BYTES);
        let bound = BUS_BUDGET + n * weight(&slim);
        assert!(n * full > bound + BUS_BUDGET / 4);
        bus.publish((1..=n as i64).map(|i| event(i, 2900)).collect());
        assert!(bus.held_bytes() <= bound, "{} > {bound}", bus.held_bytes());
    }

    #[tokio::test]
    async fn try_recv_takes_what_is_ready_and_reports_a_lag() {
        let bus = Bus::new(0);
        let mut rx = bus.subscribe();
        assert!(rx.try_recv().is_none(), "nothing published yet");
        bus.publish(vec![event(1, 1), event(2, 1)]);
        let ids: Vec<i64> = std::iter::from_fn(|| rx.try_recv()).map(|p| p.ok().unwrap().event.event_id).collect();
        assert_eq!(ids, [1, 2]);
        bus.publish((3..=BUS_CAPACITY as i64 + 3).map(|i| event(i, 1)).collect());
        assert!(matches!(rx.try_recv(), Some(Err(Missed::Lagged(1)))));
    }

    #[tokio::test]
    async fn a_complete_subscription_waits_for_the_partial_read_under_way_and_never_gets_its_events() {
        let bus = Bus::new(0);
        // A partial read under way on a thread of its own (as a backend's reader is).
        let (held, release) = (std::sync::mpsc::channel(), std::sync::mpsc::channel::<()>());
        let reader = std::thread::spawn({
            let bus = bus.clone();
            move || {
                let reading = bus.partial_read().expect("no subscription wants events complete yet");
                held.0.send(()).unwrap();
                release.1.recv().unwrap();
                bus.publish_partial(vec![event(1, 1)]);
                drop(reading);
            }
        });
        held.1.recv().unwrap();
        let sub = tokio::spawn({
            let bus = bus.clone();
            async move { bus.subscribe_complete().await }
        });
        while !bus.wants_complete() {
            tokio::task::yield_now().await;
        }
        for _ in 0..100 {
            tokio::task::yield_now().await;
        }
        assert!(!sub.is_finished(), "it waits for the partial read under way");
        release.0.send(()).unwrap();
        let mut rx = sub.await.unwrap();
        reader.join().unwrap();
        assert!(bus.partial_read().is_none(), "a read starting now is complete");
        bus.publish(vec![event(2, 1)]);
        let p = rx.recv().await.ok().unwrap();
        assert_eq!((p.event.event_id, p.partial), (2, false), "the partial read's event is the store's to replay");
        drop(rx);
        assert!(!bus.wants_complete() && bus.partial_read().is_some(), "uncounted when it ends");
    }

    #[test]
    fn the_weight_follows_the_json_size() {
        let e = event(1, 20_000);
        let json = serde_json::to_string(&e).unwrap().len();
        let w = weight(&e);
        assert!(w >= json && w < json + 2 * EVENT_OVERHEAD, "weight {w}, json {json}");
    }
}
