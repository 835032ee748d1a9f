//! Per-recipient mail on SQLite. A copy is keyed by `(recipient, event_id)`, the event of
//! its message: a recipient's mail is one key range in message order (newest first by
//! scanning it backwards), and the queued copies have a partial index of their own.

use coord_proto::types::*;
use rusqlite::{params, params_from_iter, types::Value as SqlValue};

use super::tx::{SqliteTx, marks};
use crate::error::Result;
use crate::store::repos::{Mail, MailQuery, MailRow, QueuedQuery, TimelineQuery, Within};
use crate::store::rows::{self, Cols, MAIL_COLUMNS, MAIL_FROM, MAIL_PRIORITY_RANK, opt_ts_text, ts_text};
use crate::time::Ts;

/// The same, for queued copies: their partial index, never a walk over a recipient's
/// whole history (without statistics the planner cannot tell the two apart).
const QUEUED_FROM: &str = "mail x INDEXED BY idx_mail_queued JOIN messages m ON m.message_id = x.message_id \
     JOIN threads t ON t.thread_id = m.thread_id";

/// WHERE clause (from `?{first}` on) selecting the copies of `recipients` queued at `now`.
fn queued(recipients: &[String], now: Ts, args: &mut Vec<SqlValue>) -> String {
    args.push(SqlValue::Text(ts_text(now)));
    let now_mark = args.len();
    let first = args.len() + 1;
    args.extend(recipients.iter().map(|r| SqlValue::Text(r.clone())));
    format!(
        "x.recipient IN ({}) AND x.delivered_at IS NULL AND x.withdrawn_at IS NULL \
         AND (x.expires_at IS NULL OR x.expires_at > ?{now_mark})",
        marks(first, recipients.len())
    )
}

impl SqliteTx<'_> {
    fn mail_rows(&self, sql: &str, args: Vec<SqlValue>) -> Result<Vec<MailRow>> {
        self.map(sql, params_from_iter(args), rows::mail)
    }
}

