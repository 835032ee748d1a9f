//! What one connection has to write, and how much of it may wait: every reply and every
//! subscription notification goes through the connection's [`Outbox`], and one writer task
//! ([`write_loop`]) writes them to the socket.
//!
//! Memory is budgeted by bytes, not by message count. Each message is charged, until the
//! writer has handed it to the socket, to the connection's [`Meter`] and, for a
//! notification, to its subscription's. A charge is taken only while the meter is under
//! its budget (whatever the message's size, so a single message larger than the budget
//! still goes through an empty queue): a meter therefore never holds more than its budget
//! plus one message. What happens when there is no room is the sender's choice: a reply
//! waits (the connection stops reading requests meanwhile: backpressure), a live event cuts
//! its subscription loose (see `api::events`), a replayed event waits (the store is the
//! buffer).
//!
//! Every message is also counted by the daemon-wide [`Pool`](crate::net::shed::Pool), which
//! closes the connections that read slowest when all of them together hold too much.
//!
//! jsonrpsee answers a subscription call (its id, or its refusal) through a `MethodSink` of
//! its own, a small separate channel. The writer drains that channel before every message
//! of the outbox, so a subscription's id always goes out before its first notification.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::value::RawValue;
use tokio::io::{AsyncWrite, AsyncWriteExt, BufWriter};
use tokio::sync::{Notify, mpsc, oneshot};

pub use crate::net::shed::Meter;
use crate::net::shed::{Handle, Pool};

/// Bytes a connection may have queued for writing (replies and notifications together)
/// before replies wait and live events cut their subscriptions loose.
pub const CONNECTION_BUDGET: usize = 16 * 1024 * 1024;
/// Bytes one subscription may have queued for writing before it is cut loose.
pub const SUBSCRIPTION_BUDGET: usize = 4 * 1024 * 1024;

/// Wakes the senders waiting for room on one connection; costs nothing when none waits.
#[derive(Default)]
struct Room {
    waiting: AtomicUsize,
    written: Notify,
}

/// One message to write, with the charges it releases once written (or dropped).
pub struct Out {
    json: Box<RawValue>,
    conn: Arc<Meter>,
    sub: Option<Arc<Meter>>,
    room: Arc<Room>,
    pool: Arc<Pool>,
}

impl Drop for Out {
    fn drop(&mut self) {
        let n = self.json.get().len() + 1;
        self.conn.release(n);
        self.pool.release(n);
        if let Some(s) = &self.sub {
            s.release(n);
        }
        if self.room.waiting.load(Ordering::SeqCst) > 0 {
            self.room.written.notify_waiters();
        }
    }
}

/// The connection is closed: nothing more can be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the connection is closed")]
pub struct Closed;

/// Why [`Outbox::try_push`] did not queue a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Full {
    /// The subscription's queue is at its budget.
    Subscription,
    /// The connection's queue is at its budget.
    Connection,
    Closed,
}

/// The sending side of one connection's output. Cloned into every subscription.
#[derive(Clone)]
pub struct Outbox {
    tx: mpsc::UnboundedSender<Out>,
    conn: Arc<Meter>,
    room: Arc<Room>,
    pool: Arc<Pool>,
    handle: Arc<Handle>,
}

impl Outbox {
    /// A new outbox, counted by `pool`, and the receiver its writer drains.
    pub fn new(pool: Arc<Pool>) -> (Outbox, mpsc::UnboundedReceiver<Out>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let conn: Arc<Meter> = Arc::default();
        let handle = pool.join(conn.clone());
        (Outbox { tx, conn, room: Arc::default(), pool, handle }, rx)
    }

    /// How the pool closes this connection when the daemon's output budget is used up.
    pub fn handle(&self) -> Arc<Handle> {
        self.handle.clone()
    }

    /// The connection's meter.
    pub fn meter(&self) -> &Meter {
        &self.conn
    }

    fn out(&self, json: Box<RawValue>, sub: Option<&Arc<Meter>>) -> Out {
        let n = json.get().len() + 1;
        let out =
            Out { json, conn: self.conn.clone(), sub: sub.cloned(), room: self.room.clone(), pool: self.pool.clone() };
        self.pool.charge(n);
        out
    }

    fn send(&self, out: Out) -> Result<(), Closed> {
        self.tx.send(out).map_err(|_| Closed)
    }

