//! What the bridge knows of the budgets, as plain data: whether the run is at its budget,
//! why each session stopped for one was stopped, and the run's limits from the command
//! line. `budget.rs` acts on the budget events with them.

use std::collections::HashMap;

/// What the bridge knows of the budgets.
#[derive(Debug, Default)]
pub struct Budgets {
    /// The run is at its budget: nothing is started or dispatched.
    pub over: bool,
    /// At the run's budget, stop the running sessions too.
    pub hard: bool,
    /// Why each session stopped for a budget was stopped, by session id.
    pub(crate) reasons: HashMap<String, String>,
}

/// The run's budget from the command line (`--max-cost-usd`, `--max-tokens`).
#[derive(Debug, Default, Clone, Copy)]
pub struct RunLimits {
    pub max_cost_usd: Option<f64>,
    pub max_tokens: Option<i64>,
}

impl Budgets {
    pub fn new(hard: bool) -> Budgets {
        Budgets { hard, ..Budgets::default() }
    }

    /// The reason a session stopped for a budget ends with (`None`: not stopped for one).
    pub fn reason(&mut self, session_id: &str) -> Option<String> {
        self.reasons.remove(session_id)
    }
}

/// A `--max-cost-usd` value: finite and above 0.
pub use coord_proto::types::parse_dollars as dollars;
