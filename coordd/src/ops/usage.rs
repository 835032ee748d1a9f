//! Usage and budgets across domains: a launcher's usage report and a budget change act on a
//! run (orch), so only the run's creator, the lead or an admin may make them while
//! credentials are required (a worker must not spend or lift its run's budget), then
//! `domain::usage` records them.

use coord_proto::ErrorCode;
use coord_proto::types::*;

use crate::domain::credentials::Acting;
use crate::domain::orch::model as orch;
use crate::domain::{check, launch, usage};
use crate::error::{Error, Result};
use crate::store::Tx;
use crate::time::Ts;

/// `launch.usage`: the session's run's owner (its launcher runs as the lead) reports it.
pub fn report(tx: &mut dyn Tx, now: Ts, p: UsageParams, acting: &Acting) -> Result<UsageResult> {
    if let Some(r) = &p.run_id {
        check::id("run_id", r)?;
    }
    let s = session_of(tx, &p.session_id, p.run_id.as_deref())?;
    let owner = orch::load_run(tx, &s.run_id)?.created_by;
    acting.check_owner(tx, &owner, &format!("run '{}''s usage", s.run_id))?;
    usage::report(tx, now, &s, &p)
}

/// `launch.budgetSet`: the run's owner sets or removes its budget, or a session's.
pub fn set_budget(tx: &mut dyn Tx, now: Ts, p: BudgetSetParams, acting: &Acting) -> Result<BudgetSetResult> {
    check::id("run_id", &p.run_id)?;
    let owner = orch::load_run(tx, &p.run_id)?.created_by;
    acting.check_owner(tx, &owner, &format!("run '{}''s budget", p.run_id))?;
    let s = p.session_id.as_deref().map(|id| session_of(tx, id, Some(&p.run_id))).transpose()?;
    usage::set_budget(tx, now, &p, s.as_ref(), &owner)
}

/// A session of `run_id` (`session_not_found` for an unknown one, or another run's).
fn session_of(tx: &dyn Tx, session_id: &str, run_id: Option<&str>) -> Result<LaunchSession> {
    let s = launch::session(tx, session_id)?;
    match run_id {
        Some(r) if r != s.run_id => Err(Error::app(
            ErrorCode::SessionNotFound,
            format!("session '{session_id}' is not a session of run '{r}' (it is of run '{}')", s.run_id),
        )),
        _ => Ok(s),
    }
}

/// `launch.usageShow`.
pub fn show(tx: &dyn Tx, run_id: &str) -> Result<UsageReport> {
    check::id("run_id", run_id)?;
    orch::load_run(tx, run_id)?;
    usage::show(tx, run_id)
}