    /// Queue `json` now if the subscription `sub` and the connection are under their
    /// budgets.
    pub fn try_push(&self, json: Box<RawValue>, sub: &Arc<Meter>) -> Result<(), Full> {
        let n = json.get().len() + 1;
        if !sub.try_charge(n, SUBSCRIPTION_BUDGET) {
            return Err(Full::Subscription);
        }
        if !self.conn.try_charge(n, CONNECTION_BUDGET) {
            sub.release(n);
            return Err(Full::Connection);
        }
        self.send(self.out(json, Some(sub))).map_err(|_| Full::Closed)
    }

    /// Queue `json` once the connection (and `sub`, if given) are under their budgets,
    /// waiting for the writer to make room.
    pub async fn push(&self, json: Box<RawValue>, sub: Option<&Arc<Meter>>) -> Result<(), Closed> {
        let n = json.get().len() + 1;
        if self.tx.is_closed() {
            return Err(Closed);
        }
        if self.try_charge(n, sub) {
            return self.send(self.out(json, sub));
        }
        self.wait_until(|| self.try_charge(n, sub)).await?;
        self.send(self.out(json, sub))
    }

    /// Wait until `ready` holds (tried again after each message written), or the
    /// connection closes.
    async fn wait_until(&self, mut ready: impl FnMut() -> bool) -> Result<(), Closed> {
        self.room.waiting.fetch_add(1, Ordering::SeqCst);
        let outcome = loop {
            let written = self.room.written.notified();
            tokio::pin!(written);
            written.as_mut().enable();
            if self.tx.is_closed() {
                break Err(Closed);
            }
            if ready() {
                break Ok(());
            }
            tokio::select! {
                _ = written => {}
                _ = self.tx.closed() => break Err(Closed),
            }
        };
        self.room.waiting.fetch_sub(1, Ordering::SeqCst);
        outcome
    }

    /// Charge the connection (and `sub`) if both are under their budgets.
    fn try_charge(&self, n: usize, sub: Option<&Arc<Meter>>) -> bool {
        if !sub.is_none_or(|s| s.try_charge(n, SUBSCRIPTION_BUDGET)) {
            return false;
        }
        if self.conn.try_charge(n, CONNECTION_BUDGET) {
            return true;
        }
        if let Some(s) = sub {
            s.release(n);
        }
        false
    }

    /// Wait until the connection has less than `bytes` queued (its client is keeping up),
    /// or the connection closes.
    pub async fn room_below(&self, bytes: usize) -> Result<(), Closed> {
        self.wait_until(|| self.conn.bytes() < bytes).await
    }

    /// Queue `json` whatever the connection's budget: a reply whose room was reserved
    /// before it was built ([`crate::net::transport::heavy`]).
    pub fn push_reserved(&self, json: Box<RawValue>) -> Result<(), Closed> {
        self.conn.charge(json.get().len() + 1);
        self.send(self.out(json, None))
    }

    /// Queue `json` whatever the budgets (a subscription's last word: small and once).
    pub fn push_final(&self, json: Box<RawValue>, sub: &Arc<Meter>) -> Result<(), Closed> {
        let n = json.get().len() + 1;
        sub.charge(n);
        self.conn.charge(n);
        self.send(self.out(json, Some(sub)))
    }
}

/// Write the connection's messages until both channels close or `stop` fires; then write
/// what is already queued, flush and shut the write half down. When the pool closes the
/// connection (`shed`), stop at once: the queue is dropped unwritten.
pub async fn write_loop<W: AsyncWrite + Unpin>(
    write: W,
    rpc: mpsc::Receiver<Box<RawValue>>,
    outbox: mpsc::UnboundedReceiver<Out>,
    stop: oneshot::Receiver<()>,
    shed: Arc<Handle>,
) {
    // Closed for the daemon's output budget: drop what is queued now, even in the middle
    // of a write the peer does not read.
    tokio::select! {
        _ = shed.closed() => {}
        _ = write_until_stopped(write, rpc, outbox, stop) => {}
    }
}

