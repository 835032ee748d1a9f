//! [`MemoryInbox`]: a bounded in-process inbox. A lock-free bounded queue
//! (`crossbeam_queue::ArrayQueue`), a closed flag, and two `Notify`s that are only touched
//! when someone waits: one wakes receivers when a message arrives (or the inbox closes),
//! the other wakes a producer waiting for room (only [`crate::DaemonInbox`]'s feed waits;
//! `send` never does).
//!
//! `recv` is cancel-safe: a message is only taken out of the queue by the poll that
//! returns it, and a wake-up given to a receiver that is dropped passes to the next one.
//! A waiter first counts itself, then registers, then looks again; a sender pushes, then
//! reads the count (both sequentially consistent), so either the waiter sees the message
//! or the sender sees the waiter.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};

use crossbeam_queue::ArrayQueue;
use tokio::sync::Notify;

use crate::{Closed, Inbox, Message, Recv, SendError};

/// Capacity of [`MemoryInbox::new`].
pub const DEFAULT_CAPACITY: usize = 256;

/// A bounded inbox for agents inside one process. Clones share the same inbox.
///
/// ```
/// use coord_inbox::{Inbox, MemoryInbox, Message, SendError};
/// use serde_json::json;
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let inbox = MemoryInbox::with_capacity(1);
/// inbox.send(Message::with_payload("a", "b", "ping", json!({}))).unwrap();
/// let full = inbox.send(Message::with_payload("a", "b", "ping", json!({})));
/// assert!(matches!(full, Err(SendError::Full { capacity: 1, .. })));
/// inbox.close();
/// inbox.close(); // idempotent
/// assert!(inbox.recv().await.is_ok()); // what was in is still received...
/// assert!(inbox.recv().await.is_err()); // ...then Closed
/// # }
/// ```
#[derive(Clone)]
pub struct MemoryInbox {
    shared: Arc<Shared>,
}

struct Shared {
    queue: ArrayQueue<Message>,
    closed: AtomicBool,
    /// Receivers waiting (counted before they look), and the wake-up for them.
    receivers: AtomicUsize,
    arrived: Notify,
    /// Producers waiting for room, and the wake-up for them.
    producers: AtomicUsize,
    room: Notify,
}

/// Counts a waiter for as long as it waits, also when its future is dropped.
struct Waiting<'a>(&'a AtomicUsize);

impl<'a> Waiting<'a> {
    fn new(count: &'a AtomicUsize) -> Self {
        count.fetch_add(1, SeqCst);
        Waiting(count)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, SeqCst);
    }
}

impl Default for MemoryInbox {
    fn default() -> Self {
        Self::new()
    }
}

impl MemoryInbox {
    /// An inbox holding at most [`DEFAULT_CAPACITY`] messages.
    pub fn new() -> MemoryInbox {
        Self::with_capacity(DEFAULT_CAPACITY)
    }

    /// An inbox holding at most `capacity` messages (at least one).
    pub fn with_capacity(capacity: usize) -> MemoryInbox {
        MemoryInbox {
            shared: Arc::new(Shared {
                queue: ArrayQueue::new(capacity.max(1)),
                closed: AtomicBool::new(false),
                receivers: AtomicUsize::new(0),
                arrived: Notify::new(),
                producers: AtomicUsize::new(0),
                room: Notify::new(),
            }),
        }
    }

    pub fn capacity(&self) -> usize {
        self.shared.queue.capacity()
    }

    /// Put a message in without waiting (see [`Inbox::send`]).
    pub fn send(&self, msg: Message) -> Result<(), SendError> {
        let s = &self.shared;
        if s.closed.load(SeqCst) {
            return Err(SendError::Closed(Box::new(msg)));
        }
        if let Err(msg) = s.queue.push(msg) {
            return Err(SendError::Full { message: Box::new(msg), capacity: s.queue.capacity() });
        }
        if s.receivers.load(SeqCst) > 0 {
            s.arrived.notify_one();
        }
        Ok(())
    }

    /// Put a message in, waiting for room; `Closed` hands it back.
    pub(crate) async fn send_waiting(&self, mut msg: Message) -> Result<(), SendError> {
        loop {
            match self.send(msg) {
                Err(SendError::Full { message, .. }) => msg = *message,
                other => return other,
            }
            let _waiting = Waiting::new(&self.shared.producers);
            let room = self.shared.room.notified();
            tokio::pin!(room);
            room.as_mut().enable();
            match self.send(msg) {
                Err(SendError::Full { message, .. }) => msg = *message,
                other => return other,
            }
            room.await;
        }
    }

    /// Take the next message, if any; `Closed` once closed and empty.
    pub fn poll(&self) -> Result<Option<Message>, Closed> {
        let s = &self.shared;
        let taken = match s.queue.pop() {
            Some(m) => m,
            // A send that passed its closed check may land after `close`: look once more.
            None if s.closed.load(SeqCst) => return s.queue.pop().map(Some).ok_or(Closed),
            None => return Ok(None),
        };
        if s.producers.load(SeqCst) > 0 {
            s.room.notify_one();
        }
        Ok(Some(taken))
    }

    /// Wait for the next message (see [`Inbox::recv`]).
    pub async fn recv(&self) -> Result<Message, Closed> {
        if let Some(m) = self.poll()? {
            return Ok(m);
        }
        let _waiting = Waiting::new(&self.shared.receivers);
        loop {
            let arrived = self.shared.arrived.notified();
            tokio::pin!(arrived);
            // Counted and registered before looking, so a message sent in between wakes us.
            arrived.as_mut().enable();
            if let Some(m) = self.poll()? {
                return Ok(m);
            }
            arrived.await;
        }
    }

    /// Close: nothing more gets in; every waiting receiver wakes.
    pub fn close(&self) {
        self.shared.closed.store(true, SeqCst);
        self.shared.arrived.notify_waiters();
        self.shared.room.notify_waiters();
    }

    pub fn len(&self) -> usize {
        self.shared.queue.len()
    }

    pub fn is_empty(&self) -> bool {
        self.shared.queue.is_empty()
    }

    pub fn is_closed(&self) -> bool {
        self.shared.closed.load(SeqCst)
    }
}

impl Inbox for MemoryInbox {
    fn send(&self, msg: Message) -> Result<(), SendError> {
        MemoryInbox::send(self, msg)
    }

    fn recv(&self) -> Recv<'_> {
        Box::pin(MemoryInbox::recv(self))
    }

    fn poll(&self) -> Result<Option<Message>, Closed> {
        MemoryInbox::poll(self)
    }

    fn close(&self) {
        MemoryInbox::close(self)
    }

    fn len(&self) -> usize {
        MemoryInbox::len(self)
    }

    fn is_closed(&self) -> bool {
        MemoryInbox::is_closed(self)
    }
}
