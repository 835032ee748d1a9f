//! orch's runs, tasks (with their dependency edges) and attempts on PostgreSQL (the SQL of
//! `store::sqlite::orch`; SQLite's rowid order is the `seq` identity column here).

use std::collections::HashMap;

use coord_proto::types::*;

use super::tx::PgTx;
use crate::error::Result;
use crate::store::assemble;
use crate::store::repos::{Attempts, Merges, RetryState, Runs, Tasks, Within};
use crate::store::rows::{self, ATTEMPT_COLUMNS, Cols, RUN_COLUMNS, TASK_COLUMNS};

impl Runs for PgTx<'_> {
    fn run(&self, run_id: &str) -> Result<Option<Run>> {
        self.map_one(&format!("SELECT {RUN_COLUMNS} FROM runs WHERE run_id = $1"), &[&run_id], rows::run)
    }

    fn run_insert(&mut self, r: &Run) -> Result<()> {
        self.exec(
            &format!(
                "INSERT INTO runs ({RUN_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, \
                 $15)"
            ),
            &[
                &r.run_id,
                &r.goal,
                &r.status.as_str(),
                &r.created_by,
                &i64::from(r.auto_retry),
                &r.created_at,
                &r.updated_at,
                &r.auto_merge,
                &r.repo,
                &r.base_branch,
                &r.base_rev,
                &r.integration_branch,
                &r.verify,
                &r.require_approval,
                &i64::from(r.merge_retries),
            ],
        )?;
        Ok(())
    }

    fn run_save(&mut self, r: &Run) -> Result<()> {
        self.exec(
            "UPDATE runs SET status = $2, updated_at = $3 WHERE run_id = $1",
            &[&r.run_id, &r.status.as_str(), &r.updated_at],
        )?;
        Ok(())
    }

    fn runs_list(&self) -> Result<Vec<Run>> {
        self.map(&format!("SELECT {RUN_COLUMNS} FROM runs ORDER BY created_at, run_id"), &[], rows::run)
    }

    fn runs_count(&self) -> Result<i64> {
        Ok(self.map_one("SELECT COUNT(*)::bigint FROM runs", &[], |r| r.i(0))?.unwrap_or(0))
    }
}

