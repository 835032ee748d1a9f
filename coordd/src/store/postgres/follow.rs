//! Following the other instances: what this instance publishes on its bus, and when.
//!
//! [`Publisher`] keeps the cursor of this instance's bus: the id of the last event it
//! published. Events are published strictly in id order, each once:
//!
//! - after its own commit, the writer publishes its batch directly when the batch follows
//!   the cursor, else it first reads what other instances committed in between (all of it
//!   is visible: ids commit in order, see `writer.rs`), and only then answers the batch;
//! - the follower thread reads whatever committed after the cursor when a notification
//!   names an id past the cursor as it is once the notification has arrived (the writer
//!   announces its own batch only after publishing it), and after every reconnect.
//!
//! The follower has one dedicated listening connection, never a pooled one (a pool would
//! drop notifications). A notification only carries an id, so a lost one (a reconnect, a
//! server restart) delays an event until the next catch-up and never loses it. While the
//! listener is down the follower polls every [`POLL`] and logs that it does.
//!
//! The listening connection also holds the project's *duties lock*, a session advisory
//! lock: the instance holding it runs the background duties (lease expiry, automatic
//! retries of tasks without a worktree), so they run once, not once per instance. When its
//! connection dies the lock goes with it and another instance takes it within
//! [`LEADER_RETRY`].

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use coord_proto::types::Event;
use postgres::Config;
use postgres::fallible_iterator::FallibleIterator;
use tokio::sync::watch;

use super::conn::PgConn;
use super::tx::PgTx;
use crate::bus::Bus;
use crate::error::Result;
use crate::store::assemble;
use crate::store::repos::{EventQuery, Events};

/// Catch-up period while the listener is down.
pub const POLL: Duration = Duration::from_secs(1);
/// How often an instance that does not hold the duties lock tries to take it.
pub const LEADER_RETRY: Duration = Duration::from_secs(1);
/// The follower's longest wait for a notification before it checks for shutdown.
const SLICE: Duration = Duration::from_millis(200);
/// Events read per catch-up query.
const PAGE: u32 = 500;

/// What the writer and the follower of one instance share.
pub struct Shared {
    pub cfg: Config,
    pub channel: String,
    pub write_key: i64,
    pub duty_key: i64,
    pub publisher: Publisher,
}

/// The bus of this instance and the id of the last event published on it.
pub struct Publisher {
    bus: Bus,
    cursor: Mutex<i64>,
}

impl Publisher {
    pub fn new(bus: Bus, last: i64) -> Publisher {
        Publisher { bus, cursor: Mutex::new(last) }
    }

    /// The id of the last event published here.
    pub fn cursor(&self) -> i64 {
        self.cursor.lock().map(|c| *c).unwrap_or(0)
    }

    /// After a commit of this instance: publish its events, after whatever other instances
    /// committed before them that is not published yet (read on `conn`). If that read
    /// fails nothing is published: the follower catches up later, in order. The writer
    /// answers the batch only after this, so a reply follows its events.
    pub fn committed(&self, conn: &mut PgConn, events: Vec<Event>) {
        let Some(first) = events.first().map(|e| e.event_id) else { return };
        let Ok(mut cursor) = self.cursor.lock() else { return };
        if *cursor < first - 1
            && let Err(e) = self.read_on(conn, &mut cursor)
        {
            tracing::warn!(error = %e, "cannot read the events before this commit; the follower will publish them");
            return;
        }
        let own: Vec<Event> = events.into_iter().filter(|e| e.event_id > *cursor).collect();
        if let Some(last) = own.last() {
            *cursor = last.event_id;
            self.bus.publish(own);
        }
    }

    /// Publish everything committed after the cursor. Logs at debug level how many
    /// events it read (`coordd::store::postgres::follow`).
    pub fn catch_up(&self, conn: &mut PgConn) -> Result<()> {
        let Ok(mut cursor) = self.cursor.lock() else { return Ok(()) };
        let from = *cursor;
        let read = self.read_on(conn, &mut cursor)?;
        tracing::debug!(from, to = *cursor, read, "follower caught up");
        Ok(())
    }

    /// Publish what committed after `cursor` (read on `conn`); how many events that was.
    fn read_on(&self, conn: &mut PgConn, cursor: &mut i64) -> Result<usize> {
        let tx = PgTx::read(conn);
        let mut read = 0;
        loop {
            let q = EventQuery { after: *cursor, filter: Default::default() };
            let mut page = tx.events_after(&q, PAGE)?;
            assemble::attach_mail(&tx, &mut page)?;
            let n = page.len();
            read += n;
            if let Some(last) = page.last() {
                *cursor = last.event_id;
                self.bus.publish(page);
            }
            if n < PAGE as usize {
                return Ok(read);
            }
        }
    }
}

/// Handle to the follower thread.
pub struct Follower {
    stop: Arc<AtomicBool>,
    duties: watch::Receiver<bool>,
}

impl Follower {
    pub fn spawn(shared: Arc<Shared>) -> std::io::Result<Follower> {
        let stop = Arc::new(AtomicBool::new(false));
        let (duties_tx, duties) = watch::channel(false);
        let s = stop.clone();
        std::thread::Builder::new().name("coordd-pg-follow".into()).spawn(move || follow(&shared, &s, &duties_tx))?;
        Ok(Follower { stop, duties })
    }

    /// Whether this instance holds the duties lock, as it changes.
    pub fn duties(&self) -> watch::Receiver<bool> {
        self.duties.clone()
    }

