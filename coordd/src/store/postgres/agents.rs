//! The agent registry, project settings, reservations and peer links on PostgreSQL (the
//! SQL of `store::sqlite::agents`).

use coord_proto::types::*;

use super::cache::{Known, SMALL};
use super::tx::{Args, PgTx};
use crate::error::Result;
use crate::store::assemble;
use crate::store::repos::{Agents, Peers, ReservationCounts, ReservationQuery, Reservations, StoredReservation};
use crate::store::rows::{self, AGENT_COLUMNS, Cols, RESERVATION_COLUMNS, ts_text};
use crate::time::Ts;

impl Agents for PgTx<'_> {
    fn agent(&self, agent_id: &str) -> Result<Option<Agent>> {
        let one = |tx: &Self| {
            let sql = format!("SELECT {AGENT_COLUMNS} FROM agents WHERE agent_id = $1");
            tx.map_one(&sql, &[&agent_id], rows::agent)
        };
        match self.cached(|c| c.agent(agent_id)) {
            None => one(self),
            Some(Known::Yes(a)) => Ok(a),
            Some(Known::ReadOne) => {
                let a = one(self)?;
                self.cached(|c| c.agent_read(agent_id, a.clone()));
                Ok(a)
            }
            Some(Known::ReadAll) => {
                let sql = format!("SELECT {AGENT_COLUMNS} FROM agents LIMIT {}", SMALL + 1);
                let all = self.map(&sql, &[], rows::agent)?;
                let whole = all.len() as i64 <= SMALL;
                self.cached(|c| c.agents_read(all, whole));
                self.agent(agent_id)
            }
        }
    }

    fn agent_insert(&mut self, a: &Agent) -> Result<()> {
        self.exec(
            &format!("INSERT INTO agents ({AGENT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"),
            &[
                &a.agent_id,
                &a.display_name,
                &a.role,
                &a.status.as_str(),
                &a.registered,
                &a.created_at,
                &a.last_seen_at,
                &a.version,
            ],
        )?;
        self.cached(|c| c.agent_inserted(a));
        Ok(())
    }

    fn agent_save(&mut self, a: &Agent) -> Result<()> {
        self.exec(
            "UPDATE agents SET display_name = $2, role = $3, status = $4, registered = $5, last_seen_at = $6, \
             version = $7 WHERE agent_id = $1",
            &[&a.agent_id, &a.display_name, &a.role, &a.status.as_str(), &a.registered, &a.last_seen_at, &a.version],
        )?;
        self.cached(|c| c.agent_saved(a));
        Ok(())
    }

    /// In the writer, an agent known to exist has its update held back and sent with the
    /// batch's other writes (see [`super::deferred`]); one known not to exist needs none.
    fn agent_touch(&mut self, agent_id: &str, at: Ts) -> Result<bool> {
        let at = ts_text(at);
        if self.caching() {
            let exists = self.agent(agent_id)?.is_some();
            if !exists {
                return Ok(false);
            }
            self.cached(|c| c.agent_touched(agent_id, &at));
            if self.touch_later(agent_id, &at) {
                return Ok(true);
            }
        }
        let n = self.exec("UPDATE agents SET last_seen_at = $2 WHERE agent_id = $1", &[&agent_id, &at])?;
        Ok(n > 0)
    }

    fn agents_list(&self, p: &AgentListParams) -> Result<Vec<Agent>> {
        let sql = format!(
            "SELECT {AGENT_COLUMNS} FROM agents WHERE ($1::boolean OR registered) \
             AND ($2::text IS NULL OR role = $2) AND ($3::text IS NULL OR status = $3) ORDER BY agent_id"
        );
        self.map(&sql, &[&p.include_unregistered, &p.role, &p.status.map(|s| s.as_str())], rows::agent)
    }

    fn agents_registered(&self, except: &str) -> Result<Vec<String>> {
        self.map("SELECT agent_id FROM agents WHERE registered AND agent_id <> $1 ORDER BY agent_id", &[&except], |r| {
            r.s(0)
        })
    }

    fn setting(&self, key: &str) -> Result<Option<String>> {
        match self.cached(|c| c.setting(key)) {
            None => self.map_one("SELECT value FROM settings WHERE key = $1", &[&key], |r| r.s(0)),
            Some(Some(value)) => Ok(value),
            Some(None) => {
                let all = self.map("SELECT key, value FROM settings", &[], |r| Ok((r.s(0)?, r.s(1)?)))?;
                self.cached(|c| c.settings_read(all.into_iter().collect()));
                self.setting(key)
            }
        }
    }

    fn setting_put(&mut self, key: &str, value: &str) -> Result<()> {
        self.exec(
            "INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            &[&key, &value],
        )?;
        self.cached(|c| c.setting_written(key, value));
        Ok(())
    }

    fn credential_hash(&self, agent_id: &str) -> Result<Option<String>> {
        self.map_one("SELECT secret_hash FROM agent_credentials WHERE agent_id = $1", &[&agent_id], |r| r.s(0))
    }

    fn credential_put(&mut self, agent_id: &str, hash: &str, at: Ts) -> Result<()> {
        self.exec(
            "INSERT INTO agent_credentials (agent_id, secret_hash, created_at) VALUES ($1, $2, $3) \
             ON CONFLICT (agent_id) DO UPDATE SET secret_hash = excluded.secret_hash, created_at = excluded.created_at",
            &[&agent_id, &hash, &ts_text(at)],
        )?;
        Ok(())
    }
}