impl Mail for SqliteTx<'_> {
    fn mail_insert(&mut self, row: &MailRow) -> Result<()> {
        self.conn
            .prepare_cached(
                "INSERT INTO mail (recipient, event_id, message_id, state, priority, expires_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?
            .execute(params![
                row.recipient,
                row.event_id,
                row.message_id,
                row.state.as_str(),
                row.priority.as_str(),
                opt_ts_text(row.expires_at)
            ])?;
        Ok(())
    }

    fn mail_save(&mut self, row: &MailRow) -> Result<()> {
        self.conn
            .prepare_cached(
                "UPDATE mail SET state = ?3, delivered_at = ?4, read_at = ?5, acked_at = ?6, withdrawn_at = ?7, \
                 reminded_at = ?8 WHERE recipient = ?1 AND event_id = ?2",
            )?
            .execute(params![
                row.recipient,
                row.event_id,
                row.state.as_str(),
                opt_ts_text(row.delivered_at),
                opt_ts_text(row.read_at),
                opt_ts_text(row.acked_at),
                opt_ts_text(row.withdrawn_at),
                opt_ts_text(row.reminded_at),
            ])?;
        Ok(())
    }

    fn mail_item(&self, recipient: &str, message_id: &str) -> Result<Option<MailRow>> {
        let sql = format!(
            "SELECT {MAIL_COLUMNS} FROM {MAIL_FROM} WHERE x.recipient = ?1 \
             AND x.event_id = (SELECT event_id FROM messages WHERE message_id = ?2)"
        );
        self.map_one(&sql, [recipient, message_id], rows::mail)
    }

    fn mail_list(&self, q: &MailQuery) -> Result<Within<MailRow>> {
        let sql = format!(
            "SELECT {MAIL_COLUMNS} FROM {MAIL_FROM} WHERE x.recipient = ?1 AND (?2 IS NULL OR x.state = ?2) \
             AND (?2 IS NULL OR x.withdrawn_at IS NULL) \
             AND (?3 IS NULL OR t.task_id = ?3) AND (?4 IS NULL OR x.event_id < ?4) \
             ORDER BY x.event_id DESC LIMIT {}",
            q.limit
        );
        let args = vec![
            SqlValue::Text(q.recipient.clone()),
            q.state.map_or(SqlValue::Null, |s| SqlValue::Text(s.as_str().into())),
            q.task_id.clone().map_or(SqlValue::Null, SqlValue::Text),
            q.before_event.map_or(SqlValue::Null, SqlValue::Integer),
        ];
        self.map_within(&sql, params_from_iter(args), q.max_bytes, rows::mail, None)
    }

    fn mail_queued(&self, q: &QueuedQuery) -> Result<Vec<MailRow>> {
        let mut args = Vec::new();
        let mut clause = queued(&q.recipients, q.now, &mut args);
        if !q.priorities.is_empty() {
            clause.push_str(&format!(" AND x.priority IN ({})", marks(args.len() + 1, q.priorities.len())));
            args.extend(q.priorities.iter().map(|p| SqlValue::Text(p.as_str().into())));
        }
        if q.unreminded {
            clause.push_str(" AND x.reminded_at IS NULL");
        }
        let sql = format!(
            "SELECT {MAIL_COLUMNS} FROM {QUEUED_FROM} WHERE {clause} ORDER BY {MAIL_PRIORITY_RANK}, x.event_id LIMIT {}",
            q.limit
        );
        self.mail_rows(&sql, args)
    }

    fn mail_queued_count(&self, recipients: &[String], now: Ts) -> Result<(u64, u64)> {
        let mut args = Vec::new();
        let clause = queued(recipients, now, &mut args);
        let sql = format!(
            "SELECT COUNT(*), COALESCE(SUM(x.priority = 'urgent'), 0) FROM mail x INDEXED BY idx_mail_queued WHERE {clause}"
        );
        let (n, urgent): (i64, i64) =
            self.conn.prepare_cached(&sql)?.query_row(params_from_iter(args), |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok((n as u64, urgent as u64))
    }

    fn mail_queued_copies(&self, message_id: &str, now: Ts) -> Result<Vec<MailRow>> {
        let sql = format!(
            "SELECT {MAIL_COLUMNS} FROM {QUEUED_FROM} WHERE x.event_id = (SELECT event_id FROM messages WHERE message_id = ?1) \
             AND x.delivered_at IS NULL AND x.withdrawn_at IS NULL AND (x.expires_at IS NULL OR x.expires_at > ?2) \
             ORDER BY x.recipient"
        );
        self.mail_rows(&sql, vec![SqlValue::Text(message_id.into()), SqlValue::Text(ts_text(now))])
    }

    fn mail_unacked(&self, task_id: Option<&str>, agent: Option<&str>, limit: u32) -> Result<Vec<MailRow>> {
        let sql = format!(
            "SELECT {MAIL_COLUMNS} FROM {MAIL_FROM} WHERE m.requires_ack = 1 AND x.state <> 'acked' \
             AND x.withdrawn_at IS NULL \
             AND (?1 IS NULL OR t.task_id = ?1) AND (?2 IS NULL OR x.recipient = ?2 OR m.from_agent = ?2) \
             ORDER BY x.event_id LIMIT {limit}"
        );
        let opt = |v: Option<&str>| v.map_or(SqlValue::Null, |s| SqlValue::Text(s.into()));
        self.mail_rows(&sql, vec![opt(task_id), opt(agent)])
    }

    fn mail_counts(&self, task_id: Option<&str>, agent: Option<&str>) -> Result<Vec<(MailState, bool, u64)>> {
        self.map(
            "SELECT x.state, m.requires_ack, COUNT(*) FROM mail x JOIN messages m ON m.message_id = x.message_id \
             JOIN threads t ON t.thread_id = m.thread_id \
             WHERE (?1 IS NULL OR t.task_id = ?1) AND (?2 IS NULL OR x.recipient = ?2) AND x.withdrawn_at IS NULL \
             GROUP BY x.state, m.requires_ack",
            params![task_id, agent],
            |r| Ok((r.p(0)?, r.b(1)?, r.i(2)? as u64)),
        )
    }

    fn mail_timeline(&self, q: &TimelineQuery) -> Result<Within<MailRow>> {
        let sql = format!(
            "SELECT {MAIL_COLUMNS} FROM {MAIL_FROM} WHERE (?1 IS NULL OR x.recipient = ?1 OR m.from_agent = ?1) \
             AND (?2 IS NULL OR m.thread_id = ?2) AND (?3 IS NULL OR t.run_id = ?3) \
             AND (?4 IS NULL OR x.event_id < ?4) ORDER BY x.event_id DESC, x.recipient LIMIT {}",
            q.limit
        );
        let text = |v: &Option<String>| v.clone().map_or(SqlValue::Null, SqlValue::Text);
        let args = vec![
            text(&q.agent),
            text(&q.thread_id),
            text(&q.run_id),
            q.before_event.map_or(SqlValue::Null, SqlValue::Integer),
        ];
        self.map_within(&sql, params_from_iter(args), q.max_bytes, rows::mail, Some(&rows::same_message))
    }
}
