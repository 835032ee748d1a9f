//! Tokens, cost and budgets of launched sessions (`launch.usage`, `launch.budgetSet`,
//! `launch.usageShow`): what each session's model reported it used, summed per task,
//! agent and run, and the limits a run and a session may spend.

use serde::{Deserialize, Serialize};

/// The most a cost may be, in US dollars (a larger one is refused as bad input).
pub const MAX_COST_USD: f64 = 1.0e9;

/// The most a token count may be (a larger one is refused as bad input).
pub const MAX_TOKENS: i64 = 1 << 50;

/// Tokens and cost, as a session's model reports them. `input_tokens` excludes the tokens
/// read from or written to the prompt cache, which are counted apart (Claude Code's
/// `usage` reports them so; for Codex, whose `input_tokens` include `cached_input_tokens`,
/// a reporter subtracts them). Cost is kept to the millionth of a dollar.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Usage {
    /// Input tokens not read from or written to the cache.
    pub input_tokens: i64,
    /// Output tokens.
    pub output_tokens: i64,
    /// Input tokens read from the prompt cache.
    pub cache_read_tokens: i64,
    /// Input tokens written to the prompt cache.
    pub cache_write_tokens: i64,
    /// Cost in US dollars (0 when the client reports none).
    pub cost_usd: f64,
}

impl Usage {
    /// Every token counted against a `max_tokens` budget: input, output, cache reads and
    /// cache writes.
    pub fn tokens(&self) -> i64 {
        self.input_tokens + self.output_tokens + self.cache_read_tokens + self.cache_write_tokens
    }

    /// The sum of two usages (cost summed to the millionth of a dollar).
    pub fn plus(&self, o: &Usage) -> Usage {
        Usage {
            input_tokens: self.input_tokens.saturating_add(o.input_tokens),
            output_tokens: self.output_tokens.saturating_add(o.output_tokens),
            cache_read_tokens: self.cache_read_tokens.saturating_add(o.cache_read_tokens),
            cache_write_tokens: self.cache_write_tokens.saturating_add(o.cache_write_tokens),
            cost_usd: from_micro(micro(self.cost_usd).saturating_add(micro(o.cost_usd))),
        }
    }

    /// What was spent against which limits, in words: `$0.60 of $0.50, 1200 of 1000 tokens`
    /// (`$0.60, 1200 tokens, no limit` without one).
    pub fn spent(&self, b: &Budget) -> String {
        let mut parts = Vec::new();
        if let Some(m) = b.max_cost_usd {
            parts.push(format!("${:.2} of ${m:.2}", self.cost_usd));
        }
        if let Some(m) = b.max_tokens {
            parts.push(format!("{} of {m} tokens", self.tokens()));
        }
        if parts.is_empty() {
            return format!("${:.2}, {} tokens, no limit", self.cost_usd, self.tokens());
        }
        parts.join(", ")
    }

    /// Has this usage reached `budget` (either limit, when set)?
    pub fn reached(&self, budget: &Budget) -> bool {
        budget.max_cost_usd.is_some_and(|m| self.cost_usd >= m) || budget.max_tokens.is_some_and(|m| self.tokens() >= m)
    }
}

/// A budget in dollars as a command line gives it: finite and above 0.
pub fn parse_dollars(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("{s} is not a positive number of dollars")),
    }
}

/// A cost in millionths of a dollar (how it is stored and summed, exactly).
pub fn micro(usd: f64) -> i64 {
    (usd * 1e6).round() as i64
}

/// A cost in dollars from millionths of a dollar.
pub fn from_micro(micro: i64) -> f64 {
    micro as f64 / 1e6
}

/// Limits on what a run or a session may spend; either or both may be set (none: no
/// limit). The budget is reached when the usage is at or above a limit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Budget {
    /// The most cost, in US dollars.
    #[serde(default)]
    pub max_cost_usd: Option<f64>,
    /// The most tokens ([`Usage::tokens`]: input, output, cache reads and writes).
    #[serde(default)]
    pub max_tokens: Option<i64>,
}

impl Budget {
    /// Is any limit set?
    pub fn is_set(&self) -> bool {
        self.max_cost_usd.is_some() || self.max_tokens.is_some()
    }
}

