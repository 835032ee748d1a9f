//! What a [`Publisher`](super::follow::Publisher) reads of the events other instances
//! committed: each event after a cursor with its message and its copies (`mail`), exactly
//! as [`Events::events_after`](crate::store::repos::Events::events_after) and
//! [`attach_mail`](crate::store::assemble::attach_mail) give them, in **one** statement
//! (one round trip; a second only when a message has artifacts). Reading them takes a
//! follower's catch-up (a cross-daemon wake) and a writer's publish after another daemon's
//! commit; as four statements, one after another, it was four round trips.
//!
//! While no client's subscription wants events complete
//! ([`Bus::partial_read`](crate::bus::Bus::partial_read)), the event rows alone are read
//! ([`PgTx::event_rows_to_publish`]): a range of one index, without the message, copy and
//! artifact seeks, which were most of what reading another daemon's sends cost.

use coord_proto::types::{Event, EventMail, Priority};
use postgres::Row;

use super::tx::PgTx;
use crate::error::Result;
use crate::store::rows::{self, ARTIFACT_COLUMNS, Cols, EVENT_COLUMNS, MESSAGE_COLUMNS, RowRead};

/// The events after `$1`, at most `limit`, complete. Columns: an event's, its message's,
/// then the copies' recipients, the (last recipient's) priority and expiry, and whether the
/// message has artifacts.
pub fn complete_sql(limit: u32) -> String {
    // The page's size is written in the statement, not bound: planned generically (as the
    // publishers' connections keep their plans), `LIMIT $2` is taken for a tenth of the
    // events after an unknown cursor, and a server that had planned a few large reads
    // went on sorting a scan of the whole events table for every read (10 ms at 60,000
    // events, growing with the table); with the page known, the plan is the primary key's
    // range, whatever the cursor.
    //
    // Every lookup is by key, per event (`LATERAL … OFFSET 0`, a nested loop of index
    // seeks): the message by its id, the copies by their event (`idx_mail_event`). Joined
    // as wholes, the planner (which expects the page to be full) hashes the whole messages
    // table, 15 ms for 16,000 messages, on every read; before the copies had an index by
    // event, they were found under each distinct recipient in turn, a seek per recipient
    // and event read.
    format!(
        "WITH ev AS (SELECT {EVENT_COLUMNS} FROM events e WHERE e.event_id > $1 ORDER BY e.event_id LIMIT {limit}) \
         SELECT {EVENT_COLUMNS}, {MESSAGE_COLUMNS}, cp.recipients, cp.priority, cp.expires_at, \
         EXISTS (SELECT 1 FROM artifacts a WHERE a.message_id = e.message_id) \
         FROM ev e LEFT JOIN LATERAL (SELECT {MESSAGE_COLUMNS} FROM messages m WHERE m.message_id = e.message_id OFFSET 0) m \
         ON true LEFT JOIN LATERAL (SELECT array_agg(x.recipient ORDER BY x.recipient) AS recipients, \
         (array_agg(x.priority ORDER BY x.recipient DESC))[1] AS priority, \
         (array_agg(x.expires_at ORDER BY x.recipient DESC))[1] AS expires_at \
         FROM mail x WHERE x.event_id = e.event_id AND e.message_id IS NOT NULL) cp ON true \
         ORDER BY e.event_id"
    )
}

/// The event rows alone after `$1`, at most `limit` (the page written in, see
/// [`complete_sql`]).
pub fn rows_sql(limit: u32) -> String {
    format!("SELECT {EVENT_COLUMNS} FROM events e WHERE e.event_id > $1 ORDER BY e.event_id LIMIT {limit}")
}

/// The columns of a row from `at` on (the message's part of the statement's rows).
struct At<'r>(&'r Row, usize);

impl RowRead for At<'_> {
    fn s(&self, i: usize) -> Result<String> {
        self.0.s(self.1 + i)
    }
    fn os(&self, i: usize) -> Result<Option<String>> {
        self.0.os(self.1 + i)
    }
    fn i(&self, i: usize) -> Result<i64> {
        self.0.i(self.1 + i)
    }
    fn oi(&self, i: usize) -> Result<Option<i64>> {
        self.0.oi(self.1 + i)
    }
    fn b(&self, i: usize) -> Result<bool> {
        self.0.b(self.1 + i)
    }
    fn f(&self, i: usize) -> Result<f64> {
        self.0.f(self.1 + i)
    }
}

impl PgTx<'_> {
    /// The events after `after` (at most `limit`), without their messages and copies.
    pub(super) fn event_rows_to_publish(&self, after: i64, limit: u32) -> Result<Vec<Event>> {
        self.map(&rows_sql(limit), &[&after], rows::event)
    }

    /// The events after `after` (at most `limit`), each with its message (and the message's
    /// artifacts) and its copies.
    pub(super) fn events_to_publish(&self, after: i64, limit: u32) -> Result<Vec<Event>> {
        let (ne, nm) = (EVENT_COLUMNS.split(',').count(), MESSAGE_COLUMNS.split(',').count());
        let rows = self.rows(&complete_sql(limit), &[&after])?;
        let mut events = Vec::with_capacity(rows.len());
        let mut with_artifacts = Vec::new();
        for row in &rows {
            let mut e = rows::event(row)?;
            if e.message_id.is_some() && row.os(ne)?.is_some() {
                e.message = Some(rows::message(&At(row, ne))?);
            }
            let mail = ne + nm;
            let recipients: Option<Vec<String>> = row.try_get(mail).map_err(|err| rows::col_err(mail, err))?;
            if let (Some(recipients), Some(_)) = (recipients, e.message.as_ref()) {
                let priority: Priority = At(row, mail + 1).p(0)?;
                let expires_at = At(row, mail + 2).ots(0)?.map(|t| t.to_string());
                e.mail = Some(EventMail { recipients, priority, expires_at });
            }
            if row.b(mail + 3)?
                && let Some(id) = &e.message_id
            {
                with_artifacts.push(id.clone());
            }
            events.push(e);
        }
        if !with_artifacts.is_empty() {
            let sql = format!("SELECT {ARTIFACT_COLUMNS} FROM artifacts a WHERE a.message_id = ANY($1) ORDER BY a.seq");
            for a in self.map(&sql, &[&with_artifacts], rows::artifact)? {
                if let Some(m) =
                    events.iter_mut().filter_map(|e| e.message.as_mut()).find(|m| m.message_id == a.message_id)
                {
                    m.artifacts.push(a);
                }
            }
        }
        Ok(events)
    }
}
