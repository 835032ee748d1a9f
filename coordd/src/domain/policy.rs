//! The permission policy: which tool calls of which agents need whose approval. Stored as
//! one JSON document in the settings (so every backend keeps it as it keeps settings),
//! versioned, changed as a whole (`policy.set`, with an optional expected version), and
//! recorded with a `policy.changed` event. Rules are Claude Code permission rules, parsed
//! and matched by `coord-policy`, the same code the permission hooks run on the snapshot
//! file the daemon writes after each change.

use std::path::Path;

use coord_policy::Compiled;
use coord_proto::ErrorCode;
use coord_proto::types::*;
use serde_json::json;

use super::check;
use super::events::{self, Draft};
use crate::error::{Error, Result};
use crate::store::Tx;
use crate::time::Ts;

/// The settings key the policy is stored under.
const KEY: &str = "permission_policy";
/// Most rules a policy may hold.
pub const MAX_RULES: usize = 1000;

/// The stored policy, or the empty default (version 0) when none was ever set.
pub fn load(tx: &dyn Tx) -> Result<Policy> {
    match tx.setting(KEY)? {
        None => Ok(Policy::default()),
        Some(text) => serde_json::from_str(&text).map_err(|e| Error::Storage(format!("stored policy: {e}"))),
    }
}

/// The policy's lead, when it names one.
pub fn lead(tx: &dyn Tx) -> Result<Option<String>> {
    Ok(load(tx)?.lead.filter(|l| !l.is_empty()))
}

/// Check a policy as given: names, timeout, and every rule parses and has an approver.
pub fn validate(p: &Policy) -> Result<()> {
    if let Some(lead) = &p.lead {
        check::agent("lead", lead)?;
    }
    if !(1..=MAX_PERMISSION_TIMEOUT).contains(&p.timeout_seconds) {
        return Err(Error::invalid(format!(
            "timeout_seconds must be 1 to {MAX_PERMISSION_TIMEOUT}, got {}",
            p.timeout_seconds
        )));
    }
    if p.rules.len() > MAX_RULES {
        return Err(Error::invalid(format!("a policy holds at most {MAX_RULES} rules")));
    }
    for r in &p.rules {
        if let Some(a) = &r.approver {
            check::agent("approver", a)?;
        }
        for a in &r.agents {
            check::agent("agents", a)?;
        }
    }
    Compiled::new(p).map(|_| ()).map_err(|e| Error::invalid(e.0))
}

/// `policy.set`: replace the policy; its version grows by one.
pub fn set(tx: &mut dyn Tx, now: Ts, p: PolicySetParams) -> Result<(Policy, i64)> {
    check::agent("actor", &p.actor)?;
    validate(&p.policy)?;
    let current = load(tx)?;
    if let Some(v) = p.expected_version
        && v != current.version
    {
        return Err(Error::app(
            ErrorCode::InvalidTransition,
            format!("the policy is at version {}, not {v}: read it again and retry", current.version),
        ));
    }
    let policy = Policy { version: current.version + 1, ..p.policy };
    let text = serde_json::to_string(&policy).map_err(|e| Error::Internal(e.to_string()))?;
    tx.setting_put(KEY, &text)?;
    let summary = format!("permission policy v{}: {} rule(s)", policy.version, policy.rules.len());
    let payload = json!({"version": policy.version, "rules": policy.rules.len(), "lead": policy.lead});
    let event_id = events::record(
        tx,
        &Draft::new(EventType::PolicyChanged, events::SOURCE_AGENTS, &p.actor, &summary, &payload, now),
    )?;
    Ok((policy, event_id))
}

/// `policy.check`: would this call be gated, by which rule, and who approves it?
pub fn check_call(policy: &Policy, p: &PolicyCheckParams, root: &Path) -> Result<PolicyCheckResult> {
    check::agent("agent", &p.agent)?;
    check::id("tool_name", &p.tool_name)?;
    let compiled = Compiled::new(policy).map_err(|e| Error::Storage(format!("stored policy: {e}")))?;
    let cwd = p.cwd.as_deref().map(Path::new).unwrap_or(root);
    let gate = compiled.check(&p.agent, &p.tool_name, &p.tool_input, Some(cwd));
    Ok(PolicyCheckResult {
        gated: gate.is_some(),
        rule: gate.as_ref().map(|g| g.rule.clone()),
        approver: gate.map(|g| g.approver),
        timeout_seconds: policy.timeout_seconds,
    })
}
