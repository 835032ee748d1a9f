//! Usage and budgets of launched sessions (`launch.usage`, `launch.budgetSet`,
//! `launch.usageShow`). A session's usage is the highest cumulative totals its launcher
//! reported (so a repeated or late, lower report counts nothing twice); a task's, an
//! agent's and a run's are the sums of their sessions'. A budget is reached when a total is
//! at or above a limit; a run records `run.budget_reached` once each time it reaches its
//! budget (raising the budget above the usage makes it reachable again).

use coord_proto::types::*;
use serde_json::json;

use super::events::{self, Draft, SOURCE_LAUNCH};
use crate::error::{Error, Result};
use crate::store::Tx;
use crate::time::Ts;

fn tokens(name: &str, v: i64) -> Result<()> {
    if !(0..=MAX_TOKENS).contains(&v) {
        return Err(Error::invalid(format!("{name} must be a whole number from 0 to {MAX_TOKENS}, not {v}")));
    }
    Ok(())
}

fn cost(name: &str, v: f64) -> Result<()> {
    if !v.is_finite() || !(0.0..=MAX_COST_USD).contains(&v) {
        return Err(Error::invalid(format!(
            "{name} must be a finite number of dollars from 0 to {MAX_COST_USD}, not {v}"
        )));
    }
    Ok(())
}

/// The reported totals, checked.
fn reported(p: &UsageParams) -> Result<Usage> {
    for (name, v) in [
        ("input_tokens", p.input_tokens),
        ("output_tokens", p.output_tokens),
        ("cache_read_tokens", p.cache_read_tokens),
        ("cache_write_tokens", p.cache_write_tokens),
    ] {
        tokens(name, v)?;
    }
    if let Some(c) = p.cost_usd {
        cost("cost_usd", c)?;
    }
    Ok(Usage {
        input_tokens: p.input_tokens,
        output_tokens: p.output_tokens,
        cache_read_tokens: p.cache_read_tokens,
        cache_write_tokens: p.cache_write_tokens,
        cost_usd: p.cost_usd.unwrap_or(0.0),
    })
}

/// Each total the higher of the two: reports are cumulative, so this is idempotent.
pub fn highest(a: &Usage, b: &Usage) -> Usage {
    Usage {
        input_tokens: a.input_tokens.max(b.input_tokens),
        output_tokens: a.output_tokens.max(b.output_tokens),
        cache_read_tokens: a.cache_read_tokens.max(b.cache_read_tokens),
        cache_write_tokens: a.cache_write_tokens.max(b.cache_write_tokens),
        cost_usd: from_micro(micro(a.cost_usd).max(micro(b.cost_usd))),
    }
}

/// A budget's limits, checked: each above 0 when set.
fn limits(max_cost_usd: Option<f64>, max_tokens: Option<i64>) -> Result<Budget> {
    if let Some(c) = max_cost_usd {
        cost("max_cost_usd", c)?;
        if micro(c) <= 0 {
            return Err(Error::invalid(format!("max_cost_usd must be at least $0.000001, not {c}")));
        }
    }
    if let Some(t) = max_tokens {
        tokens("max_tokens", t)?;
        if t == 0 {
            return Err(Error::invalid("max_tokens must be above 0"));
        }
    }
    Ok(Budget { max_cost_usd: max_cost_usd.map(|c| from_micro(micro(c))), max_tokens })
}

fn empty(s: &LaunchSession, now: Ts) -> SessionUsage {
    SessionUsage {
        session_id: s.session_id.clone(),
        run_id: s.run_id.clone(),
        task_id: s.task_id.clone(),
        agent: s.agent.clone(),
        usage: Usage::default(),
        budget: Budget::default(),
        updated_at: now.to_string(),
    }
}

/// The run's totals, every session summed.
pub fn run_total(tx: &dyn Tx, run_id: &str) -> Result<Usage> {
    Ok(tx.launches().usage_of_run(run_id)?.iter().fold(Usage::default(), |t, s| t.plus(&s.usage)))
}

/// The run's stored budget (no limits when none was set).
pub fn run_budget(tx: &dyn Tx, run_id: &str) -> Result<RunBudget> {
    Ok(tx.launches().run_budget(run_id)?.unwrap_or(RunBudget {
        run_id: run_id.to_string(),
        budget: Budget::default(),
        reached_at: None,
    }))
}

