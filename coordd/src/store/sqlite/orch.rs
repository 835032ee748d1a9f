//! orch's runs, tasks (with their dependency edges) and attempts on SQLite.

use std::collections::HashMap;

use coord_proto::types::*;
use rusqlite::{OptionalExtension, params, params_from_iter, types::Value as SqlValue};

use super::tx::{SqliteTx, marks};
use crate::error::Result;
use crate::store::assemble;
use crate::store::repos::{Attempts, Merges, RetryState, Runs, Tasks, Within};
use crate::store::rows::{self, ATTEMPT_COLUMNS, RUN_COLUMNS, TASK_COLUMNS};

impl Runs for SqliteTx<'_> {
    fn run(&self, run_id: &str) -> Result<Option<Run>> {
        let sql = format!("SELECT {RUN_COLUMNS} FROM runs WHERE run_id = ?1");
        self.map_one(&sql, [run_id], rows::run)
    }

    fn run_insert(&mut self, r: &Run) -> Result<()> {
        self.conn
            .prepare_cached(&format!(
                "INSERT INTO runs ({RUN_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)"
            ))?
            .execute(params![
                r.run_id,
                r.goal,
                r.status.as_str(),
                r.created_by,
                r.auto_retry,
                r.created_at,
                r.updated_at,
                r.auto_merge,
                r.repo,
                r.base_branch,
                r.base_rev,
                r.integration_branch,
                r.verify,
                r.require_approval,
                r.merge_retries,
            ])?;
        Ok(())
    }

    fn run_save(&mut self, r: &Run) -> Result<()> {
        self.conn
            .prepare_cached("UPDATE runs SET status = ?2, updated_at = ?3 WHERE run_id = ?1")?
            .execute(params![r.run_id, r.status.as_str(), r.updated_at])?;
        Ok(())
    }

    fn runs_list(&self) -> Result<Vec<Run>> {
        let sql = format!("SELECT {RUN_COLUMNS} FROM runs ORDER BY created_at, run_id");
        self.map(&sql, [], rows::run)
    }

    fn runs_count(&self) -> Result<i64> {
        Ok(self.conn.query_row("SELECT COUNT(*) FROM runs", [], |r| r.get(0))?)
    }
}