    /// Ask the thread to stop (it does within [`SLICE`] or [`POLL`]); its connections
    /// close, which releases the duties lock.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

/// The listening connection and whether it holds the duties lock.
struct Listener {
    conn: PgConn,
    leader: bool,
    tried: Instant,
}

fn listen(shared: &Shared) -> Result<Listener> {
    let mut conn = PgConn::connect(&shared.cfg)?;
    conn.batch(&format!("LISTEN \"{}\"", shared.channel))?;
    let mut l = Listener { conn, leader: false, tried: Instant::now() };
    try_lead(&mut l, shared)?;
    Ok(l)
}

fn try_lead(l: &mut Listener, shared: &Shared) -> Result<()> {
    l.tried = Instant::now();
    let rows = l.conn.execute_raw("SELECT 1 WHERE pg_try_advisory_lock($1)", &[&shared.duty_key])?;
    l.leader = rows == 1;
    Ok(())
}

fn follow(shared: &Shared, stop: &AtomicBool, duties: &watch::Sender<bool>) {
    let mut listener: Option<Listener> = None;
    let mut reader: Option<PgConn> = None;
    let mut down_since: Option<Instant> = None;
    let mut behind = true;
    let mut last_poll = Instant::now();
    while !stop.load(Ordering::SeqCst) {
        if listener.is_none() {
            match listen(shared) {
                Ok(l) => {
                    if let Some(t) = down_since.take() {
                        tracing::info!(down_for = ?t.elapsed(), "event listener reconnected; catching up from the cursor");
                    }
                    listener = Some(l);
                    behind = true;
                }
                Err(e) => {
                    if down_since.is_none() {
                        tracing::warn!(error = %e, "event listener is down; polling for events every {POLL:?} until it is back");
                        down_since = Some(Instant::now());
                    }
                }
            }
        }
        let _ = duties.send_if_modified(|d| {
            let now = listener.as_ref().is_some_and(|l| l.leader);
            std::mem::replace(d, now) != now
        });
        let polling = listener.is_none() && last_poll.elapsed() >= POLL;
        if behind || polling {
            last_poll = Instant::now();
            behind = !catch_up(shared, &mut reader);
        }
        match listener.as_mut() {
            Some(l) => match wait(l, shared) {
                Ok(more) => behind |= more,
                Err(e) => {
                    tracing::warn!(error = %e, "event listener lost its connection");
                    listener = None;
                    down_since = Some(Instant::now());
                    tracing::warn!("event listener is down; polling for events every {POLL:?} until it is back");
                }
            },
            None => std::thread::sleep(SLICE),
        }
    }
    let _ = duties.send(false);
}

/// Catch up on the reading connection (connecting it if needed); true when done.
fn catch_up(shared: &Shared, reader: &mut Option<PgConn>) -> bool {
    if reader.as_ref().is_none_or(PgConn::is_closed) {
        *reader = PgConn::connect(&shared.cfg).ok();
    }
    let Some(conn) = reader.as_mut() else { return false };
    match shared.publisher.catch_up(conn) {
        Ok(()) => true,
        Err(e) => {
            tracing::debug!(error = %e, "catch-up failed; retrying");
            *reader = None;
            false
        }
    }
}

/// Wait up to [`SLICE`] for notifications; true when one names an event not published yet.
/// Also retries the duties lock when due.
fn wait(l: &mut Listener, shared: &Shared) -> Result<bool> {
    if !l.leader && l.tried.elapsed() >= LEADER_RETRY {
        try_lead(l, shared)?;
    }
    let mut notified = Notified::default();
    {
        let mut notes = l.conn.client().notifications();
        if let Some(n) = notes.timeout_iter(SLICE).next()? {
            notified.add(n.payload());
        }
        // Drain what else has arrived, without waiting again.
        let mut rest = notes.iter();
        while let Some(n) = rest.next()? {
            notified.add(n.payload());
        }
    }
    if l.conn.is_closed() {
        return Err(crate::error::Error::Storage("connection closed".into()));
    }
    // The cursor as it is now, after the wait: this instance's writer publishes its own
    // batch before announcing it, so its own notifications are not "newer" (unless that
    // publish failed, and then this catch-up is the one that publishes the batch).
    Ok(notified.newer_than(shared.publisher.cursor()))
}

/// What the notifications of one wait named.
#[derive(Default, Debug)]
struct Notified {
    /// The newest id named.
    newest: Option<i64>,
    /// A payload that is not an id (another tool's): catch up to be sure.
    unknown: bool,
}

impl Notified {
    fn add(&mut self, payload: &str) {
        match payload.parse::<i64>() {
            Ok(id) => self.newest = Some(self.newest.map_or(id, |n| n.max(id))),
            Err(_) => self.unknown = true,
        }
    }

    /// Whether they name an event after `cursor`.
    fn newer_than(&self, cursor: i64) -> bool {
        self.unknown || self.newest.is_some_and(|id| id > cursor)
    }
}

#[cfg(test)]
mod tests {
    use super::Notified;

    #[test]
    fn notifications_name_more_only_past_the_cursor_or_when_not_an_id() {
        let mut n = Notified::default();
        assert!(!n.newer_than(0), "no notification names nothing");
        for p in ["7", "12", "9"] {
            n.add(p);
        }
        assert!(n.newer_than(11) && !n.newer_than(12), "the newest id counts");
        n.add("not an id");
        assert!(n.newer_than(100), "a payload that is not an id means: catch up");
    }
}