/// Note whether the run's usage is at its budget: record `run.budget_reached` the first
/// time it is, and forget it when it no longer is (the budget was raised or removed).
/// Returns whether it is, and the event recorded (0: none).
fn note_reached(tx: &mut dyn Tx, now: Ts, mut b: RunBudget, usage: &Usage, actor: &str) -> Result<(bool, i64)> {
    let over = b.budget.is_set() && usage.reached(&b.budget);
    let mut event_id = 0;
    if over && b.reached_at.is_none() {
        b.reached_at = Some(now.to_string());
        tx.launches_mut().run_budget_save(&b)?;
        let summary = format!(
            "run {} reached its budget ({}): no new session is started or dispatched",
            b.run_id,
            usage.spent(&b.budget)
        );
        let payload = json!({ "budget": b.budget, "usage": usage });
        let d = Draft {
            run_id: &b.run_id,
            ..Draft::new(EventType::RunBudgetReached, SOURCE_LAUNCH, actor, &summary, &payload, now)
        };
        event_id = events::record(tx, &d)?;
    } else if !over && b.reached_at.is_some() {
        b.reached_at = None;
        tx.launches_mut().run_budget_save(&b)?;
    }
    Ok((over, event_id))
}

/// `launch.usage` for session `s` (the one `p` names): keep the highest totals reported
/// for it, then tell whether it and its run reached their budgets.
pub fn report(tx: &mut dyn Tx, now: Ts, s: &LaunchSession, p: &UsageParams) -> Result<UsageResult> {
    let got = reported(p)?;
    let mut row = tx.launches().usage(&s.session_id)?.unwrap_or_else(|| empty(s, now));
    let merged = highest(&row.usage, &got);
    let mut event_id = 0;
    let changed = merged != row.usage;
    if changed {
        row.usage = merged;
        row.updated_at = now.to_string();
        tx.launches_mut().usage_save(&row)?;
    }
    let run = run_total(tx, &s.run_id)?;
    if changed {
        let summary = format!(
            "{} session for {} (attempt {}) used {} tokens, ${:.4}",
            s.client,
            s.task_id,
            s.attempt,
            row.usage.tokens(),
            row.usage.cost_usd
        );
        let payload = json!({ "session": row, "run": run });
        let d = Draft {
            run_id: &s.run_id,
            task_id: &s.task_id,
            thread_id: &s.thread_id,
            assigned_to: &s.agent,
            created_by: &s.launcher,
            ..Draft::new(EventType::LaunchUsage, SOURCE_LAUNCH, &s.launcher, &summary, &payload, now)
        };
        event_id = events::record(tx, &d)?;
    }
    let budget = run_budget(tx, &s.run_id)?;
    let run_budget = budget.budget;
    let (run_over_budget, reached) = note_reached(tx, now, budget, &run, &s.launcher)?;
    let session_over_budget = row.budget.is_set() && row.usage.reached(&row.budget);
    Ok(UsageResult {
        session: row,
        run,
        run_budget,
        session_over_budget,
        run_over_budget,
        event_id: event_id.max(reached),
    })
}

/// `launch.budgetSet`: replace the budget of the run (which exists) or of its session `s`
/// (the one `p` names); `actor` is who set it.
pub fn set_budget(
    tx: &mut dyn Tx,
    now: Ts,
    p: &BudgetSetParams,
    s: Option<&LaunchSession>,
    actor: &str,
) -> Result<BudgetSetResult> {
    let budget = limits(p.max_cost_usd, p.max_tokens)?;
    let (usage, over, session_id) = match s {
        Some(s) => {
            let id = &s.session_id;
            let mut row = tx.launches().usage(id)?.unwrap_or_else(|| empty(s, now));
            row.budget = budget;
            row.updated_at = now.to_string();
            tx.launches_mut().usage_save(&row)?;
            (row.usage, budget.is_set() && row.usage.reached(&budget), Some(id.clone()))
        }
        None => {
            let mut b = run_budget(tx, &p.run_id)?;
            b.budget = budget;
            tx.launches_mut().run_budget_save(&b)?;
            (run_total(tx, &p.run_id)?, false, None)
        }
    };
    let whose = match &session_id {
        Some(id) => format!("session {id} of run {}", p.run_id),
        None => format!("run {}", p.run_id),
    };
    let summary = if budget.is_set() {
        format!("budget of {whose} set: {}", usage.spent(&budget))
    } else {
        format!("budget of {whose} removed")
    };
    let payload = json!({ "session_id": session_id, "budget": budget, "usage": usage });
    let d = Draft {
        run_id: &p.run_id,
        ..Draft::new(EventType::LaunchBudgetSet, SOURCE_LAUNCH, actor, &summary, &payload, now)
    };
    let mut event_id = events::record(tx, &d)?;
    let mut over_budget = over;
    if session_id.is_none() {
        let b = run_budget(tx, &p.run_id)?;
        let (over, reached) = note_reached(tx, now, b, &usage, actor)?;
        over_budget = over;
        event_id = event_id.max(reached);
    }
    Ok(BudgetSetResult { run_id: p.run_id.clone(), session_id, budget, usage, over_budget, event_id })
}

