//! Calls whose reply may be large ("heavy" calls), and the room they reserve before their
//! handler runs.
//!
//! A reply is built whole before it can be queued on its connection, so the output budgets
//! of [`crate::net::outbox`] alone do not bound what replies *being built* hold: a client
//! that pipelines 64 pages of 16 MiB and reads none made the daemon build all 64. So a
//! heavy call first takes, in order:
//!
//! 1. its connection's one [`Slot`]: one heavy call (or batch holding one) at a time per
//!    connection;
//! 2. room on its connection: it waits until the connection has less than
//!    [`SHED_FLOOR`](crate::net::shed::SHED_FLOOR) queued, i.e. until its client is keeping
//!    up (a client that reads nothing gets one large reply queued, then no more is built);
//! 3. [`RESERVATION`] bytes of the daemon-wide [`BUILDING_BUDGET`] ([`Builders`]), which
//!    bounds what all connections build at once; given back as soon as the reply is built
//!    and queued, so a client that does not read never holds it.
//!
//! The built reply is then queued whatever the connection's budget (its room was taken
//! before), and counts in the daemon-wide output budget like any output (`shed`). Light
//! calls ([`is_heavy`] false) reserve nothing: their replies are about the size of their
//! own request (an id, a lease, the message the call wrote), which the in-flight request
//! budgets of [`super::limits`] already bound.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::net::outbox::{Closed, Outbox};
use crate::net::shed::SHED_FLOOR;

/// What one heavy call reserves of [`BUILDING_BUDGET`]: the largest reply a list builds
/// (protocol §1.7).
pub const RESERVATION: usize = coord_proto::MAX_REPLY_BYTES;
/// Bytes of replies all connections together may be building at once (four pages).
pub const BUILDING_BUDGET: usize = 4 * RESERVATION;
/// The semaphore counts KiB (its permits are `u32`).
const UNIT: usize = 1024;

/// The methods whose reply is bounded by the call's own request and a few KiB: writes
/// that answer with ids, a lease, or the message they wrote. Every other method (every
/// list and read, and the writes that answer with a page or another writer's item, like
/// `mail.read` or `orch.cancel`) is heavy, and so is any method added later until it is
/// listed here.
const LIGHT: &[&str] = &[
    "agents.authenticate",
    "agents.heartbeat",
    "agents.register",
    "control.send",
    "dashboard.start",
    "dashboard.status",
    "dashboard.stop",
    "inbox.cancel",
    "inbox.claim",
    "inbox.done",
    "inbox.fail",
    "inbox.init",
    "inbox.markRead",
    "inbox.renew",
    "inbox.reply",
    "inbox.send",
    "inbox.update",
    "launch.budgetSet",
    "launch.sessionExit",
    "launch.sessionStart",
    "launch.usage",
    "mail.withdraw",
    "orch.answer",
    "orch.taskAdd",
    "orch.taskRemove",
    "policy.check",
    "progress.report",
    "reservations.release",
    "reservations.reserve",
    "system.hello",
    "system.shutdown",
];

/// May the reply of `method` be large?
pub fn is_heavy(method: &str) -> bool {
    !LIGHT.contains(&method)
}

/// The daemon-wide budget of replies being built ([`BUILDING_BUDGET`]).
#[derive(Debug, Clone)]
pub struct Builders(Arc<Semaphore>);

impl Default for Builders {
    fn default() -> Self {
        Builders(Arc::new(Semaphore::new(BUILDING_BUDGET / UNIT)))
    }
}

/// One connection's turn for heavy calls.
#[derive(Debug, Clone)]
pub struct Slot(Arc<Semaphore>);

impl Default for Slot {
    fn default() -> Self {
        Slot(Arc::new(Semaphore::new(1)))
    }
}

/// The room one heavy call holds while its reply is built; given back when dropped.
pub struct Reservation {
    _slot: OwnedSemaphorePermit,
    _building: OwnedSemaphorePermit,
}

/// Take the connection's slot, wait for its client to keep up, then take [`RESERVATION`]
/// of the daemon's building budget (permits are handed out in order of asking). Fails
/// only when the connection closes meanwhile.
pub async fn reserve(slot: &Slot, outbox: &Outbox, builders: &Builders) -> Result<Reservation, Closed> {
    let slot = slot.0.clone().acquire_owned().await.map_err(|_| Closed)?;
    outbox.room_below(SHED_FLOOR).await?;
    let building = builders.0.clone().acquire_many_owned((RESERVATION / UNIT) as u32).await.map_err(|_| Closed)?;
    Ok(Reservation { _slot: slot, _building: building })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_reads_and_unknown_methods_are_heavy_and_plain_writes_are_not() {
        for m in ["events.list", "inbox.show", "mail.read", "orch.cancel", "rpc.discover", "some.newMethod"] {
            assert!(is_heavy(m), "{m}");
        }
        for m in ["inbox.send", "inbox.claim", "system.hello"] {
            assert!(!is_heavy(m), "{m}");
        }
    }

    #[tokio::test]
    async fn a_connection_that_holds_a_large_reply_gets_no_second_one_built() {
        use std::future::Future;
        let (outbox, mut rx) = Outbox::new(Arc::default());
        let (slot, builders) = (Slot::default(), Builders::default());
        let first = reserve(&slot, &outbox, &builders).await.unwrap();
        outbox
            .push_reserved(serde_json::value::RawValue::from_string(format!("\"{}\"", "x".repeat(SHED_FLOOR))).unwrap())
            .unwrap();
        drop(first);
        let mut second = Box::pin(reserve(&slot, &outbox, &builders));
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        assert!(second.as_mut().poll(&mut cx).is_pending(), "the first reply is not written yet");
        drop(rx.recv().await.unwrap());
        assert!(second.await.is_ok(), "once it is written the next one may be built");
    }
}