impl Tasks for SqliteTx<'_> {
    fn task(&self, run_id: &str, task_id: &str) -> Result<Option<Task>> {
        let sql = format!("SELECT {TASK_COLUMNS} FROM tasks t WHERE t.run_id = ?1 AND t.task_id = ?2");
        let task = self.map_one(&sql, [run_id, task_id], rows::task)?;
        Ok(assemble::with_deps(self, task.into_iter().collect())?.pop())
    }

    fn task_insert(&mut self, t: &Task) -> Result<()> {
        self.conn
            .prepare_cached(
                "INSERT INTO tasks (run_id, task_id, title, body, acceptance, priority, prio_rank, assign_to, role, \
                 kind, max_attempts, status, attempt, created_at, updated_at, merge_state, merge_commit, resolves, \
                 verify) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)",
            )?
            .execute(params![
                t.run_id,
                t.task_id,
                t.title,
                t.body,
                t.acceptance,
                t.priority.as_str(),
                t.priority.rank(),
                t.assign_to,
                t.role,
                t.kind.as_str(),
                t.max_attempts,
                t.status.as_str(),
                t.attempt,
                t.created_at,
                t.updated_at,
                t.merge_state.map(|m| m.as_str()),
                t.merge_commit,
                t.resolves,
                t.verify,
            ])?;
        for d in &t.depends_on {
            self.task_dep_add(&t.run_id, &t.task_id, d)?;
        }
        Ok(())
    }

    fn task_save(&mut self, t: &Task) -> Result<()> {
        self.conn
            .prepare_cached(
                "UPDATE tasks SET status = ?3, attempt = ?4, updated_at = ?5 WHERE run_id = ?1 AND task_id = ?2",
            )?
            .execute(params![t.run_id, t.task_id, t.status.as_str(), t.attempt, t.updated_at])?;
        Ok(())
    }

    fn run_tasks(&self, run_id: &str) -> Result<Vec<Task>> {
        let sql = format!("SELECT {TASK_COLUMNS} FROM tasks t WHERE t.run_id = ?1 ORDER BY t.rowid");
        let mut tasks: Vec<Task> = self.map(&sql, [run_id], rows::task)?;
        let mut deps: HashMap<String, Vec<String>> = HashMap::new();
        let mut stmt = self
            .conn
            .prepare_cached("SELECT task_id, depends_on FROM task_deps WHERE run_id = ?1 ORDER BY depends_on")?;
        for row in stmt.query_map([run_id], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))? {
            let (t, d) = row?;
            deps.entry(t).or_default().push(d);
        }
        for t in &mut tasks {
            t.depends_on = deps.remove(&t.task_id).unwrap_or_default();
        }
        Ok(tasks)
    }

    fn tasks_page(
        &self,
        run_id: &str,
        after: Option<&str>,
        statuses: &[TaskStatus],
        limit: u32,
        max_bytes: usize,
    ) -> Result<Within<Task>> {
        let sql = format!(
            "SELECT {TASK_COLUMNS} FROM tasks t WHERE t.run_id = ?1 \
             AND t.rowid > COALESCE((SELECT rowid FROM tasks WHERE run_id = ?1 AND task_id = ?2), 0) \
             AND (?3 = '' OR instr(?3, ',' || t.status || ',') > 0) ORDER BY t.rowid LIMIT {limit}"
        );
        let read =
            self.map_within(&sql, params![run_id, after, assemble::status_set(statuses)], max_bytes, rows::task, None)?;
        read.and_then(|tasks| assemble::with_deps(self, tasks))
    }

    fn tasks_ready(&self, run_id: &str, limit: u32) -> Result<Vec<Task>> {
        // Served by idx_tasks_queue (run_id, status, prio_rank DESC), whose rowid order is
        // creation order: a seek, no sort.
        let sql = format!(
            "SELECT {TASK_COLUMNS} FROM tasks t WHERE t.run_id = ?1 AND t.status = 'ready' \
             ORDER BY t.prio_rank DESC, t.rowid LIMIT {limit}"
        );
        let tasks = self.map(&sql, [run_id], rows::task)?;
        assemble::with_deps(self, tasks)
    }

    fn task_deps(&self, run_id: &str, task_id: &str) -> Result<Vec<String>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT depends_on FROM task_deps WHERE run_id = ?1 AND task_id = ?2 ORDER BY depends_on",
        )?;
        Ok(stmt.query_map([run_id, task_id], |r| r.get(0))?.collect::<Result<_, _>>()?)
    }

    fn task_dependents(&self, run_id: &str, task_id: &str) -> Result<Vec<String>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT task_id FROM task_deps WHERE run_id = ?1 AND depends_on = ?2 ORDER BY task_id")?;
        Ok(stmt.query_map([run_id, task_id], |r| r.get(0))?.collect::<Result<_, _>>()?)
    }

    fn task_dep_add(&mut self, run_id: &str, task_id: &str, on: &str) -> Result<()> {
        self.conn
            .prepare_cached("INSERT OR IGNORE INTO task_deps (run_id, task_id, depends_on) VALUES (?1, ?2, ?3)")?
            .execute([run_id, task_id, on])?;
        Ok(())
    }

    fn task_dep_remove(&mut self, run_id: &str, task_id: &str, on: &str) -> Result<bool> {
        let n = self
            .conn
            .prepare_cached("DELETE FROM task_deps WHERE run_id = ?1 AND task_id = ?2 AND depends_on = ?3")?
            .execute([run_id, task_id, on])?;
        Ok(n > 0)
    }

    fn task_retry(&self, run_id: &str, task_id: &str) -> Result<RetryState> {
        Ok(self
            .conn
            .prepare_cached("SELECT auto_retries, retry_pending FROM tasks WHERE run_id = ?1 AND task_id = ?2")?
            .query_row([run_id, task_id], |r| Ok(RetryState { auto_retries: r.get(0)?, pending: r.get(1)? }))
            .optional()?
            .unwrap_or_default())
    }

    fn task_set_retry(&mut self, run_id: &str, task_id: &str, r: RetryState) -> Result<()> {
        self.conn
            .prepare_cached(
                "UPDATE tasks SET auto_retries = ?3, retry_pending = ?4 WHERE run_id = ?1 AND task_id = ?2",
            )?
            .execute(params![run_id, task_id, r.auto_retries, r.pending])?;
        Ok(())
    }

    fn tasks_retry_pending(&self) -> Result<Vec<(String, String)>> {
        let mut stmt = self.conn.prepare_cached("SELECT run_id, task_id FROM tasks WHERE retry_pending = 1")?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    fn run_has_task(&self, run_id: &str, statuses: &[TaskStatus], retry_pending: Option<bool>) -> Result<bool> {
        let mut args: Vec<SqlValue> = vec![SqlValue::Text(run_id.into())];
        args.extend(statuses.iter().map(|s| SqlValue::Text(s.as_str().into())));
        let pending = match retry_pending {
            Some(p) => format!(" AND retry_pending = {}", i32::from(p)),
            None => String::new(),
        };
        let sql =
            format!("SELECT 1 FROM tasks WHERE run_id = ?1 AND status IN ({}){pending}", marks(2, statuses.len()));
        Ok(self.conn.prepare_cached(&sql)?.exists(params_from_iter(args))?)
    }

    fn run_task_counts(&self, run_id: &str) -> Result<(i64, i64, i64)> {
        Ok(self.conn.query_row(
            "SELECT COUNT(*), COALESCE(SUM(status = 'done'), 0), COALESCE(SUM(status = 'failed'), 0) \
             FROM tasks WHERE run_id = ?1",
            [run_id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )?)
    }

    fn task_update(&mut self, t: &Task) -> Result<()> {
        self.conn
            .prepare_cached(
                "UPDATE tasks SET title = ?3, body = ?4, acceptance = ?5, priority = ?6, prio_rank = ?7, \
                 assign_to = ?8, role = ?9, kind = ?10, max_attempts = ?11, updated_at = ?12 \
                 WHERE run_id = ?1 AND task_id = ?2",
            )?
            .execute(params![
                t.run_id,
                t.task_id,
                t.title,
                t.body,
                t.acceptance,
                t.priority.as_str(),
                t.priority.rank(),
                t.assign_to,
                t.role,
                t.kind.as_str(),
                t.max_attempts,
                t.updated_at,
            ])?;
        Ok(())
    }

    fn task_delete(&mut self, run_id: &str, task_id: &str) -> Result<()> {
        self.conn
            .prepare_cached("DELETE FROM task_deps WHERE run_id = ?1 AND (task_id = ?2 OR depends_on = ?2)")?
            .execute([run_id, task_id])?;
        self.conn.prepare_cached("DELETE FROM tasks WHERE run_id = ?1 AND task_id = ?2")?.execute([run_id, task_id])?;
        Ok(())
    }
}

impl Merges for SqliteTx<'_> {
    fn run_set_integration(&mut self, r: &Run) -> Result<()> {
        self.conn
            .prepare_cached(
                "UPDATE runs SET repo = ?2, base_branch = ?3, base_rev = ?4, integration_branch = ?5 WHERE run_id = ?1",
            )?
            .execute(params![r.run_id, r.repo, r.base_branch, r.base_rev, r.integration_branch])?;
        Ok(())
    }

    fn task_set_merge(&mut self, t: &Task) -> Result<()> {
        self.conn
            .prepare_cached("UPDATE tasks SET merge_state = ?3, merge_commit = ?4 WHERE run_id = ?1 AND task_id = ?2")?
            .execute(params![t.run_id, t.task_id, t.merge_state.map(|m| m.as_str()), t.merge_commit])?;
        Ok(())
    }

    fn tasks_auto_merge_pending(&self) -> Result<Vec<(String, String)>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT t.run_id, t.task_id FROM tasks t JOIN runs r ON r.run_id = t.run_id \
             WHERE t.merge_state = 'pending' AND r.auto_merge = 1 ORDER BY t.rowid",
        )?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    fn run_has_unmerged(&self, run_id: &str) -> Result<bool> {
        Ok(self
            .conn
            .prepare_cached("SELECT 1 FROM tasks WHERE run_id = ?1 AND merge_state IN ('pending', 'conflict') LIMIT 1")?
            .exists([run_id])?)
    }
}

