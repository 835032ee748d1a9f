//! [`DaemonInbox`]: an agent's typed mailbox over coordd.
//!
//! Two background tasks serve it, each with its own connection:
//!
//! * the **feed** keeps one server-side subscription to the typed messages addressed to the
//!   agent (`events.subscribe` with `to` and `message_types: ["*"]`) after a cursor, and
//!   moves each into a local [`MemoryInbox`] (waiting for room there: a slow reader slows
//!   only its own feed). The cursor is the last event handed over. When the connection
//!   breaks (the daemon restarted), it reconnects with `Client::connect` (starting the
//!   daemon if allowed) and subscribes again after that cursor: the daemon replays what it
//!   stored meanwhile, so nothing is lost and nothing comes twice.
//! * the **outbox** writes what [`Inbox::send`] accepted (a bounded queue, so `send` never
//!   waits) with `control.send`, after the feed has its first cursor (so a message sent to
//!   oneself is never missed). Each message carries its own id: a write retried after a
//!   broken connection is recognized by the daemon and not stored twice.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use coord_client::{Backoff, Client, ClientError, ConnectOptions};
use coord_proto::api::ControlApiClient;
use coord_proto::types::{ANY_TYPE, ControlSendParams, EventFilter};
use tokio::sync::{Notify, mpsc, watch};

use crate::memory::{DEFAULT_CAPACITY, MemoryInbox};
use crate::{Closed, Inbox, Message, Recv, SendError};

/// Where a new [`DaemonInbox`] starts reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    /// Messages stored from now on.
    Now,
    /// Messages recorded after this event id (`After(0)`: every typed message ever sent
    /// to the agent); pass [`DaemonInbox::cursor`] to resume where an earlier one stopped.
    After(i64),
}

/// How to open a [`DaemonInbox`].
#[derive(Debug, Clone)]
pub struct DaemonInboxOptions {
    /// Which daemon (and whether to start one).
    pub connect: ConnectOptions,
    /// Whose mailbox this is.
    pub agent: String,
    /// Messages buffered for `recv`, and messages `send` may queue for writing.
    pub capacity: usize,
    pub start: Start,
}

impl DaemonInboxOptions {
    pub fn new(connect: ConnectOptions, agent: impl Into<String>) -> Self {
        DaemonInboxOptions { connect, agent: agent.into(), capacity: DEFAULT_CAPACITY, start: Start::Now }
    }
}

/// A sent message the daemon refused (a bad payload, an unknown request, ...).
#[derive(Debug, thiserror::Error)]
#[error("the daemon refused message {}: {error}", message.id)]
pub struct DeliveryError {
    pub message: Box<Message>,
    pub error: ClientError,
}

/// Longest pause between two reconnection attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(1);

/// An agent's typed mailbox over coordd: durable, shared across processes, and resumed
/// across daemon restarts. Dropping it (or [`Inbox::close`]) stops its feed.
///
/// ```no_run
/// use coord_inbox::{ConnectOptions, DaemonInbox, DaemonInboxOptions, Inbox, Message};
/// use coord_proto::types::TaskAssignmentPayload;
///
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let opts = DaemonInboxOptions::new(ConnectOptions::for_cwd(None), "backend-1");
/// let inbox = DaemonInbox::open(opts).await?;
/// let task = TaskAssignmentPayload { task_id: "T1".into(), subject: "Add a cache".into(), ..Default::default() };
/// inbox.send(Message::new("lead", "backend-1", &task))?;
/// inbox.flush().await?; // durable in the daemon now
/// let msg = inbox.recv().await?;
/// println!("{} from {}: {}", msg.msg_type, msg.from, msg.payload);
/// # Ok(()) }
/// ```
pub struct DaemonInbox {
    agent: String,
    local: MemoryInbox,
    outbox: mpsc::Sender<Message>,
    shared: Arc<Shared>,
}

struct Shared {
    cursor: AtomicI64,
    /// The feed has subscribed at least once (its cursor is set).
    ready: watch::Sender<bool>,
    stop: watch::Sender<bool>,
    /// Accepted by `send` and not written yet.
    pending: AtomicUsize,
    written: Notify,
    failures: Mutex<Vec<DeliveryError>>,
    connected: AtomicBool,
}

