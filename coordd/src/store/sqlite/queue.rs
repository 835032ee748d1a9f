//! The merge queue on SQLite: `merge_queue` (candidates), `review_comments`, and the run
//! and task settings they follow.

use coord_proto::types::*;
use rusqlite::{params, params_from_iter, types::Value as SqlValue};

use super::tx::SqliteTx;
use crate::error::Result;
use crate::store::merge_rows::{self, CANDIDATE_COLUMNS, COMMENT_COLUMNS};
use crate::store::repos::Queue;

/// `?n, ?n+1, …` for `states`, appended to `args`.
fn state_list(args: &mut Vec<SqlValue>, states: &[QueueState]) -> String {
    let mut marks = Vec::with_capacity(states.len());
    for s in states {
        args.push(SqlValue::Text(s.as_str().to_string()));
        marks.push(format!("?{}", args.len()));
    }
    marks.join(", ")
}

impl Queue for SqliteTx<'_> {
    fn run_set_settings(&mut self, r: &Run) -> Result<()> {
        self.conn
            .prepare_cached(
                "UPDATE runs SET verify = ?2, require_approval = ?3, auto_merge = ?4, merge_retries = ?5, \
                 updated_at = ?6 WHERE run_id = ?1",
            )?
            .execute(params![r.run_id, r.verify, r.require_approval, r.auto_merge, r.merge_retries, r.updated_at])?;
        Ok(())
    }

    fn task_set_verify(&mut self, t: &Task) -> Result<()> {
        self.conn
            .prepare_cached("UPDATE tasks SET verify = ?3, updated_at = ?4 WHERE run_id = ?1 AND task_id = ?2")?
            .execute(params![t.run_id, t.task_id, t.verify, t.updated_at])?;
        Ok(())
    }

    fn candidate_put(&mut self, c: &MergeCandidate) -> Result<()> {
        self.conn
            .prepare_cached(&format!(
                "INSERT OR REPLACE INTO merge_queue ({CANDIDATE_COLUMNS}) VALUES \
                 (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)"
            ))?
            .execute(params![
                c.run_id,
                c.task_id,
                c.attempt,
                c.branch,
                c.state.as_str(),
                c.seq,
                c.verify,
                c.tip,
                c.commit,
                c.verifications,
                c.exit_code,
                c.output,
                c.log_path,
                c.approved_by,
                c.reason,
                c.created_at,
                c.updated_at
            ])?;
        Ok(())
    }

    fn candidate(&self, run_id: &str, task_id: &str, attempt: u32) -> Result<Option<MergeCandidate>> {
        let sql =
            format!("SELECT {CANDIDATE_COLUMNS} FROM merge_queue WHERE run_id = ?1 AND task_id = ?2 AND attempt = ?3");
        self.map_one(&sql, params![run_id, task_id, attempt], merge_rows::candidate)
    }

    fn candidate_latest(&self, run_id: &str, task_id: &str) -> Result<Option<MergeCandidate>> {
        let sql = format!(
            "SELECT {CANDIDATE_COLUMNS} FROM merge_queue WHERE run_id = ?1 AND task_id = ?2 \
             ORDER BY attempt DESC LIMIT 1"
        );
        self.map_one(&sql, params![run_id, task_id], merge_rows::candidate)
    }

    fn candidates_in(&self, run_id: Option<&str>, states: &[QueueState]) -> Result<Vec<MergeCandidate>> {
        let mut args: Vec<SqlValue> = Vec::new();
        let run = match run_id {
            Some(r) => {
                args.push(SqlValue::Text(r.to_string()));
                "run_id = ?1 AND ".to_string()
            }
            None => String::new(),
        };
        let states = state_list(&mut args, states);
        let sql = format!(
            "SELECT {CANDIDATE_COLUMNS} FROM merge_queue WHERE {run}state IN ({states}) \
             ORDER BY run_id, seq, created_at, task_id"
        );
        self.map(&sql, params_from_iter(args), merge_rows::candidate)
    }

    fn candidates_count(&self, run_id: &str, task_id: &str, states: &[QueueState]) -> Result<u32> {
        let mut args = vec![SqlValue::Text(run_id.to_string()), SqlValue::Text(task_id.to_string())];
        let states = state_list(&mut args, states);
        let sql =
            format!("SELECT COUNT(*) FROM merge_queue WHERE run_id = ?1 AND task_id = ?2 AND state IN ({states})");
        let n: i64 = self.conn.prepare_cached(&sql)?.query_row(params_from_iter(args), |r| r.get(0))?;
        Ok(u32::try_from(n).unwrap_or(u32::MAX))
    }

    fn queue_last_seq(&self, run_id: &str) -> Result<i64> {
        let sql = "SELECT COALESCE(MAX(seq), 0) FROM merge_queue WHERE run_id = ?1";
        Ok(self.conn.prepare_cached(sql)?.query_row([run_id], |r| r.get(0))?)
    }

    fn comment_insert(&mut self, c: &ReviewComment) -> Result<()> {
        self.conn
            .prepare_cached(&format!(
                "INSERT INTO review_comments ({COMMENT_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"
            ))?
            .execute(params![
                c.comment_id,
                c.run_id,
                c.task_id,
                c.attempt,
                c.path,
                c.line,
                c.side,
                c.body,
                c.author,
                c.created_at,
                c.sent_in
            ])?;
        Ok(())
    }

    fn comments_of(&self, run_id: &str, task_id: &str, attempt: u32) -> Result<Vec<ReviewComment>> {
        let sql = format!(
            "SELECT {COMMENT_COLUMNS} FROM review_comments WHERE run_id = ?1 AND task_id = ?2 AND attempt = ?3 \
             ORDER BY created_at, comment_id"
        );
        self.map(&sql, params![run_id, task_id, attempt], merge_rows::comment)
    }

    fn comments_mark_sent(&mut self, run_id: &str, task_id: &str, attempt: u32, message_id: &str) -> Result<()> {
        self.conn
            .prepare_cached(
                "UPDATE review_comments SET sent_in = ?4 \
                 WHERE run_id = ?1 AND task_id = ?2 AND attempt = ?3 AND sent_in IS NULL",
            )?
            .execute(params![run_id, task_id, attempt, message_id])?;
        Ok(())
    }
}