impl Tasks for PgTx<'_> {
    fn task(&self, run_id: &str, task_id: &str) -> Result<Option<Task>> {
        let sql = format!("SELECT {TASK_COLUMNS} FROM tasks t WHERE t.run_id = $1 AND t.task_id = $2");
        let task = self.map_one(&sql, &[&run_id, &task_id], rows::task)?;
        Ok(assemble::with_deps(self, task.into_iter().collect())?.pop())
    }

    fn task_insert(&mut self, t: &Task) -> Result<()> {
        self.exec(
            "INSERT INTO tasks (run_id, task_id, title, body, acceptance, priority, prio_rank, assign_to, role, \
             kind, max_attempts, status, attempt, created_at, updated_at, merge_state, merge_commit, resolves, verify) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)",
            &[
                &t.run_id,
                &t.task_id,
                &t.title,
                &t.body,
                &t.acceptance,
                &t.priority.as_str(),
                &t.priority.rank(),
                &t.assign_to,
                &t.role,
                &t.kind.as_str(),
                &i64::from(t.max_attempts),
                &t.status.as_str(),
                &i64::from(t.attempt),
                &t.created_at,
                &t.updated_at,
                &t.merge_state.map(|m| m.as_str()),
                &t.merge_commit,
                &t.resolves,
                &t.verify,
            ],
        )?;
        for d in &t.depends_on {
            self.task_dep_add(&t.run_id, &t.task_id, d)?;
        }
        Ok(())
    }

    fn task_save(&mut self, t: &Task) -> Result<()> {
        self.exec(
            "UPDATE tasks SET status = $3, attempt = $4, updated_at = $5 WHERE run_id = $1 AND task_id = $2",
            &[&t.run_id, &t.task_id, &t.status.as_str(), &i64::from(t.attempt), &t.updated_at],
        )?;
        Ok(())
    }

    fn run_tasks(&self, run_id: &str) -> Result<Vec<Task>> {
        let sql = format!("SELECT {TASK_COLUMNS} FROM tasks t WHERE t.run_id = $1 ORDER BY t.seq");
        let mut tasks = self.map(&sql, &[&run_id], rows::task)?;
        let mut deps: HashMap<String, Vec<String>> = HashMap::new();
        let edges = self.map(
            "SELECT task_id, depends_on FROM task_deps WHERE run_id = $1 ORDER BY depends_on",
            &[&run_id],
            |r| Ok((r.s(0)?, r.s(1)?)),
        )?;
        for (t, d) in edges {
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
            "SELECT {TASK_COLUMNS} FROM tasks t WHERE t.run_id = $1 \
             AND t.seq > COALESCE((SELECT seq FROM tasks WHERE run_id = $1 AND task_id = $2::text), 0) \
             AND ($3 = '' OR position(',' || t.status || ',' in $3) > 0) ORDER BY t.seq LIMIT {limit}"
        );
        let set = assemble::status_set(statuses);
        let read = self.map_within(&sql, &[&run_id, &after, &set], max_bytes, rows::task, None)?;
        read.and_then(|tasks| assemble::with_deps(self, tasks))
    }

    fn tasks_ready(&self, run_id: &str, limit: u32) -> Result<Vec<Task>> {
        let sql = format!(
            "SELECT {TASK_COLUMNS} FROM tasks t WHERE t.run_id = $1 AND t.status = 'ready' \
             ORDER BY t.prio_rank DESC, t.seq LIMIT {limit}"
        );
        let tasks = self.map(&sql, &[&run_id], rows::task)?;
        assemble::with_deps(self, tasks)
    }

    fn task_deps(&self, run_id: &str, task_id: &str) -> Result<Vec<String>> {
        self.map(
            "SELECT depends_on FROM task_deps WHERE run_id = $1 AND task_id = $2 ORDER BY depends_on",
            &[&run_id, &task_id],
            |r| r.s(0),
        )
    }

    fn task_dependents(&self, run_id: &str, task_id: &str) -> Result<Vec<String>> {
        self.map(
            "SELECT task_id FROM task_deps WHERE run_id = $1 AND depends_on = $2 ORDER BY task_id",
            &[&run_id, &task_id],
            |r| r.s(0),
        )
    }

    fn task_dep_add(&mut self, run_id: &str, task_id: &str, on: &str) -> Result<()> {
        self.exec(
            "INSERT INTO task_deps (run_id, task_id, depends_on) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
            &[&run_id, &task_id, &on],
        )?;
        Ok(())
    }

    fn task_dep_remove(&mut self, run_id: &str, task_id: &str, on: &str) -> Result<bool> {
        let n = self.exec(
            "DELETE FROM task_deps WHERE run_id = $1 AND task_id = $2 AND depends_on = $3",
            &[&run_id, &task_id, &on],
        )?;
        Ok(n > 0)
    }

    fn task_retry(&self, run_id: &str, task_id: &str) -> Result<RetryState> {
        let r = self.map_one(
            "SELECT auto_retries, retry_pending FROM tasks WHERE run_id = $1 AND task_id = $2",
            &[&run_id, &task_id],
            |r| Ok(RetryState { auto_retries: r.u(0)?, pending: r.b(1)? }),
        )?;
        Ok(r.unwrap_or_default())
    }

    fn task_set_retry(&mut self, run_id: &str, task_id: &str, r: RetryState) -> Result<()> {
        self.exec(
            "UPDATE tasks SET auto_retries = $3, retry_pending = $4 WHERE run_id = $1 AND task_id = $2",
            &[&run_id, &task_id, &i64::from(r.auto_retries), &r.pending],
        )?;
        Ok(())
    }

    fn tasks_retry_pending(&self) -> Result<Vec<(String, String)>> {
        self.map("SELECT run_id, task_id FROM tasks WHERE retry_pending ORDER BY run_id, task_id", &[], |r| {
            Ok((r.s(0)?, r.s(1)?))
        })
    }

    fn run_has_task(&self, run_id: &str, statuses: &[TaskStatus], retry_pending: Option<bool>) -> Result<bool> {
        let statuses: Vec<String> = statuses.iter().map(|s| s.as_str().to_string()).collect();
        let found = self.row(
            "SELECT 1 FROM tasks WHERE run_id = $1 AND status = ANY($2) \
             AND ($3::boolean IS NULL OR retry_pending = $3) LIMIT 1",
            &[&run_id, &statuses, &retry_pending],
        )?;
        Ok(found.is_some())
    }

    fn run_task_counts(&self, run_id: &str) -> Result<(i64, i64, i64)> {
        let c = self.map_one(
            "SELECT COUNT(*)::bigint, (COUNT(*) FILTER (WHERE status = 'done'))::bigint, \
             (COUNT(*) FILTER (WHERE status = 'failed'))::bigint FROM tasks WHERE run_id = $1",
            &[&run_id],
            |r| Ok((r.i(0)?, r.i(1)?, r.i(2)?)),
        )?;
        Ok(c.unwrap_or((0, 0, 0)))
    }

    fn task_update(&mut self, t: &Task) -> Result<()> {
        self.exec(
            "UPDATE tasks SET title = $3, body = $4, acceptance = $5, priority = $6, prio_rank = $7, \
             assign_to = $8, role = $9, kind = $10, max_attempts = $11, updated_at = $12 \
             WHERE run_id = $1 AND task_id = $2",
            &[
                &t.run_id,
                &t.task_id,
                &t.title,
                &t.body,
                &t.acceptance,
                &t.priority.as_str(),
                &t.priority.rank(),
                &t.assign_to,
                &t.role,
                &t.kind.as_str(),
                &i64::from(t.max_attempts),
                &t.updated_at,
            ],
        )?;
        Ok(())
    }

    fn task_delete(&mut self, run_id: &str, task_id: &str) -> Result<()> {
        self.exec(
            "DELETE FROM task_deps WHERE run_id = $1 AND (task_id = $2 OR depends_on = $2)",
            &[&run_id, &task_id],
        )?;
        self.exec("DELETE FROM tasks WHERE run_id = $1 AND task_id = $2", &[&run_id, &task_id])?;
        Ok(())
    }
}

