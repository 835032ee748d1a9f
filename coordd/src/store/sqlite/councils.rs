//! orch's council reviews and their members on SQLite.

use rusqlite::params;

use super::tx::SqliteTx;
use crate::error::Result;
use crate::store::repos::{CouncilRow, Councils, MemberRow};
use crate::store::rows::{self, COUNCIL_COLUMNS, MEMBER_COLUMNS};

impl Councils for SqliteTx<'_> {
    fn council(&self, run_id: &str, council_id: &str) -> Result<Option<CouncilRow>> {
        let sql = format!("SELECT {COUNCIL_COLUMNS} FROM councils WHERE run_id = ?1 AND council_id = ?2");
        self.map_one(&sql, [run_id, council_id], rows::council)
    }

    fn council_insert(&mut self, c: &CouncilRow) -> Result<()> {
        self.conn
            .prepare_cached(&format!(
                "INSERT INTO councils ({COUNCIL_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
            ))?
            .execute(params![
                c.run_id,
                c.council_id,
                c.topic,
                c.body,
                c.phase.as_str(),
                c.groups_json,
                c.created_at,
                c.updated_at
            ])?;
        Ok(())
    }

    fn council_save(&mut self, c: &CouncilRow) -> Result<()> {
        self.conn
            .prepare_cached(
                "UPDATE councils SET phase = ?3, groups_json = ?4, updated_at = ?5 WHERE run_id = ?1 AND council_id = ?2",
            )?
            .execute(params![c.run_id, c.council_id, c.phase.as_str(), c.groups_json, c.updated_at])?;
        Ok(())
    }

    fn councils_count(&self, run_id: &str) -> Result<i64> {
        Ok(self.conn.query_row("SELECT COUNT(*) FROM councils WHERE run_id = ?1", [run_id], |r| r.get(0))?)
    }

    fn councils_open(&self, run_id: &str) -> Result<Vec<CouncilRow>> {
        let sql = format!(
            "SELECT {COUNCIL_COLUMNS} FROM councils WHERE run_id = ?1 AND phase IN ('brainstorm', 'voting') \
             ORDER BY created_at, council_id"
        );
        self.map(&sql, [run_id], rows::council)
    }

    fn member_insert(&mut self, m: &MemberRow) -> Result<()> {
        self.conn
            .prepare_cached(&format!(
                "INSERT INTO council_members ({MEMBER_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
            ))?
            .execute(params![
                m.run_id,
                m.council_id,
                m.reviewer,
                m.ord,
                m.brainstorm_thread_id,
                m.brainstorm_json,
                m.vote_thread_id,
                m.vote_json
            ])?;
        Ok(())
    }

    fn member_save(&mut self, m: &MemberRow) -> Result<()> {
        self.conn
            .prepare_cached(
                "UPDATE council_members SET brainstorm_json = ?4, vote_thread_id = ?5, vote_json = ?6 \
                 WHERE run_id = ?1 AND council_id = ?2 AND reviewer = ?3",
            )?
            .execute(params![m.run_id, m.council_id, m.reviewer, m.brainstorm_json, m.vote_thread_id, m.vote_json])?;
        Ok(())
    }

    fn members(&self, run_id: &str, council_id: &str) -> Result<Vec<MemberRow>> {
        let sql =
            format!("SELECT {MEMBER_COLUMNS} FROM council_members WHERE run_id = ?1 AND council_id = ?2 ORDER BY ord");
        self.map(&sql, [run_id, council_id], rows::member)
    }

    fn member_by_thread(&self, thread_id: &str) -> Result<Option<MemberRow>> {
        let sql = format!(
            "SELECT {MEMBER_COLUMNS} FROM council_members WHERE brainstorm_thread_id = ?1 OR vote_thread_id = ?1"
        );
        self.map_one(&sql, [thread_id], rows::member)
    }

    fn councils_of(&self, run_id: &str) -> Result<Vec<CouncilRow>> {
        let sql = format!("SELECT {COUNCIL_COLUMNS} FROM councils WHERE run_id = ?1 ORDER BY created_at, council_id");
        self.map(&sql, [run_id], rows::council)
    }
}