async fn write_until_stopped<W: AsyncWrite + Unpin>(
    write: W,
    mut rpc: mpsc::Receiver<Box<RawValue>>,
    mut outbox: mpsc::UnboundedReceiver<Out>,
    mut stop: oneshot::Receiver<()>,
) {
    let mut out = BufWriter::with_capacity(64 * 1024, write);
    let mut rpc_open = true;
    loop {
        tokio::select! {
            biased;
            m = rpc.recv(), if rpc_open => match m {
                Some(m) => {
                    if write_one(&mut out, &m).await.is_err() {
                        return;
                    }
                }
                None => rpc_open = false,
            },
            m = outbox.recv() => match m {
                Some(m) => {
                    if write_out(&mut out, &mut rpc, m).await.is_err() {
                        return;
                    }
                }
                None => break,
            },
            _ = &mut stop => {
                while let Ok(m) = rpc.try_recv() {
                    if write_one(&mut out, &m).await.is_err() {
                        return;
                    }
                }
                while let Ok(m) = outbox.try_recv() {
                    if write_out(&mut out, &mut rpc, m).await.is_err() {
                        return;
                    }
                }
                let _ = out.flush().await;
                let _ = out.shutdown().await;
                return;
            }
        }
        // Flush whenever nothing else is ready to be written.
        if rpc.is_empty() && outbox.is_empty() && out.flush().await.is_err() {
            return;
        }
    }
    let _ = out.flush().await;
}

/// Write one outbox message, after whatever jsonrpsee queued before it (a subscription's
/// id precedes its notifications). Its charges are released once it is in the buffer.
async fn write_out<W: AsyncWrite + Unpin>(
    out: &mut BufWriter<W>,
    rpc: &mut mpsc::Receiver<Box<RawValue>>,
    m: Out,
) -> std::io::Result<()> {
    while let Ok(first) = rpc.try_recv() {
        write_one(out, &first).await?;
    }
    write_one(out, &m.json).await
}

async fn write_one<W: AsyncWrite + Unpin>(out: &mut BufWriter<W>, msg: &RawValue) -> std::io::Result<()> {
    out.write_all(msg.get().as_bytes()).await?;
    out.write_all(b"\n").await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(n: usize) -> Box<RawValue> {
        RawValue::from_string(format!("\"{}\"", "x".repeat(n.saturating_sub(2)))).unwrap()
    }

    #[test]
    fn a_meter_takes_one_message_past_its_budget_and_no_more() {
        let (outbox, mut rx) = Outbox::new(Arc::default());
        let sub = Arc::new(Meter::default());
        let big = SUBSCRIPTION_BUDGET + 10;
        assert_eq!(outbox.try_push(raw(big), &sub), Ok(()), "an empty queue takes any message");
        assert_eq!(outbox.try_push(raw(10), &sub), Err(Full::Subscription));
        assert_eq!(sub.bytes(), big + 1);
        drop(rx.try_recv().unwrap());
        assert_eq!((sub.bytes(), outbox.meter().bytes()), (0, 0), "written messages release their charges");
        assert_eq!(outbox.try_push(raw(10), &sub), Ok(()));
    }

    #[tokio::test]
    async fn a_push_waits_for_room_on_the_connection() {
        use std::future::Future;
        let (outbox, mut rx) = Outbox::new(Arc::default());
        outbox.push(raw(CONNECTION_BUDGET), None).await.unwrap();
        let mut waiting = Box::pin(outbox.push(raw(10), None));
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        assert!(waiting.as_mut().poll(&mut cx).is_pending(), "the connection is at its budget");
        drop(rx.recv().await.unwrap());
        waiting.await.unwrap();
        assert_eq!(outbox.meter().bytes(), 11);
    }

    const MIB: usize = 1024 * 1024;

    #[test]
    fn over_the_budget_the_connections_holding_the_most_are_closed_and_readers_never() {
        let pool = Arc::new(crate::net::shed::Pool::new(4 * MIB));
        let (a, _a_unread) = Outbox::new(pool.clone());
        let (b, _b_unread) = Outbox::new(pool.clone());
        let (c, mut c_reads) = Outbox::new(pool.clone());
        let sub = || Arc::new(Meter::default());
        let (sa, sb, sc) = (sub(), sub(), sub());
        a.try_push(raw(3 * MIB), &sa).unwrap();
        c.try_push(raw(100), &sc).unwrap();
        drop(c_reads.try_recv().unwrap());
        assert!(!a.handle().is_shed(), "under the budget nothing is closed");
        // 5 MiB queued: the largest holder goes, which brings the total under 3 MiB.
        b.try_push(raw(2 * MIB), &sb).unwrap();
        assert!(a.handle().is_shed());
        assert!(!b.handle().is_shed() && !c.handle().is_shed());
        drop(_a_unread);
        assert_eq!(pool.total(), 2 * MIB + 1, "a closed connection's queue is given back when dropped");
    }
}
