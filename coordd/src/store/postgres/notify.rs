//! Telling the other daemons that events were committed: one `NOTIFY` on the project's
//! channel carrying only the newest id, sent by a thread of its own on a connection of its
//! own, after the commit and outside every write transaction. Notifications are at least
//! [`MIN_GAP`] apart: a commit after a quiet spell is announced at once, and under load
//! one `NOTIFY` covers every batch committed in the gap. No write transaction ever takes
//! the notification queue's lock.
//!
//! A notification is only a hint for the followers (`follow`): one that cannot be sent is
//! retried with the newest id, and a lost one only delays a catch-up by cursor.

use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use super::conn::PgConn;
use super::follow::Shared;

/// The shortest time between two notifications (at most 500 a second).
pub const MIN_GAP: Duration = Duration::from_millis(2);
/// Longest pause between attempts while PostgreSQL cannot be reached.
const MAX_RETRY: Duration = Duration::from_secs(1);

/// The writer's side: hand over the newest committed id.
pub struct Notifier(Sender<i64>);

impl Notifier {
    /// Start the notifying thread.
    pub fn spawn(shared: Arc<Shared>) -> std::io::Result<Notifier> {
        let (tx, rx) = mpsc::channel();
        std::thread::Builder::new().name("coordd-pg-notify".into()).spawn(move || run(rx, &shared))?;
        Ok(Notifier(tx))
    }

    /// Events up to `last` are committed.
    pub fn committed(&self, last: i64) {
        let _ = self.0.send(last);
    }
}

fn run(rx: Receiver<i64>, shared: &Shared) {
    let mut conn: Option<PgConn> = None;
    let mut sent = Instant::now().checked_sub(MIN_GAP).unwrap_or_else(Instant::now);
    while let Ok(first) = rx.recv() {
        // Soon after the previous notification, wait out the gap: what commits meanwhile
        // goes out with this one.
        std::thread::sleep(MIN_GAP.saturating_sub(sent.elapsed()));
        let mut last = newest(&rx, first);
        let mut pause = Duration::from_millis(10);
        loop {
            match send(&mut conn, shared, last) {
                Ok(()) => {
                    sent = Instant::now();
                    break;
                }
                Err(e) => {
                    tracing::warn!(error = %e, "cannot notify the other daemons; trying again");
                    conn = None;
                    match rx.recv_timeout(pause) {
                        Ok(n) => last = newest(&rx, n.max(last)),
                        Err(RecvTimeoutError::Timeout) => {}
                        // The writer is gone (shutdown): what is committed is found by cursor.
                        Err(RecvTimeoutError::Disconnected) => return,
                    }
                    pause = (pause * 2).min(MAX_RETRY);
                }
            }
        }
    }
}

/// `last`, or a newer id already waiting.
fn newest(rx: &Receiver<i64>, mut last: i64) -> i64 {
    while let Ok(n) = rx.try_recv() {
        last = last.max(n);
    }
    last
}

fn send(conn: &mut Option<PgConn>, shared: &Shared, last: i64) -> crate::error::Result<()> {
    let c = match conn {
        Some(c) if !c.is_closed() => c,
        _ => conn.insert(PgConn::connect(&shared.cfg)?),
    };
    let channel = shared.channel.replace('\'', "''");
    c.batch(&format!("SELECT pg_notify('{channel}', '{last}')"))
}
