//! The merge queue on PostgreSQL (the SQL of `store::sqlite::queue`).

use coord_proto::types::*;

use super::tx::PgTx;
use crate::error::Result;
use crate::store::merge_rows::{self, CANDIDATE_COLUMNS, COMMENT_COLUMNS};
use crate::store::repos::Queue;

fn state_names(states: &[QueueState]) -> Vec<String> {
    states.iter().map(|s| s.as_str().to_string()).collect()
}

impl Queue for PgTx<'_> {
    fn run_set_settings(&mut self, r: &Run) -> Result<()> {
        self.exec(
            "UPDATE runs SET verify = $2, require_approval = $3, auto_merge = $4, merge_retries = $5, \
             updated_at = $6 WHERE run_id = $1",
            &[&r.run_id, &r.verify, &r.require_approval, &r.auto_merge, &i64::from(r.merge_retries), &r.updated_at],
        )?;
        Ok(())
    }

    fn task_set_verify(&mut self, t: &Task) -> Result<()> {
        self.exec(
            "UPDATE tasks SET verify = $3, updated_at = $4 WHERE run_id = $1 AND task_id = $2",
            &[&t.run_id, &t.task_id, &t.verify, &t.updated_at],
        )?;
        Ok(())
    }

    fn candidate_put(&mut self, c: &MergeCandidate) -> Result<()> {
        self.exec(
            &format!(
                "INSERT INTO merge_queue ({CANDIDATE_COLUMNS}) VALUES \
                 ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17) \
                 ON CONFLICT (run_id, task_id, attempt) DO UPDATE SET branch = $4, state = $5, seq = $6, \
                 verify = $7, tip = $8, commit_id = $9, verifications = $10, exit_code = $11, output = $12, \
                 log_path = $13, approved_by = $14, reason = $15, updated_at = $17"
            ),
            &[
                &c.run_id,
                &c.task_id,
                &i64::from(c.attempt),
                &c.branch,
                &c.state.as_str(),
                &c.seq,
                &c.verify,
                &c.tip,
                &c.commit,
                &i64::from(c.verifications),
                &c.exit_code.map(i64::from),
                &c.output,
                &c.log_path,
                &c.approved_by,
                &c.reason,
                &c.created_at,
                &c.updated_at,
            ],
        )?;
        Ok(())
    }

    fn candidate(&self, run_id: &str, task_id: &str, attempt: u32) -> Result<Option<MergeCandidate>> {
        let sql =
            format!("SELECT {CANDIDATE_COLUMNS} FROM merge_queue WHERE run_id = $1 AND task_id = $2 AND attempt = $3");
        self.map_one(&sql, &[&run_id, &task_id, &i64::from(attempt)], merge_rows::candidate)
    }

    fn candidate_latest(&self, run_id: &str, task_id: &str) -> Result<Option<MergeCandidate>> {
        let sql = format!(
            "SELECT {CANDIDATE_COLUMNS} FROM merge_queue WHERE run_id = $1 AND task_id = $2 \
             ORDER BY attempt DESC LIMIT 1"
        );
        self.map_one(&sql, &[&run_id, &task_id], merge_rows::candidate)
    }

    fn candidates_in(&self, run_id: Option<&str>, states: &[QueueState]) -> Result<Vec<MergeCandidate>> {
        let sql = format!(
            "SELECT {CANDIDATE_COLUMNS} FROM merge_queue WHERE ($1::text IS NULL OR run_id = $1) \
             AND state = ANY($2) ORDER BY run_id, seq, created_at, task_id"
        );
        self.map(&sql, &[&run_id, &state_names(states)], merge_rows::candidate)
    }

    fn candidates_count(&self, run_id: &str, task_id: &str, states: &[QueueState]) -> Result<u32> {
        let n = self.map_one(
            "SELECT COUNT(*)::bigint FROM merge_queue WHERE run_id = $1 AND task_id = $2 AND state = ANY($3)",
            &[&run_id, &task_id, &state_names(states)],
            |r| r.i(0),
        )?;
        Ok(u32::try_from(n.unwrap_or(0)).unwrap_or(u32::MAX))
    }

    fn queue_last_seq(&self, run_id: &str) -> Result<i64> {
        let n =
            self.map_one("SELECT COALESCE(MAX(seq), 0)::bigint FROM merge_queue WHERE run_id = $1", &[&run_id], |r| {
                r.i(0)
            })?;
        Ok(n.unwrap_or(0))
    }

    fn comment_insert(&mut self, c: &ReviewComment) -> Result<()> {
        self.exec(
            &format!(
                "INSERT INTO review_comments ({COMMENT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"
            ),
            &[
                &c.comment_id,
                &c.run_id,
                &c.task_id,
                &i64::from(c.attempt),
                &c.path,
                &i64::from(c.line),
                &c.side,
                &c.body,
                &c.author,
                &c.created_at,
                &c.sent_in,
            ],
        )?;
        Ok(())
    }

    fn comments_of(&self, run_id: &str, task_id: &str, attempt: u32) -> Result<Vec<ReviewComment>> {
        let sql = format!(
            "SELECT {COMMENT_COLUMNS} FROM review_comments WHERE run_id = $1 AND task_id = $2 AND attempt = $3 \
             ORDER BY created_at, comment_id"
        );
        self.map(&sql, &[&run_id, &task_id, &i64::from(attempt)], merge_rows::comment)
    }

    fn comments_mark_sent(&mut self, run_id: &str, task_id: &str, attempt: u32, message_id: &str) -> Result<()> {
        self.exec(
            "UPDATE review_comments SET sent_in = $4 \
             WHERE run_id = $1 AND task_id = $2 AND attempt = $3 AND sent_in IS NULL",
            &[&run_id, &task_id, &i64::from(attempt), &message_id],
        )?;
        Ok(())
    }
}
