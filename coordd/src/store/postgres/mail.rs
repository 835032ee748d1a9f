//! Per-recipient mail on PostgreSQL (the SQL of `store::sqlite::mail`): a copy is keyed by
//! `(recipient, event_id)`, and the queued copies have a partial index of their own.

use coord_proto::types::*;

use super::conn::Param;
use super::deferred::MAIL;
use super::tx::{Args, PgTx};
use crate::error::Result;
use crate::store::repos::{Mail, MailQuery, MailRow, QueuedQuery, TimelineQuery, Within};
use crate::store::rows::{self, Cols, MAIL_COLUMNS, MAIL_FROM, MAIL_PRIORITY_RANK, opt_ts_text, ts_text};
use crate::time::Ts;

/// WHERE clause selecting the copies of `recipients` queued at `now`.
fn queued(recipients: &[String], now: Ts, args: &mut Args) -> String {
    let now = args.push(ts_text(now));
    let who = args.push(recipients.to_vec());
    format!(
        "x.recipient = ANY({who}) AND x.delivered_at IS NULL AND x.withdrawn_at IS NULL \
         AND (x.expires_at IS NULL OR x.expires_at > {now})"
    )
}

impl Mail for PgTx<'_> {
    fn mail_insert(&mut self, row: &MailRow) -> Result<()> {
        self.insert(
            &MAIL,
            vec![
                (&row.recipient).into(),
                row.event_id.into(),
                (&row.message_id).into(),
                row.state.as_str().into(),
                row.priority.as_str().into(),
                opt_ts_text(row.expires_at).into(),
            ],
        )?;
        Ok(())
    }

    fn mail_save(&mut self, row: &MailRow) -> Result<()> {
        self.exec(
            "UPDATE mail SET state = $3, delivered_at = $4, read_at = $5, acked_at = $6, withdrawn_at = $7, \
             reminded_at = $8 WHERE recipient = $1 AND event_id = $2",
            &[
                &row.recipient,
                &row.event_id,
                &row.state.as_str(),
                &opt_ts_text(row.delivered_at),
                &opt_ts_text(row.read_at),
                &opt_ts_text(row.acked_at),
                &opt_ts_text(row.withdrawn_at),
                &opt_ts_text(row.reminded_at),
            ],
        )?;
        Ok(())
    }

    fn mail_item(&self, recipient: &str, message_id: &str) -> Result<Option<MailRow>> {
        let sql = format!(
            "SELECT {MAIL_COLUMNS} FROM {MAIL_FROM} WHERE x.recipient = $1 \
             AND x.event_id = (SELECT event_id FROM messages WHERE message_id = $2)"
        );
        self.map_one(&sql, &[&recipient, &message_id], rows::mail)
    }

    fn mail_list(&self, q: &MailQuery) -> Result<Within<MailRow>> {
        let sql = format!(
            "SELECT {MAIL_COLUMNS} FROM {MAIL_FROM} WHERE x.recipient = $1 AND ($2::text IS NULL OR x.state = $2) \
             AND ($3::text IS NULL OR t.task_id = $3) AND ($4::bigint IS NULL OR x.event_id < $4) \
             ORDER BY x.event_id DESC LIMIT {}",
            q.limit
        );
        let args: [Param<'_>; 4] = [&q.recipient, &q.state.map(|s| s.as_str()), &q.task_id, &q.before_event];
        self.map_within(&sql, &args, q.max_bytes, rows::mail, None)
    }

    fn mail_queued(&self, q: &QueuedQuery) -> Result<Vec<MailRow>> {
        let mut args = Args::default();
        let mut clause = queued(&q.recipients, q.now, &mut args);
        if !q.priorities.is_empty() {
            let p: Vec<String> = q.priorities.iter().map(|p| p.as_str().to_string()).collect();
            clause.push_str(&format!(" AND x.priority = ANY({})", args.push(p)));
        }
        if q.unreminded {
            clause.push_str(" AND x.reminded_at IS NULL");
        }
        let sql = format!(
            "SELECT {MAIL_COLUMNS} FROM {MAIL_FROM} WHERE {clause} ORDER BY {MAIL_PRIORITY_RANK}, x.event_id, x.recipient LIMIT {}",
            q.limit
        );
        self.map(&sql, &args.refs(), rows::mail)
    }

    fn mail_queued_count(&self, recipients: &[String], now: Ts) -> Result<(u64, u64)> {
        let mut args = Args::default();
        let clause = queued(recipients, now, &mut args);
        let sql = format!(
            "SELECT COUNT(*)::bigint, (COUNT(*) FILTER (WHERE x.priority = 'urgent'))::bigint FROM mail x WHERE {clause}"
        );
        let counts = self.map_one(&sql, &args.refs(), |r| Ok((r.i(0)?, r.i(1)?)))?;
        let (n, urgent) = counts.unwrap_or((0, 0));
        Ok((n as u64, urgent as u64))
    }

    fn mail_queued_copies(&self, message_id: &str, now: Ts) -> Result<Vec<MailRow>> {
        let sql = format!(
            "SELECT {MAIL_COLUMNS} FROM {MAIL_FROM} WHERE x.event_id = (SELECT event_id FROM messages WHERE message_id = $1) \
             AND x.delivered_at IS NULL AND x.withdrawn_at IS NULL AND (x.expires_at IS NULL OR x.expires_at > $2) \
             ORDER BY x.recipient"
        );
        self.map(&sql, &[&message_id, &ts_text(now)], rows::mail)
    }

    fn mail_unacked(&self, task_id: Option<&str>, agent: Option<&str>, limit: u32) -> Result<Vec<MailRow>> {
        let sql = format!(
            "SELECT {MAIL_COLUMNS} FROM {MAIL_FROM} WHERE m.requires_ack AND x.state <> 'acked' \
             AND ($1::text IS NULL OR t.task_id = $1) AND ($2::text IS NULL OR x.recipient = $2 OR m.from_agent = $2) \
             ORDER BY x.event_id, x.recipient LIMIT {limit}"
        );
        self.map(&sql, &[&task_id, &agent], rows::mail)
    }

    fn mail_counts(&self, task_id: Option<&str>, agent: Option<&str>) -> Result<Vec<(MailState, bool, u64)>> {
        self.map(
            "SELECT x.state, m.requires_ack, COUNT(*)::bigint FROM mail x JOIN messages m ON m.message_id = x.message_id \
             JOIN threads t ON t.thread_id = m.thread_id \
             WHERE ($1::text IS NULL OR t.task_id = $1) AND ($2::text IS NULL OR x.recipient = $2) \
             GROUP BY x.state, m.requires_ack",
            &[&task_id, &agent],
            |r| Ok((r.p(0)?, r.b(1)?, r.i(2)? as u64)),
        )
    }

    fn mail_timeline(&self, q: &TimelineQuery) -> Result<Within<MailRow>> {
        let mut args = Args::default();
        let mut clauses = vec!["true".to_string()];
        if let Some(a) = &q.agent {
            let n = args.push(a.clone());
            clauses.push(format!("(x.recipient = {n} OR m.from_agent = {n})"));
        }
        for (col, v) in [("m.thread_id", &q.thread_id), ("t.run_id", &q.run_id)] {
            if let Some(v) = v {
                clauses.push(format!("{col} = {}", args.push(v.clone())));
            }
        }
        if let Some(before) = q.before_event {
            clauses.push(format!("x.event_id < {}", args.push(before)));
        }
        let sql = format!(
            "SELECT {MAIL_COLUMNS} FROM {MAIL_FROM} WHERE {} ORDER BY x.event_id DESC, x.recipient LIMIT {}",
            clauses.join(" AND "),
            q.limit
        );
        self.map_within(&sql, &args.refs(), q.max_bytes, rows::mail, Some(&rows::same_message))
    }
}
