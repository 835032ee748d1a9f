//! [`MemoryInbox`]: a bounded in-process inbox. A mutex-guarded queue and two `Notify`s:
//! one wakes receivers when a message arrives (or the inbox closes), the other wakes a
//! producer waiting for room (only [`crate::DaemonInbox`]'s feed waits; `send` never does).
//!
//! `recv` is cancel-safe: a message is only taken out of the queue by the poll that
//! returns it, and a wake-up given to a receiver that is dropped passes to the next one.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

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
    state: Mutex<State>,
    capacity: usize,
    arrived: Notify,
    room: Notify,
}

struct State {
    queue: VecDeque<Message>,
    closed: bool,
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
        let capacity = capacity.max(1);
        MemoryInbox {
            shared: Arc::new(Shared {
                state: Mutex::new(State { queue: VecDeque::with_capacity(capacity.min(1024)), closed: false }),
                capacity,
                arrived: Notify::new(),
                room: Notify::new(),
            }),
        }
    }

    pub fn capacity(&self) -> usize {
        self.shared.capacity
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A panic while holding this lock cannot leave the queue half-changed.
        self.shared.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Put a message in without waiting (see [`Inbox::send`]).
    pub fn send(&self, msg: Message) -> Result<(), SendError> {
        {
            let mut s = self.state();
            if s.closed {
                return Err(SendError::Closed(Box::new(msg)));
            }
            if s.queue.len() >= self.shared.capacity {
                return Err(SendError::Full { message: Box::new(msg), capacity: self.shared.capacity });
            }
            s.queue.push_back(msg);
        }
        self.shared.arrived.notify_one();
        Ok(())
    }

    /// Put a message in, waiting for room; `Closed` hands it back.
    pub(crate) async fn send_waiting(&self, mut msg: Message) -> Result<(), SendError> {
        loop {
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
        let taken = {
            let mut s = self.state();
            match s.queue.pop_front() {
                Some(m) => Some(m),
                None if s.closed => return Err(Closed),
                None => None,
            }
        };
        if taken.is_some() {
            self.shared.room.notify_one();
        }
        Ok(taken)
    }

    /// Wait for the next message (see [`Inbox::recv`]).
    pub async fn recv(&self) -> Result<Message, Closed> {
        if let Some(m) = self.poll()? {
            return Ok(m);
        }
        loop {
            let arrived = self.shared.arrived.notified();
            tokio::pin!(arrived);
            // Registered before looking, so a message sent in between wakes us.
            arrived.as_mut().enable();
            if let Some(m) = self.poll()? {
                return Ok(m);
            }
            arrived.await;
        }
    }

    /// Close: nothing more gets in; every waiting receiver wakes.
    pub fn close(&self) {
        self.state().closed = true;
        self.shared.arrived.notify_waiters();
        self.shared.room.notify_waiters();
    }

    pub fn len(&self) -> usize {
        self.state().queue.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn is_closed(&self) -> bool {
        self.state().closed
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