impl Reservations for PgTx<'_> {
    fn reservations_active(&self) -> Result<Vec<StoredReservation>> {
        let sql = format!(
            "SELECT {RESERVATION_COLUMNS} FROM reservations WHERE state = 'active' ORDER BY scope, reservation_id"
        );
        self.map(&sql, &[], rows::reservation)
    }

    fn reservation_insert(&mut self, r: &Reservation) -> Result<()> {
        self.exec(
            &format!(
                "INSERT INTO reservations ({RESERVATION_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
            ),
            &[
                &r.reservation_id,
                &r.scope,
                &r.agent_id,
                &r.task_id,
                &r.shared,
                &r.state.as_str(),
                &r.generation,
                &r.created_at,
                &r.expires_at,
                &r.released_at,
            ],
        )?;
        Ok(())
    }

    fn reservation_save(&mut self, r: &Reservation) -> Result<()> {
        self.exec(
            "UPDATE reservations SET state = $2, task_id = $3, expires_at = $4, released_at = $5 \
             WHERE reservation_id = $1",
            &[&r.reservation_id, &r.state.as_str(), &r.task_id, &r.expires_at, &r.released_at],
        )?;
        Ok(())
    }

    fn reservation_max_generation(&self, scope: &str) -> Result<i64> {
        let g = self.map_one(
            "SELECT COALESCE(MAX(generation), 0)::bigint FROM reservations WHERE scope = $1",
            &[&scope],
            |r| r.i(0),
        )?;
        Ok(g.unwrap_or(0))
    }

    fn reservations_list(&self, q: &ReservationQuery) -> Result<Vec<StoredReservation>> {
        let mut clauses = Vec::new();
        let mut args = Args::default();
        if !q.include_history {
            clauses.push("state = 'active'".to_string());
        }
        for (col, v) in [("agent_id", &q.agent), ("task_id", &q.task_id)] {
            if let Some(v) = v {
                clauses.push(format!("{col} = {}", args.push(v.clone())));
            }
        }
        let filter = if clauses.is_empty() { String::new() } else { format!("WHERE {}", clauses.join(" AND ")) };
        let sql = format!(
            "SELECT {RESERVATION_COLUMNS} FROM reservations {filter} ORDER BY created_at DESC, reservation_id DESC"
        );
        self.map(&sql, &args.refs(), rows::reservation)
    }

    fn reservation_counts(&self, task_id: Option<&str>, agent: Option<&str>, now: Ts) -> Result<ReservationCounts> {
        let groups = self.map(
            "SELECT state, expires_at <= $3, COUNT(*)::bigint FROM reservations \
             WHERE ($1::text IS NULL OR task_id = $1) AND ($2::text IS NULL OR agent_id = $2) GROUP BY 1, 2",
            &[&task_id, &agent, &ts_text(now)],
            |r| Ok((r.p::<ReservationState>(0)?, r.b(1)?, r.i(2)? as u64)),
        )?;
        Ok(assemble::reservation_counts(groups))
    }
}

impl Peers for PgTx<'_> {
    fn peer_link(&mut self, task_id: &str, peer_task_id: &str, at: Ts) -> Result<bool> {
        let now = ts_text(at);
        let sql = "INSERT INTO peers (task_id, peer_task_id, created_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING";
        let added =
            self.exec(sql, &[&task_id, &peer_task_id, &now])? + self.exec(sql, &[&peer_task_id, &task_id, &now])?;
        Ok(added > 0)
    }

    fn peers_of(&self, task_id: &str) -> Result<Vec<String>> {
        self.map("SELECT peer_task_id FROM peers WHERE task_id = $1 ORDER BY peer_task_id", &[&task_id], |r| r.s(0))
    }
}
