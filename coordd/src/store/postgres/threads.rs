//! Threads, leases and read marks on PostgreSQL (the SQL of `store::sqlite::threads`).

use coord_proto::types::*;

use super::tx::{Args, PgTx};
use crate::error::Result;
use crate::store::repos::{FetchQuery, LeaseRow, Leases, StoredThread, Threads};
use crate::store::rows::{self, LEASE_COLUMNS, THREAD_COLUMNS, THREAD_FROM, ts_text};
use crate::time::Ts;

fn names<T: Copy>(v: &[T], name: impl Fn(T) -> &'static str) -> Vec<String> {
    v.iter().map(|s| name(*s).to_string()).collect()
}

impl Threads for PgTx<'_> {
    fn thread(&self, thread_id: &str) -> Result<Option<StoredThread>> {
        let sql = format!("SELECT {THREAD_COLUMNS} FROM {THREAD_FROM} WHERE t.thread_id = $1");
        self.map_one(&sql, &[&thread_id], rows::thread)
    }

    fn thread_exists(&self, thread_id: &str) -> Result<bool> {
        Ok(self.row("SELECT 1 FROM threads WHERE thread_id = $1", &[&thread_id])?.is_some())
    }

    fn thread_insert(&mut self, t: &Thread) -> Result<()> {
        self.exec(
            "INSERT INTO threads (thread_id, run_id, task_id, subject, created_by, assigned_to, status, \
             priority, prio_rank, latest_message_id, created_at, updated_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
            &[
                &t.thread_id,
                &t.run_id,
                &t.task_id,
                &t.subject,
                &t.created_by,
                &t.assigned_to,
                &t.status.as_str(),
                &t.priority.as_str(),
                &t.priority.rank(),
                &t.latest_message_id,
                &t.created_at,
                &t.updated_at,
            ],
        )?;
        Ok(())
    }

    fn thread_save(&mut self, t: &Thread) -> Result<()> {
        self.exec(
            "UPDATE threads SET assigned_to = $2, status = $3, latest_message_id = $4, updated_at = $5 \
             WHERE thread_id = $1",
            &[&t.thread_id, &t.assigned_to, &t.status.as_str(), &t.latest_message_id, &t.updated_at],
        )?;
        Ok(())
    }

    fn threads_fetch(&self, q: &FetchQuery) -> Result<Vec<StoredThread>> {
        let unread = if q.unread {
            "AND EXISTS (SELECT 1 FROM messages m WHERE m.thread_id = t.thread_id \
               AND m.to_agent = $1 AND m.from_agent <> $1 \
               AND m.event_id > COALESCE((SELECT r.read_event_id FROM reads r \
                   WHERE r.agent_id = $1 AND r.thread_id = t.thread_id), 0))"
        } else {
            ""
        };
        let sql = format!(
            "SELECT {THREAD_COLUMNS} FROM {THREAD_FROM} \
             WHERE t.assigned_to = $1 AND t.status = ANY($2) {unread} \
             ORDER BY t.prio_rank DESC, t.created_at, t.thread_id LIMIT {}",
            q.limit
        );
        let statuses = names(&q.statuses, |s| s.as_str());
        self.map(&sql, &[&q.agent, &statuses], rows::thread)
    }

    fn threads_list(&self, p: &ListParams, limit: u32) -> Result<Vec<StoredThread>> {
        let mut clauses: Vec<String> = Vec::new();
        let mut args = Args::default();
        for (col, v) in [
            ("t.created_by", &p.created_by),
            ("t.assigned_to", &p.assigned_to),
            ("t.run_id", &p.run_id),
            ("t.task_id", &p.task_id),
        ] {
            if let Some(v) = v {
                clauses.push(format!("{col} = {}", args.push(v.clone())));
            }
        }
        if let Some(agent) = &p.agent {
            let n = args.push(agent.clone());
            clauses.push(format!("(t.created_by = {n} OR t.assigned_to = {n})"));
        }
        if !p.statuses.is_empty() {
            clauses.push(format!("t.status = ANY({})", args.push(names(&p.statuses, |s| s.as_str()))));
        }
        let filter = if clauses.is_empty() { String::new() } else { format!("WHERE {}", clauses.join(" AND ")) };
        let sql = format!(
            "SELECT {THREAD_COLUMNS} FROM {THREAD_FROM} {filter} ORDER BY t.updated_at DESC, t.thread_id LIMIT {limit}"
        );
        self.map(&sql, &args.refs(), rows::thread)
    }

    fn tasks_running(&self, agent: &str) -> Result<Vec<String>> {
        self.map(
            "SELECT DISTINCT task_id FROM threads WHERE assigned_to = $1 \
             AND status IN ('claimed', 'in_progress', 'blocked') AND task_id <> '' ORDER BY task_id",
            &[&agent],
            |r| r.s(0),
        )
    }

    fn read_mark(&mut self, agent: &str, thread_id: &str, event_id: i64) -> Result<()> {
        self.exec(
            "INSERT INTO reads (agent_id, thread_id, read_event_id) VALUES ($1, $2, $3) \
             ON CONFLICT (agent_id, thread_id) DO UPDATE \
             SET read_event_id = GREATEST(reads.read_event_id, excluded.read_event_id)",
            &[&agent, &thread_id, &event_id],
        )?;
        Ok(())
    }
}

impl Leases for PgTx<'_> {
    fn lease_grant(&mut self, thread_id: &str, l: &LeaseRow) -> Result<()> {
        self.exec(
            "INSERT INTO leases (thread_id, agent_id, lease_token, claimed_at, expires_at, released_at, generation) \
             VALUES ($1, $2, $3, $4, $5, NULL, $6) \
             ON CONFLICT (thread_id) DO UPDATE SET agent_id = excluded.agent_id, \
             lease_token = excluded.lease_token, claimed_at = excluded.claimed_at, \
             expires_at = excluded.expires_at, released_at = NULL, generation = excluded.generation, \
             expiry_reported = false",
            &[&thread_id, &l.agent_id, &l.token, &ts_text(l.claimed_at), &ts_text(l.expires_at), &l.generation],
        )?;
        Ok(())
    }

    fn lease_set_expiry(&mut self, thread_id: &str, expires_at: Ts) -> Result<()> {
        self.exec("UPDATE leases SET expires_at = $2 WHERE thread_id = $1", &[&thread_id, &ts_text(expires_at)])?;
        Ok(())
    }

    fn lease_release(&mut self, thread_id: &str, at: Ts) -> Result<()> {
        self.exec(
            "UPDATE leases SET released_at = $2 WHERE thread_id = $1 AND released_at IS NULL",
            &[&thread_id, &ts_text(at)],
        )?;
        Ok(())
    }

    fn leases_expired_unreported(&self, now: Ts) -> Result<Vec<(String, LeaseRow)>> {
        let sql = format!(
            "SELECT {LEASE_COLUMNS} FROM leases WHERE released_at IS NULL AND NOT expiry_reported AND expires_at <= $1"
        );
        self.map(&sql, &[&ts_text(now)], rows::lease)
    }

    fn lease_mark_reported(&mut self, thread_id: &str) -> Result<()> {
        self.exec("UPDATE leases SET expiry_reported = true WHERE thread_id = $1", &[&thread_id])?;
        Ok(())
    }

    fn lease_next_expiry(&self) -> Result<Option<Ts>> {
        let next = self.map_one(
            "SELECT MIN(expires_at) FROM leases WHERE released_at IS NULL AND NOT expiry_reported",
            &[],
            |r| r.os(0),
        )?;
        next.flatten().map(|t| Ts::parse(&t)).transpose()
    }
}