impl DaemonInbox {
    /// Start the inbox's tasks on the current tokio runtime and return at once. (Needs a
    /// runtime; a [`crate::Router`] factory can call it.)
    pub fn spawn(opts: DaemonInboxOptions) -> DaemonInbox {
        let capacity = opts.capacity.max(1);
        let local = MemoryInbox::with_capacity(capacity);
        let (outbox, queued) = mpsc::channel(capacity);
        let cursor = match opts.start {
            Start::Now => -1,
            Start::After(n) => n.max(0),
        };
        let shared = Arc::new(Shared {
            cursor: AtomicI64::new(cursor),
            ready: watch::channel(false).0,
            stop: watch::channel(false).0,
            pending: AtomicUsize::new(0),
            written: Notify::new(),
            failures: Mutex::new(Vec::new()),
            connected: AtomicBool::new(false),
        });
        tokio::spawn(feed(opts.clone(), local.clone(), shared.clone()));
        tokio::spawn(write_out(opts.connect.clone(), opts.agent.clone(), queued, shared.clone()));
        DaemonInbox { agent: opts.agent, local, outbox, shared }
    }

    /// [`DaemonInbox::spawn`], then wait until the feed has subscribed once, so that
    /// anything sent to the agent from now on is received. The first connection's error
    /// is returned if it fails.
    pub async fn open(opts: DaemonInboxOptions) -> Result<DaemonInbox, ClientError> {
        // Checked once up front, so a wrong path or a refused autostart is reported.
        drop(Client::connect(opts.connect.clone()).await?);
        let inbox = DaemonInbox::spawn(opts);
        let mut ready = inbox.shared.ready.subscribe();
        let _ = ready.wait_for(|r| *r).await;
        Ok(inbox)
    }

    pub fn agent(&self) -> &str {
        &self.agent
    }

    /// How far the feed has read (the last event handed to the local buffer, or -1 before
    /// the first subscription). To resume exactly after what you handled, keep the
    /// `event_id` of the last message you processed and pass it as [`Start::After`].
    pub fn cursor(&self) -> i64 {
        self.shared.cursor.load(Ordering::SeqCst)
    }

    /// Whether the feed is connected right now.
    pub fn is_connected(&self) -> bool {
        self.shared.connected.load(Ordering::SeqCst)
    }

    /// Wait until every message `send` accepted so far is written to the daemon; returns
    /// the first one the daemon refused since the last flush, if any.
    pub async fn flush(&self) -> Result<(), DeliveryError> {
        loop {
            let written = self.shared.written.notified();
            tokio::pin!(written);
            written.as_mut().enable();
            if self.shared.pending.load(Ordering::SeqCst) == 0 {
                break;
            }
            written.await;
        }
        let mut failures = self.shared.failures.lock().unwrap_or_else(|p| p.into_inner());
        match failures.drain(..).next() {
            Some(f) => Err(f),
            None => Ok(()),
        }
    }
}

impl Drop for DaemonInbox {
    fn drop(&mut self) {
        self.shared.stop.send_replace(true);
    }
}

impl Inbox for DaemonInbox {
    /// Queue the message for writing to this inbox's agent (its `to` becomes the agent; an
    /// empty `from` becomes the agent too). `Full` when `capacity` messages wait to be
    /// written.
    fn send(&self, mut msg: Message) -> Result<(), SendError> {
        if self.local.is_closed() {
            return Err(SendError::Closed(Box::new(msg)));
        }
        msg.to = self.agent.clone();
        if msg.from.is_empty() {
            msg.from = self.agent.clone();
        }
        self.shared.pending.fetch_add(1, Ordering::SeqCst);
        match self.outbox.try_send(msg) {
            Ok(()) => Ok(()),
            Err(e) => {
                self.shared.pending.fetch_sub(1, Ordering::SeqCst);
                Err(match e {
                    mpsc::error::TrySendError::Full(m) => {
                        SendError::Full { message: Box::new(m), capacity: self.outbox.max_capacity() }
                    }
                    mpsc::error::TrySendError::Closed(m) => SendError::Closed(Box::new(m)),
                })
            }
        }
    }

    fn recv(&self) -> Recv<'_> {
        Box::pin(self.local.recv())
    }

    fn poll(&self) -> Result<Option<Message>, Closed> {
        self.local.poll()
    }

    /// Stop receiving (buffered messages stay receivable) and stop the feed. Messages
    /// already accepted by `send` are still written.
    fn close(&self) {
        self.local.close();
        self.shared.stop.send_replace(true);
    }

    fn len(&self) -> usize {
        self.local.len()
    }

    fn is_closed(&self) -> bool {
        self.local.is_closed()
    }
}

