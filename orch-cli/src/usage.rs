//! Tokens and cost as `orch status` and `orch top` show them: the run's totals against
//! its budget, then per task and per agent.

use coord_proto::types::{Usage, UsageReport};

/// `$0.42, 12.3k tokens (in 10.0k, out 2.3k, cache read 0, write 0)`.
pub fn amount(u: &Usage) -> String {
    format!(
        "${:.2}, {} tokens (in {}, out {}, cache read {}, write {})",
        u.cost_usd,
        short(u.tokens()),
        short(u.input_tokens),
        short(u.output_tokens),
        short(u.cache_read_tokens),
        short(u.cache_write_tokens)
    )
}

fn short(n: i64) -> String {
    match n {
        n if n >= 1_000_000 => format!("{:.1}M", n as f64 / 1e6),
        n if n >= 1_000 => format!("{:.1}k", n as f64 / 1e3),
        n => n.to_string(),
    }
}

/// The run's line: `usage: $0.42, 12.3k tokens (…); budget $1.00 of … REACHED`.
pub fn run_line(r: &UsageReport) -> String {
    let budget = if r.budget.is_set() {
        let reached = if r.over_budget { " — REACHED: nothing more is started" } else { "" };
        format!("; budget: {}{reached}", r.usage.spent(&r.budget))
    } else {
        String::new()
    };
    format!("usage: {}{budget}", amount(&r.usage))
}

/// `orch status`: the run's usage, then each task's and agent's (nothing before any usage
/// or budget).
pub fn print(r: Option<&UsageReport>) {
    let Some(r) = r.filter(|r| !r.tasks.is_empty() || r.budget.is_set()) else { return };
    println!("{}", run_line(r));
    for (what, rows) in [("task", &r.tasks), ("agent", &r.agents)] {
        for t in rows {
            println!("  {what} {}: {} ({} session(s))", t.key, amount(&t.usage), t.sessions);
        }
    }
}