/// Sum sessions' usage by a key (task or agent), sorted by key.
fn totals(sessions: &[SessionUsage], key: impl Fn(&SessionUsage) -> &str) -> Vec<UsageTotal> {
    let mut by: std::collections::BTreeMap<String, UsageTotal> = std::collections::BTreeMap::new();
    for s in sessions {
        let t = by.entry(key(s).to_string()).or_insert_with(|| UsageTotal {
            key: key(s).to_string(),
            sessions: 0,
            usage: Usage::default(),
        });
        t.sessions += 1;
        t.usage = t.usage.plus(&s.usage);
    }
    by.into_values().collect()
}

/// `launch.usageShow` (the run exists).
pub fn show(tx: &dyn Tx, run_id: &str) -> Result<UsageReport> {
    let sessions = tx.launches().usage_of_run(run_id)?;
    let usage = sessions.iter().fold(Usage::default(), |t, s| t.plus(&s.usage));
    let b = run_budget(tx, run_id)?;
    Ok(UsageReport {
        run_id: run_id.to_string(),
        usage,
        budget: b.budget,
        over_budget: b.budget.is_set() && usage.reached(&b.budget),
        reached_at: b.reached_at,
        tasks: totals(&sessions, |s| &s.task_id),
        agents: totals(&sessions, |s| &s.agent),
        sessions,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(input: i64, cost: f64) -> Usage {
        Usage { input_tokens: input, output_tokens: 1, cache_read_tokens: 2, cache_write_tokens: 3, cost_usd: cost }
    }

    #[test]
    fn the_highest_report_wins_so_repeats_and_lower_reports_count_once() {
        let a = u(100, 0.5);
        assert_eq!(highest(&a, &a), a);
        assert_eq!(highest(&a, &u(40, 0.1)), a);
        assert_eq!(highest(&a, &u(140, 0.7)), u(140, 0.7));
    }

    #[test]
    fn a_budget_is_reached_at_its_limit() {
        let b = Budget { max_cost_usd: Some(0.5), max_tokens: None };
        assert!(u(0, 0.5).reached(&b));
        assert!(!u(0, 0.499_999).reached(&b));
        let t = Budget { max_cost_usd: None, max_tokens: Some(106) };
        assert!(u(100, 0.0).reached(&t));
        assert!(!u(99, 0.0).reached(&t));
        assert!(!u(1_000_000, 1e6).reached(&Budget::default()));
    }

    #[test]
    fn bad_numbers_are_refused() {
        let p = |input, cost| UsageParams {
            session_id: "ses_x".into(),
            input_tokens: input,
            cost_usd: cost,
            ..Default::default()
        };
        assert!(reported(&p(-1, None)).is_err());
        assert!(reported(&p(0, Some(f64::NAN))).is_err());
        assert!(reported(&p(0, Some(f64::INFINITY))).is_err());
        assert!(reported(&p(0, Some(-0.01))).is_err());
        assert!(reported(&p(5, Some(0.25))).is_ok());
        assert!(limits(Some(0.0), None).is_err());
        assert!(limits(None, Some(0)).is_err());
        assert!(limits(Some(2.0), Some(10)).is_ok());
    }

    #[test]
    fn costs_sum_exactly_to_the_millionth() {
        let t = Usage { cost_usd: 0.1, ..Default::default() }.plus(&Usage { cost_usd: 0.2, ..Default::default() });
        assert_eq!(t.cost_usd, 0.3);
    }
}