impl SqliteTx<'_> {
    fn attempts(&self, sql_where: &str, args: Vec<SqlValue>) -> Result<Vec<Attempt>> {
        let sql = format!("SELECT {ATTEMPT_COLUMNS} FROM attempts WHERE {sql_where}");
        self.map(&sql, params_from_iter(args), rows::attempt)
    }
}

impl Attempts for SqliteTx<'_> {
    fn attempts_of(&self, run_id: &str, task_id: &str) -> Result<Vec<Attempt>> {
        let args = vec![SqlValue::Text(run_id.into()), SqlValue::Text(task_id.into())];
        self.attempts("run_id = ?1 AND task_id = ?2 ORDER BY attempt", args)
    }

    fn attempt(&self, run_id: &str, task_id: &str, attempt: u32) -> Result<Option<Attempt>> {
        let args =
            vec![SqlValue::Text(run_id.into()), SqlValue::Text(task_id.into()), SqlValue::Integer(attempt.into())];
        Ok(self.attempts("run_id = ?1 AND task_id = ?2 AND attempt = ?3", args)?.pop())
    }

    fn attempt_by_thread(&self, thread_id: &str) -> Result<Option<Attempt>> {
        Ok(self.attempts("thread_id = ?1", vec![SqlValue::Text(thread_id.into())])?.pop())
    }

    fn attempt_insert(&mut self, a: &Attempt) -> Result<()> {
        self.conn
            .prepare_cached(&format!(
                "INSERT INTO attempts ({ATTEMPT_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)"
            ))?
            .execute(params![
                a.run_id,
                a.task_id,
                a.attempt,
                a.thread_id,
                a.worker,
                a.status.as_str(),
                a.repo,
                a.worktree_path,
                a.branch,
                a.base_rev,
                a.base_branch,
                a.previous_thread_id,
                a.started_at,
                a.ended_at,
                a.host,
            ])?;
        Ok(())
    }

    fn attempt_save(&mut self, a: &Attempt) -> Result<()> {
        self.conn
            .prepare_cached(
                "UPDATE attempts SET status = ?4, ended_at = ?5 WHERE run_id = ?1 AND task_id = ?2 AND attempt = ?3",
            )?
            .execute(params![a.run_id, a.task_id, a.attempt, a.status.as_str(), a.ended_at])?;
        Ok(())
    }

    fn attempts_with_worktree(&self, run_id: Option<&str>) -> Result<Vec<Attempt>> {
        let arg = run_id.map_or(SqlValue::Null, |r| SqlValue::Text(r.into()));
        self.attempts(
            "worktree_path IS NOT NULL AND (?1 IS NULL OR run_id = ?1) ORDER BY run_id, task_id, attempt",
            vec![arg],
        )
    }
}