/// Params of `launch.usage`: a session's **cumulative** totals so far, as its client
/// reports them. Reports are idempotent: each field keeps the highest value reported, so a
/// repeated report, or one lower than an earlier one, changes nothing and counts nothing
/// twice.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct UsageParams {
    /// The launched session (`ses_…`).
    pub session_id: String,
    /// When given, the session must be of this run (`session_not_found` otherwise).
    #[serde(default)]
    pub run_id: Option<String>,
    /// Input tokens so far (not cached), at least 0.
    #[serde(default)]
    pub input_tokens: i64,
    /// Output tokens so far, at least 0.
    #[serde(default)]
    pub output_tokens: i64,
    /// Cache-read tokens so far, at least 0.
    #[serde(default)]
    pub cache_read_tokens: i64,
    /// Cache-write (cache creation) tokens so far, at least 0.
    #[serde(default)]
    pub cache_write_tokens: i64,
    /// Cost so far in US dollars, finite and at least 0; leave out when the client reports
    /// none.
    #[serde(default)]
    pub cost_usd: Option<f64>,
}

/// Result of `launch.usage`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct UsageResult {
    /// The session's recorded totals (after this report).
    pub session: SessionUsage,
    /// The run's totals, every session summed.
    pub run: Usage,
    /// The run's budget.
    pub run_budget: Budget,
    /// The session reached its budget: its launcher stops it and fails its attempt.
    pub session_over_budget: bool,
    /// The run reached its budget: its launcher starts and dispatches nothing more.
    pub run_over_budget: bool,
    /// The event that recorded the change (`launch.usage`, and `run.budget_reached` when
    /// this report reached the run's budget), or 0 when the report changed nothing.
    pub event_id: i64,
}

/// A session's usage and budget.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SessionUsage {
    /// The launched session (`ses_…`).
    pub session_id: String,
    /// Its run.
    pub run_id: String,
    /// Its task.
    pub task_id: String,
    /// Its agent.
    pub agent: String,
    /// Its totals.
    pub usage: Usage,
    /// Its budget (`launch.budgetSet` with its `session_id`).
    pub budget: Budget,
    /// When its usage last changed (or its budget was set).
    pub updated_at: String,
}

/// Params of `launch.budgetSet`: set (replace) the budget of a run, or of one of its
/// sessions. Leave out both limits to remove it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BudgetSetParams {
    /// The run.
    pub run_id: String,
    /// A session of the run: set that session's budget instead of the run's.
    #[serde(default)]
    pub session_id: Option<String>,
    /// The most cost in US dollars (finite, above 0).
    #[serde(default)]
    pub max_cost_usd: Option<f64>,
    /// The most tokens (above 0).
    #[serde(default)]
    pub max_tokens: Option<i64>,
}

/// Result of `launch.budgetSet`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BudgetSetResult {
    /// The run.
    pub run_id: String,
    /// The session, when the budget is a session's.
    #[serde(default)]
    pub session_id: Option<String>,
    /// The budget now.
    pub budget: Budget,
    /// What the run (or session) used so far.
    pub usage: Usage,
    /// The usage is at or above the budget.
    pub over_budget: bool,
    /// The event that recorded the change (`launch.budget_set`, and `run.budget_reached`
    /// when the run was already at the new budget).
    pub event_id: i64,
}

/// Params of `launch.usageShow`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct UsageShowParams {
    /// The run.
    pub run_id: String,
}

/// Usage summed for one task or agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct UsageTotal {
    /// The task id (in `tasks`) or the agent (in `agents`).
    pub key: String,
    /// How many sessions reported usage.
    pub sessions: u32,
    /// Their totals.
    pub usage: Usage,
}

/// Result of `launch.usageShow`: a run's usage, summed per task and agent, with its
/// sessions' and its budget.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct UsageReport {
    /// The run.
    pub run_id: String,
    /// The run's totals.
    pub usage: Usage,
    /// The run's budget.
    pub budget: Budget,
    /// The run reached its budget: its launcher starts and dispatches nothing more.
    pub over_budget: bool,
    /// When the run reached its budget (the `run.budget_reached` event), if it did.
    #[serde(default)]
    pub reached_at: Option<String>,
    /// Per task, by task id.
    pub tasks: Vec<UsageTotal>,
    /// Per agent, by agent.
    pub agents: Vec<UsageTotal>,
    /// Per session that reported usage or has a budget, oldest report first.
    pub sessions: Vec<SessionUsage>,
}

/// A run's stored budget and whether it was reached.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunBudget {
    /// The run.
    pub run_id: String,
    /// Its limits.
    pub budget: Budget,
    /// When its usage reached them (`run.budget_reached`), or null.
    #[serde(default)]
    pub reached_at: Option<String>,
}
