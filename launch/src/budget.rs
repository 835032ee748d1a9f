//! Budgets in the bridge. The daemon sums what each session used (`launch.usage`, reported
//! by whoever reads the session's stream) and records `launch.usage`, `launch.budget_set`
//! and `run.budget_reached`; the bridge follows those events:
//! - a session at its budget (`session_max_cost_usd`, `session_max_tokens` in
//!   `launch.toml`, set on each session it starts) is stopped, and its attempt fails with
//!   the reason;
//! - at the run's budget (`--max-cost-usd`, `--max-tokens`, or `orch run budget`) the bridge
//!   starts and dispatches nothing more; with `--hard` it stops the running sessions too
//!   (their attempts fail). A budget raised above the usage lets it go on.

use coord_proto::types::*;

use crate::bridge::{Bridge, BridgeError};
use crate::config::Layer;
use crate::limits::RunLimits;
use crate::session::StopWhy;

impl Bridge {
    /// At start: set the run's budget given on the command line, then learn whether the
    /// run is already at its budget.
    pub(crate) async fn budget_catch_up(&mut self, limits: RunLimits) -> Result<(), BridgeError> {
        if limits.max_cost_usd.is_some() || limits.max_tokens.is_some() {
            let p = BudgetSetParams {
                run_id: self.o.run_id.clone(),
                session_id: None,
                max_cost_usd: limits.max_cost_usd,
                max_tokens: limits.max_tokens,
            };
            let r = self.rpc.budget_set(p).await?;
            self.say.line(&format!("run {} budget: {}", self.o.run_id, r.usage.spent(&r.budget)));
        }
        let report = self.rpc.usage_show(&self.o.run_id).await?;
        self.note_over(report.over_budget, &report.usage, &report.budget);
        Ok(())
    }

    /// A session just started: give it its budget from `launch.toml`, if one is set.
    pub(crate) async fn session_budget(&mut self, session_id: &str, layer: &Layer) {
        if layer.session_max_cost_usd.is_none() && layer.session_max_tokens.is_none() {
            return;
        }
        let p = BudgetSetParams {
            run_id: self.o.run_id.clone(),
            session_id: Some(session_id.to_string()),
            max_cost_usd: layer.session_max_cost_usd,
            max_tokens: layer.session_max_tokens,
        };
        if let Err(e) = self.rpc.budget_set(p).await {
            self.say.warn(&format!("cannot set the budget of session {session_id}: {e}"));
        }
    }

    /// `launch.usage`, `launch.budget_set` or `run.budget_reached` of the run.
    pub(crate) async fn on_budget_event(&mut self, ev: &Event) -> Result<(), BridgeError> {
        let v = &ev.payload_json;
        match ev.event_type {
            EventType::LaunchUsage => {
                let Ok(s) = serde_json::from_value::<SessionUsage>(v["session"].clone()) else { return Ok(()) };
                if s.budget.is_set() && s.usage.reached(&s.budget) {
                    self.stop_for_budget(&ev.thread_id, &s.session_id, &s.usage, &s.budget);
                }
            }
            EventType::LaunchBudgetSet => {
                let budget: Budget = serde_json::from_value(v["budget"].clone()).unwrap_or_default();
                let usage: Usage = serde_json::from_value(v["usage"].clone()).unwrap_or_default();
                let reached = budget.is_set() && usage.reached(&budget);
                match v["session_id"].as_str() {
                    Some(id) if reached => {
                        let thread = self.thread_of_session(id).await?;
                        if let Some(thread) = thread {
                            self.stop_for_budget(&thread, id, &usage, &budget);
                        }
                    }
                    Some(_) => {}
                    None => self.note_over(reached, &usage, &budget),
                }
            }
            EventType::RunBudgetReached => {
                let budget: Budget = serde_json::from_value(v["budget"].clone()).unwrap_or_default();
                let usage: Usage = serde_json::from_value(v["usage"].clone()).unwrap_or_default();
                self.note_over(true, &usage, &budget);
            }
            _ => {}
        }
        Ok(())
    }

    fn note_over(&mut self, over: bool, usage: &Usage, budget: &Budget) {
        let was = self.budgets.over;
        self.budgets.over = over;
        if over && !was {
            let then =
                if self.budgets.hard { "its running sessions are stopped" } else { "its running sessions finish" };
            self.say.line(&format!(
                "run {} reached its budget ({}): nothing more is started or dispatched; {then}",
                self.o.run_id,
                usage.spent(budget)
            ));
            if self.budgets.hard {
                let threads: Vec<String> = self.running.keys().cloned().collect();
                for t in threads {
                    if let Some(h) = self.running.get_mut(&t) {
                        h.stop(StopWhy::RunBudget);
                    }
                }
            }
        } else if !over && was {
            self.say.line(&format!("run {} is under its budget again ({})", self.o.run_id, usage.spent(budget)));
        }
    }

    fn stop_for_budget(&mut self, thread: &str, session_id: &str, usage: &Usage, budget: &Budget) {
        let Some(h) = self.running.get_mut(thread) else { return };
        if self.budgets.reasons.contains_key(session_id) {
            return;
        }
        let reason = format!("stopped: the session reached its budget ({})", usage.spent(budget));
        self.say.line(&format!("{} {reason}", h.task_id));
        self.budgets.reasons.insert(session_id.to_string(), reason);
        h.stop(StopWhy::SessionBudget);
    }

    async fn thread_of_session(&mut self, session_id: &str) -> Result<Option<String>, BridgeError> {
        let q = SessionListParams {
            run_id: Some(self.o.run_id.clone()),
            launcher: Some(self.launcher.clone()),
            running_only: true,
            ..Default::default()
        };
        let sessions = self.rpc.session_list(q).await?.sessions;
        Ok(sessions.into_iter().find(|s| s.session_id == session_id).map(|s| s.thread_id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::dollars;

    #[test]
    fn a_budget_in_dollars_is_positive_and_finite() {
        assert_eq!(dollars("0.5"), Ok(0.5));
        for bad in ["0", "-1", "NaN", "inf", "x"] {
            assert!(dollars(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_spent_line_names_each_limit() {
        let u = Usage { input_tokens: 900, output_tokens: 300, cost_usd: 0.6, ..Default::default() };
        let b = Budget { max_cost_usd: Some(0.5), max_tokens: Some(1000) };
        assert_eq!(u.spent(&b), "$0.60 of $0.50, 1200 of 1000 tokens");
    }
}
