//! Usage and budgets of launched sessions on SQLite: the `launch_usage` and `run_budgets`
//! tables (`launch.usage`, `launch.budgetSet`). Costs are stored in millionths of a dollar.

use coord_proto::types::{RunBudget, SessionUsage, micro};
use rusqlite::params;

use super::tx::SqliteTx;
use crate::error::Result;
use crate::store::rows::{self, RUN_BUDGET_COLUMNS, USAGE_COLUMNS};

impl SqliteTx<'_> {
    pub(super) fn usage_row(&self, session_id: &str) -> Result<Option<SessionUsage>> {
        let sql = format!("SELECT {USAGE_COLUMNS} FROM launch_usage WHERE session_id = ?1");
        self.map_one(&sql, [session_id], rows::session_usage)
    }

    pub(super) fn usage_put(&mut self, u: &SessionUsage) -> Result<()> {
        let x = &u.usage;
        self.conn
            .prepare_cached(&format!(
                "INSERT OR REPLACE INTO launch_usage ({USAGE_COLUMNS}) VALUES \
                 (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)"
            ))?
            .execute(params![
                u.session_id,
                u.run_id,
                u.task_id,
                u.agent,
                x.input_tokens,
                x.output_tokens,
                x.cache_read_tokens,
                x.cache_write_tokens,
                micro(x.cost_usd),
                u.budget.max_cost_usd.map(micro),
                u.budget.max_tokens,
                u.updated_at
            ])?;
        Ok(())
    }

    pub(super) fn usage_rows_of_run(&self, run_id: &str) -> Result<Vec<SessionUsage>> {
        let sql = format!("SELECT {USAGE_COLUMNS} FROM launch_usage WHERE run_id = ?1 ORDER BY updated_at, session_id");
        self.map(&sql, [run_id], rows::session_usage)
    }

    pub(super) fn run_budget_row(&self, run_id: &str) -> Result<Option<RunBudget>> {
        let sql = format!("SELECT {RUN_BUDGET_COLUMNS} FROM run_budgets WHERE run_id = ?1");
        self.map_one(&sql, [run_id], rows::run_budget)
    }

    pub(super) fn run_budget_put(&mut self, b: &RunBudget) -> Result<()> {
        self.conn
            .prepare_cached(&format!(
                "INSERT OR REPLACE INTO run_budgets ({RUN_BUDGET_COLUMNS}) VALUES (?1, ?2, ?3, ?4)"
            ))?
            .execute(params![b.run_id, b.budget.max_cost_usd.map(micro), b.budget.max_tokens, b.reached_at])?;
        Ok(())
    }
}
