//! Usage and budgets of launched sessions on PostgreSQL (the SQL of
//! `store::sqlite::usage`): the `launch_usage` and `run_budgets` tables.

use coord_proto::types::{RunBudget, SessionUsage, micro};

use super::tx::PgTx;
use crate::error::Result;
use crate::store::rows::{self, RUN_BUDGET_COLUMNS, USAGE_COLUMNS};

impl PgTx<'_> {
    pub(super) fn usage_row(&self, session_id: &str) -> Result<Option<SessionUsage>> {
        let sql = format!("SELECT {USAGE_COLUMNS} FROM launch_usage WHERE session_id = $1");
        self.map_one(&sql, &[&session_id], rows::session_usage)
    }

    pub(super) fn usage_put(&mut self, u: &SessionUsage) -> Result<()> {
        let x = &u.usage;
        let (cost, max_cost) = (micro(x.cost_usd), u.budget.max_cost_usd.map(micro));
        self.exec(
            &format!(
                "INSERT INTO launch_usage ({USAGE_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) \
                 ON CONFLICT (session_id) DO UPDATE SET input_tokens = EXCLUDED.input_tokens, \
                 output_tokens = EXCLUDED.output_tokens, cache_read_tokens = EXCLUDED.cache_read_tokens, \
                 cache_write_tokens = EXCLUDED.cache_write_tokens, cost_micro_usd = EXCLUDED.cost_micro_usd, \
                 max_cost_micro_usd = EXCLUDED.max_cost_micro_usd, max_tokens = EXCLUDED.max_tokens, \
                 updated_at = EXCLUDED.updated_at"
            ),
            &[
                &u.session_id,
                &u.run_id,
                &u.task_id,
                &u.agent,
                &x.input_tokens,
                &x.output_tokens,
                &x.cache_read_tokens,
                &x.cache_write_tokens,
                &cost,
                &max_cost,
                &u.budget.max_tokens,
                &u.updated_at,
            ],
        )?;
        Ok(())
    }

    pub(super) fn usage_rows_of_run(&self, run_id: &str) -> Result<Vec<SessionUsage>> {
        let sql = format!("SELECT {USAGE_COLUMNS} FROM launch_usage WHERE run_id = $1 ORDER BY updated_at, session_id");
        self.map(&sql, &[&run_id], rows::session_usage)
    }

    pub(super) fn run_budget_row(&self, run_id: &str) -> Result<Option<RunBudget>> {
        let sql = format!("SELECT {RUN_BUDGET_COLUMNS} FROM run_budgets WHERE run_id = $1");
        self.map_one(&sql, &[&run_id], rows::run_budget)
    }

    pub(super) fn run_budget_put(&mut self, b: &RunBudget) -> Result<()> {
        let max_cost = b.budget.max_cost_usd.map(micro);
        self.exec(
            &format!(
                "INSERT INTO run_budgets ({RUN_BUDGET_COLUMNS}) VALUES ($1, $2, $3, $4) ON CONFLICT (run_id) DO UPDATE \
                 SET max_cost_micro_usd = EXCLUDED.max_cost_micro_usd, max_tokens = EXCLUDED.max_tokens, \
                 reached_at = EXCLUDED.reached_at"
            ),
            &[&b.run_id, &max_cost, &b.budget.max_tokens, &b.reached_at],
        )?;
        Ok(())
    }
}
