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
//! The project's *duties lock* is a session advisory lock: the instance holding it runs the
//! background duties (lease expiry, automatic retries of tasks without a worktree), so they
//! run once, not once per instance. Each instance takes it on a connection of its own (see
//! [`listen`](super::listen)); when the holder's connection dies the lock goes with it, and
//! another instance, trying every second, takes it within a second.
//!
//! Nothing here runs on a timer but that try: an idle instance's follower sleeps until a
//! notification, a change of the duties, or the stop wakes it ([`Listening::wait`]).

use std::sync::Arc;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use coord_proto::types::Event;
use tokio::sync::watch;

use super::conn::{Config, PgConn};
use super::listen::{Listening, Woke};
use super::tx::PgTx;
use crate::bus::Bus;
use crate::error::Result;

/// Catch-up period while the listener is down (and the pause before a failed catch-up is
/// tried again).
pub const POLL: Duration = super::listen::RETRY;
/// Events read per catch-up query.
const PAGE: u32 = 500;

/// What the writer and the follower of one instance share.
pub struct Shared {
    pub cfg: Config,
    /// The same, for the follower's own connections (`listen`).
    pub listen_cfg: tokio_postgres::Config,
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
    /// committed before them that is not published yet (read on `reader`, the writer's
    /// reading connection, connected on `cfg` when needed). If that read fails nothing is
    /// published: the follower catches up later, in order. The writer answers the batch
    /// only after this, so a reply follows its events.
    ///
    /// The read is made on a connection of its own ([`reading`]), not the writer's: the
    /// write transactions of this daemon do not wait for it.
    pub fn committed(&self, reader: &mut Option<PgConn>, cfg: &Config, events: Vec<Event>) {
        let Some(first) = events.first().map(|e| e.event_id) else { return };
        let Ok(mut cursor) = self.cursor.lock() else { return };
        if *cursor < first - 1 {
            let read = reading(reader, cfg).and_then(|c| self.read_on(c, &mut cursor));
            if let Err(e) = read {
                tracing::warn!(error = %e, "cannot read the events before this commit; the follower will publish them");
                *reader = None;
                return;
            }
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

    /// Publish what committed after `cursor` (read on `conn`, a statement per page: see
    /// [`catchup`](super::catchup)), complete while a subscription wants them so and as
    /// event rows otherwise (see [`crate::bus`]); how many events that was.
    fn read_on(&self, conn: &mut PgConn, cursor: &mut i64) -> Result<usize> {
        let tx = PgTx::read(conn);
        let mut read = 0;
        loop {
            // Asked before each page: while no subscription wants events complete, the
            // event rows alone (see `crate::bus`).
            let partial = self.bus.partial_read();
            let page = match partial {
                Some(_) => tx.event_rows_to_publish(*cursor, PAGE)?,
                None => tx.events_to_publish(*cursor, PAGE)?,
            };
            let n = page.len();
            read += n;
            if let Some(last) = page.last() {
                *cursor = last.event_id;
                match partial {
                    Some(_) => self.bus.publish_partial(page),
                    None => self.bus.publish(page),
                }
            }
            drop(partial);
            if n < PAGE as usize {
                return Ok(read);
            }
        }
    }
}

/// Handle to the follower thread.
pub struct Follower {
    stop: watch::Sender<bool>,
    duties: watch::Receiver<bool>,
}

impl Follower {
    pub fn spawn(shared: Arc<Shared>) -> std::io::Result<Follower> {
        let (stop, stopped) = watch::channel(false);
        let (duties_tx, duties) = watch::channel(false);
        std::thread::Builder::new()
            .name("coordd-pg-follow".into())
            .spawn(move || follow(&shared, stopped, &duties_tx))?;
        Ok(Follower { stop, duties })
    }

    /// Whether this instance holds the duties lock, as it changes.
    pub fn duties(&self) -> watch::Receiver<bool> {
        self.duties.clone()
    }

    /// Stop the thread (it wakes at once); its connections close, which releases the
    /// duties lock.
    pub fn stop(&self) {
        self.stop.send_replace(true);
    }
}

fn follow(shared: &Shared, stop: watch::Receiver<bool>, duties: &watch::Sender<bool>) {
    let mut l = match Listening::start(shared.listen_cfg.clone(), shared.channel.clone(), shared.duty_key, stop) {
        Ok(l) => l,
        Err(e) => {
            tracing::error!(error = %e, "the event follower cannot start: other daemons' events reach this one only with its own commits");
            return;
        }
    };
    let mut reader: Option<PgConn> = None;
    let mut down_since: Option<Instant> = None;
    let mut behind = true;
    loop {
        if !l.listening() {
            match l.listen() {
                Ok(()) => {
                    if let Some(t) = down_since.take() {
                        tracing::info!(down_for = ?t.elapsed(), "event listener reconnected; catching up from the cursor");
                    }
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
        let leading = l.leader();
        let _ = duties.send_if_modified(|d| std::mem::replace(d, leading) != leading);
        if behind {
            behind = !catch_up(shared, &mut reader);
        }
        // Polls while the listener is down, and tries a failed catch-up again.
        let retry = behind || !l.listening();
        match l.wait(retry) {
            Woke::Stop => break,
            Woke::Notified(payloads) => {
                let mut notified = Notified::default();
                payloads.iter().for_each(|p| notified.add(p));
                // The cursor as it is now, after the wait: this instance's writer publishes
                // its own batch before announcing it, so its own notifications are not
                // "newer" (unless that publish failed, and then this catch-up is the one
                // that publishes the batch).
                behind |= notified.newer_than(shared.publisher.cursor());
            }
            Woke::Lost(e) => {
                tracing::warn!(error = %e, "event listener lost its connection");
                down_since = Some(Instant::now());
                tracing::warn!("event listener is down; polling for events every {POLL:?} until it is back");
            }
            Woke::Duties => {}
            Woke::Retry => behind |= !l.listening(),
        }
    }
    let _ = duties.send(false);
    l.close();
}

/// A publisher's reading connection, connected on `cfg` if it is not (or no longer). It
/// keeps generic plans (`PgConn::writer_plans`): it only runs [`catchup`](super::catchup)'s
/// statement, whose lookups are nested loops of index seeks whatever the plan, and
/// planning it anew for every read cost the server a third of the read.
pub fn reading<'a>(reader: &'a mut Option<PgConn>, cfg: &Config) -> Result<&'a mut PgConn> {
    if reader.as_ref().is_none_or(PgConn::is_closed) {
        *reader = Some(PgConn::connect(cfg)?.writer_plans()?);
    }
    reader.as_mut().ok_or_else(|| crate::error::Error::Internal("no reading connection".into()))
}

/// Catch up on the reading connection (connecting it if needed); true when done.
fn catch_up(shared: &Shared, reader: &mut Option<PgConn>) -> bool {
    let Ok(conn) = reading(reader, &shared.cfg) else { return false };
    match shared.publisher.catch_up(conn) {
        Ok(()) => true,
        Err(e) => {
            tracing::debug!(error = %e, "catch-up failed; retrying");
            *reader = None;
            false
        }
    }
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
