//! The agent registry, project settings, reservations and peer links on SQLite.

use std::sync::LazyLock;

use coord_proto::types::*;
use rusqlite::{OptionalExtension, params, params_from_iter, types::Value as SqlValue};

use super::tx::SqliteTx;
use crate::error::Result;
use crate::store::assemble;
use crate::store::repos::{Agents, Peers, ReservationCounts, ReservationQuery, Reservations, StoredReservation};
use crate::store::rows::{self, AGENT_COLUMNS, Cols, RESERVATION_COLUMNS, ts_text};
use crate::time::Ts;

/// One agent by id.
static AGENT_BY_ID: LazyLock<String> =
    LazyLock::new(|| format!("SELECT {AGENT_COLUMNS} FROM agents WHERE agent_id = ?1"));

impl SqliteTx<'_> {
    /// The agent is being written: the batch cache must read it again.
    fn forget_agent(&self, agent_id: &str) {
        if let Some(c) = self.cache {
            c.forget_agent(agent_id);
        }
    }
}

impl Agents for SqliteTx<'_> {
    fn agent(&self, agent_id: &str) -> Result<Option<Agent>> {
        let read = || self.map_one(&AGENT_BY_ID, [agent_id], rows::agent);
        match self.cache {
            Some(c) => c.agent(agent_id, read),
            None => read(),
        }
    }

    fn agent_insert(&mut self, a: &Agent) -> Result<()> {
        self.forget_agent(&a.agent_id);
        self.conn
            .prepare_cached(&format!("INSERT INTO agents ({AGENT_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"))?
            .execute(params![
                a.agent_id,
                a.display_name,
                a.role,
                a.status.as_str(),
                a.registered,
                a.created_at,
                a.last_seen_at,
                a.version
            ])?;
        Ok(())
    }

    fn agent_save(&mut self, a: &Agent) -> Result<()> {
        self.forget_agent(&a.agent_id);
        self.conn
            .prepare_cached(
                "UPDATE agents SET display_name = ?2, role = ?3, status = ?4, registered = ?5, last_seen_at = ?6, \
                 version = ?7 WHERE agent_id = ?1",
            )?
            .execute(params![
                a.agent_id,
                a.display_name,
                a.role,
                a.status.as_str(),
                a.registered,
                a.last_seen_at,
                a.version
            ])?;
        Ok(())
    }

    fn agent_touch(&mut self, agent_id: &str, at: Ts) -> Result<bool> {
        self.forget_agent(agent_id);
        let n = self
            .conn
            .prepare_cached("UPDATE agents SET last_seen_at = ?2 WHERE agent_id = ?1")?
            .execute([agent_id, &ts_text(at)])?;
        Ok(n > 0)
    }

    fn agents_list(&self, p: &AgentListParams) -> Result<Vec<Agent>> {
        let sql = format!(
            "SELECT {AGENT_COLUMNS} FROM agents WHERE (?1 OR registered = 1) \
             AND (?2 IS NULL OR role = ?2) AND (?3 IS NULL OR status = ?3) ORDER BY agent_id"
        );
        self.map(&sql, params![p.include_unregistered, p.role, p.status.map(|s| s.as_str())], rows::agent)
    }

    fn agents_registered(&self, except: &str) -> Result<Vec<String>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT agent_id FROM agents WHERE registered = 1 AND agent_id <> ?1 ORDER BY agent_id")?;
        let rows = stmt.query_map([except], |r| r.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    fn agents_touch(&mut self, agent_ids: &[&str], at: Ts) -> Result<Vec<String>> {
        for id in agent_ids {
            self.forget_agent(id);
        }
        // One statement for the batch: the ids as one JSON array, the touched ones returned.
        let ids = serde_json::to_string(agent_ids).map_err(|e| crate::error::Error::Internal(e.to_string()))?;
        let mut stmt = self.conn.prepare_cached(
            "UPDATE agents SET last_seen_at = ?2 WHERE agent_id IN (SELECT value FROM json_each(?1)) \
             RETURNING agent_id",
        )?;
        let touched: std::collections::HashSet<String> =
            stmt.query_map(params![ids, ts_text(at)], |r| r.get(0))?.collect::<Result<_, _>>()?;
        Ok(agent_ids.iter().filter(|id| !touched.contains(**id)).map(|id| id.to_string()).collect())
    }

    fn setting(&self, key: &str) -> Result<Option<String>> {
        let read = || {
            Ok(self
                .conn
                .prepare_cached("SELECT value FROM settings WHERE key = ?1")?
                .query_row([key], |r| r.get(0))
                .optional()?)
        };
        match self.cache {
            Some(c) => c.setting(key, read),
            None => read(),
        }
    }

    fn setting_put(&mut self, key: &str, value: &str) -> Result<()> {
        if let Some(c) = self.cache {
            c.forget_setting(key);
        }
        self.conn
            .prepare_cached(
                "INSERT INTO settings (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = ?2",
            )?
            .execute([key, value])?;
        Ok(())
    }

    fn credential_hash(&self, agent_id: &str) -> Result<Option<String>> {
        Ok(self
            .conn
            .prepare_cached("SELECT secret_hash FROM agent_credentials WHERE agent_id = ?1")?
            .query_row([agent_id], |r| r.get(0))
            .optional()?)
    }

    fn credential_put(&mut self, agent_id: &str, hash: &str, at: Ts) -> Result<()> {
        self.conn
            .prepare_cached(
                "INSERT INTO agent_credentials (agent_id, secret_hash, created_at) VALUES (?1, ?2, ?3) \
                 ON CONFLICT (agent_id) DO UPDATE SET secret_hash = ?2, created_at = ?3",
            )?
            .execute([agent_id, hash, &at.to_string()])?;
        Ok(())
    }
}

