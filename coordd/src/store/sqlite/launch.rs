//! Launched sessions on SQLite: the `launch_sessions` table (`launch.*`).

use coord_proto::types::{LaunchSession, RunBudget, SessionListParams, SessionUsage};
use rusqlite::{params, params_from_iter, types::Value as SqlValue};

use super::tx::SqliteTx;
use crate::error::Result;
use crate::store::repos::Launches;
use crate::store::rows::{self, LAUNCH_COLUMNS};

impl Launches for SqliteTx<'_> {
    fn launch_insert(&mut self, s: &LaunchSession) -> Result<bool> {
        self.conn
            .prepare_cached(&format!(
                "INSERT INTO launch_sessions ({LAUNCH_COLUMNS}) SELECT \
                 ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21 \
                 WHERE NOT EXISTS (SELECT 1 FROM launch_sessions WHERE thread_id = ?5 AND state = 'running')"
            ))?
            .execute(params![
                s.session_id,
                s.run_id,
                s.task_id,
                s.attempt,
                s.thread_id,
                s.agent,
                s.client,
                s.pid,
                s.host,
                s.launcher,
                s.cwd,
                s.log_path,
                s.tmux_window,
                s.state.as_str(),
                s.started_at,
                s.ended_at,
                s.exit_code,
                s.signal,
                s.reason,
                s.log_tail,
                s.mode.as_str()
            ])
            .map(|n| n == 1)
            .map_err(Into::into)
    }

    fn launch_session(&self, session_id: &str) -> Result<Option<LaunchSession>> {
        let sql = format!("SELECT {LAUNCH_COLUMNS} FROM launch_sessions WHERE session_id = ?1");
        self.map_one(&sql, [session_id], rows::launch)
    }

    fn launch_save(&mut self, s: &LaunchSession) -> Result<()> {
        self.conn
            .prepare_cached(
                "UPDATE launch_sessions SET state = ?2, ended_at = ?3, exit_code = ?4, signal = ?5, reason = ?6, \
                 log_tail = ?7 WHERE session_id = ?1",
            )?
            .execute(params![
                s.session_id,
                s.state.as_str(),
                s.ended_at,
                s.exit_code,
                s.signal,
                s.reason,
                s.log_tail
            ])?;
        Ok(())
    }

    fn launch_list(&self, q: &SessionListParams) -> Result<Vec<LaunchSession>> {
        let mut args: Vec<SqlValue> = Vec::new();
        let mut clauses: Vec<String> = Vec::new();
        for (col, v) in [("run_id", &q.run_id), ("task_id", &q.task_id), ("launcher", &q.launcher)] {
            if let Some(v) = v {
                args.push(SqlValue::Text(v.clone()));
                clauses.push(format!("{col} = ?{}", args.len()));
            }
        }
        if q.running_only {
            clauses.push("state = 'running'".into());
        }
        let filter = if clauses.is_empty() { String::new() } else { format!("WHERE {}", clauses.join(" AND ")) };
        let sql = format!("SELECT {LAUNCH_COLUMNS} FROM launch_sessions {filter} ORDER BY started_at, session_id");
        self.map(&sql, params_from_iter(args), rows::launch)
    }

    fn usage(&self, session_id: &str) -> Result<Option<SessionUsage>> {
        self.usage_row(session_id)
    }

    fn usage_save(&mut self, u: &SessionUsage) -> Result<()> {
        self.usage_put(u)
    }

    fn usage_of_run(&self, run_id: &str) -> Result<Vec<SessionUsage>> {
        self.usage_rows_of_run(run_id)
    }

    fn run_budget(&self, run_id: &str) -> Result<Option<RunBudget>> {
        self.run_budget_row(run_id)
    }

    fn run_budget_save(&mut self, b: &RunBudget) -> Result<()> {
        self.run_budget_put(b)
    }
}