/// The backoff of the feed's and the outbox's retries.
fn backoff() -> Backoff {
    Backoff::new(Duration::from_millis(20), MAX_BACKOFF)
}

/// Sleep the backoff's next pause; false if stopped meanwhile.
async fn pause(backoff: &mut Backoff, stop: &mut watch::Receiver<bool>) -> bool {
    let wait = backoff.next_delay();
    tokio::select! {
        _ = tokio::time::sleep(wait) => true,
        _ = stop.wait_for(|s| *s) => false,
    }
}

/// The feed: subscribe after the cursor, hand each typed message over, resubscribe after a
/// break.
async fn feed(opts: DaemonInboxOptions, local: MemoryInbox, shared: Arc<Shared>) {
    let mut stop = shared.stop.subscribe();
    let mut backoff = backoff();
    while !*stop.borrow() {
        let client = match Client::connect(opts.connect.clone()).await {
            Ok(c) => c,
            Err(_) if pause(&mut backoff, &mut stop).await => continue,
            Err(_) => break,
        };
        let mut cursor = shared.cursor.load(Ordering::SeqCst);
        if cursor < 0 {
            cursor = client.server_info().last_event_id;
            shared.cursor.store(cursor, Ordering::SeqCst);
        }
        let filter = EventFilter {
            after_event: Some(cursor),
            to: Some(opts.agent.clone()),
            message_types: vec![ANY_TYPE.to_string()],
            ..Default::default()
        };
        let mut sub = match client.subscribe(filter).await {
            Ok(s) => s,
            Err(_) if pause(&mut backoff, &mut stop).await => continue,
            Err(_) => break,
        };
        shared.connected.store(true, Ordering::SeqCst);
        shared.ready.send_replace(true);
        backoff.reset();
        loop {
            let next = tokio::select! {
                n = sub.next() => n,
                _ = stop.wait_for(|s| *s) => return,
            };
            let Some(Ok(event)) = next else { break };
            if let Some(msg) = Message::from_event(&event) {
                let handed = tokio::select! {
                    r = local.send_waiting(msg) => r,
                    _ = stop.wait_for(|s| *s) => return,
                };
                if handed.is_err() {
                    return; // closed
                }
            }
            shared.cursor.store(event.event_id, Ordering::SeqCst);
        }
        shared.connected.store(false, Ordering::SeqCst);
        if !pause(&mut backoff, &mut stop).await {
            break;
        }
    }
}

/// The outbox: write each accepted message once the feed is ready, retrying through
/// reconnects (the message id makes a retry harmless).
async fn write_out(connect: ConnectOptions, agent: String, mut queued: mpsc::Receiver<Message>, shared: Arc<Shared>) {
    let mut ready = shared.ready.subscribe();
    let mut stop = shared.stop.subscribe();
    let mut client: Option<Client> = None;
    while let Some(msg) = queued.recv().await {
        // Until the feed knows where it starts, a message to ourselves could be missed.
        tokio::select! {
            _ = ready.wait_for(|r| *r) => {}
            _ = stop.wait_for(|s| *s) => {}
        }
        let mut backoff = backoff();
        let p = ControlSendParams {
            from: if msg.from.is_empty() { agent.clone() } else { msg.from.clone() },
            msg_type: msg.msg_type.as_str().to_string(),
            to: Some(msg.to.clone()),
            payload: msg.payload.clone(),
            message_id: Some(msg.id.clone()),
            ..Default::default()
        };
        loop {
            if client.is_none() {
                client = Client::connect(connect.clone()).await.ok();
            }
            let outcome = match &client {
                Some(c) => c.control_send(p.clone()).await.map_err(ClientError::from),
                None => Err(ClientError::Transport("not connected".into())),
            };
            match outcome {
                Ok(_) => break,
                Err(e @ ClientError::Rpc { .. }) => {
                    let mut f = shared.failures.lock().unwrap_or_else(|p| p.into_inner());
                    f.push(DeliveryError { message: Box::new(msg), error: e });
                    break;
                }
                Err(_) => {
                    // Not written, or written with the reply lost: the same id makes a
                    // retry return the first write.
                    client = None;
                    backoff.pause().await;
                }
            }
        }
        shared.pending.fetch_sub(1, Ordering::SeqCst);
        shared.written.notify_waiters();
    }
}
