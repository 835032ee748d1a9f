//! coord-inbox: the embeddable inbox. Every agent owns an [`Inbox`]; others put typed
//! [`Message`]s into it, usually through a [`Router`] (name → inbox).
//!
//! * [`Inbox::send`] never blocks: it returns [`SendError::Full`] (backpressure) or
//!   [`SendError::Closed`] at once, handing the message back.
//! * [`Inbox::recv`] waits for the next message. It is cancel-safe (dropping the future
//!   loses nothing) and returns [`Closed`] once the inbox is closed *and* drained.
//! * [`Inbox::poll`] returns at once, [`Inbox::close`] is idempotent and wakes every waiter,
//!   [`Inbox::len`] serves monitoring.
//!
//! Two kinds share the trait: [`MemoryInbox`] (bounded, 256 by default, no daemon and no
//! I/O, for agents inside one process) and [`DaemonInbox`] (over coordd: durable, across
//! processes, and it survives a daemon restart without losing or repeating a message). A
//! [`Router`]'s factory chooses the kind, so tests can use memory and production the daemon.
//!
//! ```
//! use coord_inbox::{Inbox, MemoryInbox, Message};
//! use coord_proto::types::{IdleNotificationPayload, IdleReason};
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let inbox = MemoryInbox::new();
//! let idle = IdleNotificationPayload {
//!     idle_reason: IdleReason::Available,
//!     summary: Some("tests pass".into()),
//!     completed_task_id: Some("T1".into()),
//!     completed_status: Some("resolved".into()),
//!     failure_reason: None,
//! };
//! inbox.send(Message::new("worker-1", "lead", &idle)).unwrap();
//! let got = inbox.recv().await.unwrap();
//! assert_eq!(got.msg_type.as_str(), "idle_notification");
//! assert_eq!(got.payload_as::<IdleNotificationPayload>().unwrap(), idle);
//! # }
//! ```
//!
//! Typed payloads ([`coord_proto::types`]: `PermissionRequestPayload`, ...) use the seed's
//! JSON field names; any other type passes through untouched ([`Message::with_payload`]),
//! and a payload given as raw JSON text is parsed once, never stored as a string
//! ([`Message::raw`]). Tool subprocesses report progress with [`ProgressReporter`].

mod daemon;
mod memory;
mod message;
mod progress;
mod router;

use std::future::Future;
use std::pin::Pin;

pub use coord_client::{ClientError, ConnectOptions};
pub use coord_proto::types::MessageType;
pub use daemon::{DaemonInbox, DaemonInboxOptions, DeliveryError, Start};
pub use memory::{DEFAULT_CAPACITY, MemoryInbox};
pub use message::{Message, new_message_id};
pub use progress::{PROGRESS_ENV, ProgressReporter};
pub use router::{Factory, Router};

/// Why [`Inbox::send`] did not take a message; the message comes back with the error.
#[derive(Debug, thiserror::Error)]
pub enum SendError {
    /// The inbox holds `capacity` messages already: backpressure, try again later.
    #[error("inbox full ({capacity} messages)")]
    Full { message: Box<Message>, capacity: usize },
    /// The inbox is closed and takes nothing more.
    #[error("inbox closed")]
    Closed(Box<Message>),
}

impl SendError {
    /// The message that was not taken.
    pub fn into_message(self) -> Message {
        match self {
            SendError::Full { message, .. } | SendError::Closed(message) => *message,
        }
    }
}

/// The inbox is closed and has nothing left to receive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("inbox closed")]
pub struct Closed;

/// The future [`Inbox::recv`] returns.
pub type Recv<'a> = Pin<Box<dyn Future<Output = Result<Message, Closed>> + Send + 'a>>;

/// An agent's mailbox.
pub trait Inbox: Send + Sync {
    /// Put a message in, without waiting.
    fn send(&self, msg: Message) -> Result<(), SendError>;
    /// The next message, waiting for one; cancel-safe. `Closed` once closed and drained.
    fn recv(&self) -> Recv<'_>;
    /// The next message if one is there (`Ok(None)` if not); `Closed` once closed and drained.
    fn poll(&self) -> Result<Option<Message>, Closed>;
    /// Take nothing more and wake every waiter; messages already in stay receivable.
    /// Closing twice is fine.
    fn close(&self);
    /// Messages waiting to be received (for monitoring).
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    fn is_closed(&self) -> bool;
}