impl SqliteTx<'_> {
    fn reservations(&self, sql: &str, args: Vec<SqlValue>) -> Result<Vec<StoredReservation>> {
        self.map(sql, params_from_iter(args), rows::reservation)
    }
}

impl Reservations for SqliteTx<'_> {
    fn reservations_active(&self) -> Result<Vec<StoredReservation>> {
        let sql = format!(
            "SELECT {RESERVATION_COLUMNS} FROM reservations WHERE state = 'active' ORDER BY scope, reservation_id"
        );
        self.reservations(&sql, vec![])
    }

    fn reservation_insert(&mut self, r: &Reservation) -> Result<()> {
        self.conn
            .prepare_cached(&format!(
                "INSERT INTO reservations ({RESERVATION_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"
            ))?
            .execute(params![
                r.reservation_id,
                r.scope,
                r.agent_id,
                r.task_id,
                r.shared,
                r.state.as_str(),
                r.generation,
                r.created_at,
                r.expires_at,
                r.released_at
            ])?;
        Ok(())
    }

    fn reservation_save(&mut self, r: &Reservation) -> Result<()> {
        self.conn
            .prepare_cached(
                "UPDATE reservations SET state = ?2, task_id = ?3, expires_at = ?4, released_at = ?5 \
                 WHERE reservation_id = ?1",
            )?
            .execute(params![r.reservation_id, r.state.as_str(), r.task_id, r.expires_at, r.released_at])?;
        Ok(())
    }

    fn reservation_max_generation(&self, scope: &str) -> Result<i64> {
        Ok(self
            .conn
            .prepare_cached("SELECT COALESCE(MAX(generation), 0) FROM reservations WHERE scope = ?1")?
            .query_row([scope], |r| r.get(0))?)
    }

    fn reservations_list(&self, q: &ReservationQuery) -> Result<Vec<StoredReservation>> {
        let mut clauses = Vec::new();
        let mut args: Vec<SqlValue> = Vec::new();
        if !q.include_history {
            clauses.push("state = 'active'".to_string());
        }
        for (col, v) in [("agent_id", &q.agent), ("task_id", &q.task_id)] {
            if let Some(v) = v {
                args.push(SqlValue::Text(v.clone()));
                clauses.push(format!("{col} = ?{}", args.len()));
            }
        }
        let filter = if clauses.is_empty() { String::new() } else { format!("WHERE {}", clauses.join(" AND ")) };
        let sql = format!(
            "SELECT {RESERVATION_COLUMNS} FROM reservations {filter} ORDER BY created_at DESC, reservation_id DESC"
        );
        self.reservations(&sql, args)
    }

    fn reservation_counts(&self, task_id: Option<&str>, agent: Option<&str>, now: Ts) -> Result<ReservationCounts> {
        let groups = self.map(
            "SELECT state, expires_at <= ?3, COUNT(*) FROM reservations \
             WHERE (?1 IS NULL OR task_id = ?1) AND (?2 IS NULL OR agent_id = ?2) GROUP BY 1, 2",
            params![task_id, agent, ts_text(now)],
            |r| Ok((r.p::<ReservationState>(0)?, r.b(1)?, r.i(2)? as u64)),
        )?;
        Ok(assemble::reservation_counts(groups))
    }
}

impl Peers for SqliteTx<'_> {
    fn peer_link(&mut self, task_id: &str, peer_task_id: &str, at: Ts) -> Result<bool> {
        let now = ts_text(at);
        let mut stmt = self
            .conn
            .prepare_cached("INSERT OR IGNORE INTO peers (task_id, peer_task_id, created_at) VALUES (?1, ?2, ?3)")?;
        let added = stmt.execute([task_id, peer_task_id, &now])? + stmt.execute([peer_task_id, task_id, &now])?;
        Ok(added > 0)
    }

    fn peers_of(&self, task_id: &str) -> Result<Vec<String>> {
        let mut stmt =
            self.conn.prepare_cached("SELECT peer_task_id FROM peers WHERE task_id = ?1 ORDER BY peer_task_id")?;
        let rows = stmt.query_map([task_id], |r| r.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}
