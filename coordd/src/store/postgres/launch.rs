//! Launched sessions on PostgreSQL (the SQL of `store::sqlite::launch`): the
//! `launch_sessions` table (`launch.*`).

use coord_proto::types::{LaunchSession, RunBudget, SessionListParams, SessionUsage};

use super::tx::{Args, PgTx};
use crate::error::Result;
use crate::store::repos::Launches;
use crate::store::rows::{self, LAUNCH_COLUMNS};

impl Launches for PgTx<'_> {
    fn launch_insert(&mut self, s: &LaunchSession) -> Result<bool> {
        let attempt = i64::from(s.attempt);
        let (exit_code, signal) = (s.exit_code.map(i64::from), s.signal.map(i64::from));
        self.exec(
            &format!(
                "INSERT INTO launch_sessions ({LAUNCH_COLUMNS}) SELECT \
                 $1, $2, $3, $4::BIGINT, $5, $6, $7, $8::BIGINT, $9, $10, $11, $12, $13, $14, $15, $16, $17::BIGINT, \
                 $18::BIGINT, $19, $20, $21 \
                 WHERE NOT EXISTS (SELECT 1 FROM launch_sessions WHERE thread_id = $5 AND state = 'running')"
            ),
            &[
                &s.session_id,
                &s.run_id,
                &s.task_id,
                &attempt,
                &s.thread_id,
                &s.agent,
                &s.client,
                &s.pid,
                &s.host,
                &s.launcher,
                &s.cwd,
                &s.log_path,
                &s.tmux_window,
                &s.state.as_str(),
                &s.started_at,
                &s.ended_at,
                &exit_code,
                &signal,
                &s.reason,
                &s.log_tail,
                &s.mode.as_str(),
            ],
        )
        .map(|n| n == 1)
    }

    fn launch_session(&self, session_id: &str) -> Result<Option<LaunchSession>> {
        let sql = format!("SELECT {LAUNCH_COLUMNS} FROM launch_sessions WHERE session_id = $1");
        self.map_one(&sql, &[&session_id], rows::launch)
    }

    fn launch_save(&mut self, s: &LaunchSession) -> Result<()> {
        let (exit_code, signal) = (s.exit_code.map(i64::from), s.signal.map(i64::from));
        self.exec(
            "UPDATE launch_sessions SET state = $2, ended_at = $3, exit_code = $4, signal = $5, reason = $6, \
             log_tail = $7 WHERE session_id = $1",
            &[&s.session_id, &s.state.as_str(), &s.ended_at, &exit_code, &signal, &s.reason, &s.log_tail],
        )?;
        Ok(())
    }

    fn launch_list(&self, q: &SessionListParams) -> Result<Vec<LaunchSession>> {
        let mut args = Args::default();
        let mut clauses: Vec<String> = Vec::new();
        for (col, v) in [("run_id", &q.run_id), ("task_id", &q.task_id), ("launcher", &q.launcher)] {
            if let Some(v) = v {
                clauses.push(format!("{col} = {}", args.push(v.clone())));
            }
        }
        if q.running_only {
            clauses.push("state = 'running'".into());
        }
        let filter = if clauses.is_empty() { String::new() } else { format!("WHERE {}", clauses.join(" AND ")) };
        let sql = format!("SELECT {LAUNCH_COLUMNS} FROM launch_sessions {filter} ORDER BY started_at, session_id");
        self.map(&sql, &args.refs(), rows::launch)
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