impl Merges for PgTx<'_> {
    fn run_set_integration(&mut self, r: &Run) -> Result<()> {
        self.exec(
            "UPDATE runs SET repo = $2, base_branch = $3, base_rev = $4, integration_branch = $5 WHERE run_id = $1",
            &[&r.run_id, &r.repo, &r.base_branch, &r.base_rev, &r.integration_branch],
        )?;
        Ok(())
    }

    fn task_set_merge(&mut self, t: &Task) -> Result<()> {
        self.exec(
            "UPDATE tasks SET merge_state = $3, merge_commit = $4 WHERE run_id = $1 AND task_id = $2",
            &[&t.run_id, &t.task_id, &t.merge_state.map(|m| m.as_str()), &t.merge_commit],
        )?;
        Ok(())
    }

    fn tasks_auto_merge_pending(&self) -> Result<Vec<(String, String)>> {
        self.map(
            "SELECT t.run_id, t.task_id FROM tasks t JOIN runs r ON r.run_id = t.run_id \
             WHERE t.merge_state = 'pending' AND r.auto_merge ORDER BY t.seq",
            &[],
            |r| Ok((r.s(0)?, r.s(1)?)),
        )
    }

    fn run_has_unmerged(&self, run_id: &str) -> Result<bool> {
        let sql = "SELECT 1 FROM tasks WHERE run_id = $1 AND merge_state IN ('pending', 'conflict') LIMIT 1";
        Ok(self.row(sql, &[&run_id])?.is_some())
    }
}

impl Attempts for PgTx<'_> {
    fn attempts_of(&self, run_id: &str, task_id: &str) -> Result<Vec<Attempt>> {
        let sql = format!("SELECT {ATTEMPT_COLUMNS} FROM attempts WHERE run_id = $1 AND task_id = $2 ORDER BY attempt");
        self.map(&sql, &[&run_id, &task_id], rows::attempt)
    }

    fn attempt(&self, run_id: &str, task_id: &str, attempt: u32) -> Result<Option<Attempt>> {
        let sql = format!("SELECT {ATTEMPT_COLUMNS} FROM attempts WHERE run_id = $1 AND task_id = $2 AND attempt = $3");
        self.map_one(&sql, &[&run_id, &task_id, &i64::from(attempt)], rows::attempt)
    }

    fn attempt_by_thread(&self, thread_id: &str) -> Result<Option<Attempt>> {
        let sql = format!("SELECT {ATTEMPT_COLUMNS} FROM attempts WHERE thread_id = $1");
        self.map_one(&sql, &[&thread_id], rows::attempt)
    }

    fn attempt_insert(&mut self, a: &Attempt) -> Result<()> {
        self.exec(
            &format!(
                "INSERT INTO attempts ({ATTEMPT_COLUMNS}) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)"
            ),
            &[
                &a.run_id,
                &a.task_id,
                &i64::from(a.attempt),
                &a.thread_id,
                &a.worker,
                &a.status.as_str(),
                &a.repo,
                &a.worktree_path,
                &a.branch,
                &a.base_rev,
                &a.base_branch,
                &a.previous_thread_id,
                &a.started_at,
                &a.ended_at,
                &a.host,
            ],
        )?;
        Ok(())
    }

    fn attempt_save(&mut self, a: &Attempt) -> Result<()> {
        self.exec(
            "UPDATE attempts SET status = $4, ended_at = $5 WHERE run_id = $1 AND task_id = $2 AND attempt = $3",
            &[&a.run_id, &a.task_id, &i64::from(a.attempt), &a.status.as_str(), &a.ended_at],
        )?;
        Ok(())
    }

    fn attempts_with_worktree(&self, run_id: Option<&str>) -> Result<Vec<Attempt>> {
        let sql = format!(
            "SELECT {ATTEMPT_COLUMNS} FROM attempts WHERE worktree_path IS NOT NULL \
             AND ($1::text IS NULL OR run_id = $1) ORDER BY run_id, task_id, attempt"
        );
        self.map(&sql, &[&run_id], rows::attempt)
    }
}
