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
    match tx.agents().setting(KEY)? {
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
    tx.agents_mut().setting_put(KEY, &text)?;
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
        approver: gate.as_ref().map(|g| g.approver.clone()),
        timeout_seconds: policy.timeout_seconds,
        reason: gate.and_then(|g| g.reason),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::sqlite::testing::Memory;

    fn rule(tool: &str, agents: &[&str], approver: Option<&str>) -> PolicyRule {
        PolicyRule {
            tool: tool.into(),
            agents: agents.iter().map(|a| a.to_string()).collect(),
            approver: approver.map(Into::into),
        }
    }

    fn policy(lead: Option<&str>, rules: Vec<PolicyRule>) -> Policy {
        Policy { lead: lead.map(Into::into), rules, ..Policy::default() }
    }

    fn set_params(p: Policy, expected_version: Option<i64>) -> PolicySetParams {
        PolicySetParams { actor: "lead".into(), policy: p, expected_version }
    }

    fn call(agent: &str, command: &str) -> PolicyCheckParams {
        PolicyCheckParams {
            agent: agent.into(),
            tool_name: "Bash".into(),
            tool_input: json!({ "command": command }),
            cwd: None,
        }
    }

    #[test]
    fn a_rule_needs_its_own_approver_or_the_policy_lead() {
        let orphan = policy(None, vec![rule("Bash(git push*)", &[], None)]);
        let e = validate(&orphan).unwrap_err();
        assert_eq!(e.code(), Some(ErrorCode::InvalidInput));
        assert!(e.to_string().contains("no approver"), "{e}");
        validate(&policy(None, vec![rule("Bash(git push*)", &[], Some("boss"))])).unwrap();
        validate(&policy(Some("lead"), vec![rule("Bash(git push*)", &[], None)])).unwrap();
    }

    #[test]
    fn out_of_range_timeouts_too_many_rules_bad_names_and_bad_rule_syntax_are_refused() {
        let ok = policy(Some("lead"), vec![rule("Write(src/**)", &["w-*"], Some("boss"))]);
        validate(&ok).unwrap();
        let refused = [
            Policy { timeout_seconds: 0, ..ok.clone() },
            Policy { timeout_seconds: MAX_PERMISSION_TIMEOUT + 1, ..ok.clone() },
            Policy { rules: vec![rule("Bash", &[], None); MAX_RULES + 1], ..ok.clone() },
            Policy { lead: Some("the lead".into()), ..ok.clone() },
            policy(Some("lead"), vec![rule("Bash(git push*", &[], None)]),
            policy(Some("lead"), vec![rule("   ", &[], None)]),
            policy(Some("lead"), vec![rule("Bash", &[], Some(""))]),
            policy(Some("lead"), vec![rule("Bash", &["w 1"], None)]),
        ];
        for p in refused {
            let e = validate(&p).unwrap_err();
            assert_eq!(e.code(), Some(ErrorCode::InvalidInput), "{p:?}: {e}");
        }
        validate(&Policy { timeout_seconds: MAX_PERMISSION_TIMEOUT, ..ok }).unwrap();
    }

    #[test]
    fn a_matching_call_is_gated_by_the_first_rule_and_approved_by_its_approver_or_the_lead() {
        let p = Policy {
            timeout_seconds: 30,
            ..policy(
                Some("lead"),
                vec![rule("Bash(git push*)", &["w-*"], Some("release")), rule("Bash(git push*)", &[], None)],
            )
        };
        let root = Path::new("/project");
        let worker = check_call(&p, &call("w-1", "git push origin main"), root).unwrap();
        assert!(worker.gated);
        assert_eq!(worker.rule.as_ref(), Some(&p.rules[0]));
        assert_eq!(worker.approver.as_deref(), Some("release"));
        assert_eq!(worker.timeout_seconds, 30);
        let other = check_call(&p, &call("reviewer", "git push"), root).unwrap();
        assert_eq!(other.rule.as_ref(), Some(&p.rules[1]), "the agent glob limits the first rule");
        assert_eq!(other.approver.as_deref(), Some("lead"));
        let free = check_call(&p, &call("w-1", "git status"), root).unwrap();
        assert_eq!(
            free,
            PolicyCheckResult { gated: false, rule: None, approver: None, timeout_seconds: 30, reason: None }
        );
    }

    #[test]
    fn check_call_refuses_a_call_without_agent_or_tool() {
        let p = policy(Some("lead"), vec![rule("Bash", &[], None)]);
        let root = Path::new("/project");
        let e = check_call(&p, &call("", "ls"), root).unwrap_err();
        assert_eq!(e.code(), Some(ErrorCode::InvalidInput));
        let no_tool = PolicyCheckParams { tool_name: " ".into(), ..call("w-1", "ls") };
        assert_eq!(check_call(&p, &no_tool, root).unwrap_err().code(), Some(ErrorCode::InvalidInput));
    }

    #[test]
    fn set_stores_the_policy_at_the_next_version_and_records_the_change() {
        let m = Memory::new();
        assert_eq!(m.read(|tx, _| load(tx)).unwrap(), Policy::default());
        assert_eq!(m.read(|tx, _| lead(tx)).unwrap(), None);
        let given = Policy { version: 41, ..policy(Some("lead"), vec![rule("Bash(git push*)", &[], None)]) };
        let (stored, event_id) = m.write(|tx, now| set(tx, now, set_params(given.clone(), Some(0)))).unwrap();
        assert_eq!(stored.version, 1, "the given version is ignored");
        assert_eq!(stored, Policy { version: 1, ..given.clone() });
        assert_eq!(m.read(|tx, _| load(tx)).unwrap(), stored);
        assert_eq!(m.read(|tx, _| lead(tx)).unwrap().as_deref(), Some("lead"));
        let events = m.events();
        assert_eq!(events.len(), 1);
        assert_eq!((events[0].event_type, events[0].event_id), (EventType::PolicyChanged, event_id));
        assert_eq!(events[0].payload_json["version"], 1);
        let (again, _) = m.write(|tx, now| set(tx, now, set_params(given, None))).unwrap();
        assert_eq!(again.version, 2, "no expected version: always applied");
    }

    #[test]
    fn set_with_a_stale_expected_version_is_refused_and_keeps_the_stored_policy() {
        let m = Memory::new();
        let first = policy(Some("lead"), vec![]);
        m.write(|tx, now| set(tx, now, set_params(first, None))).unwrap();
        let second = policy(Some("other"), vec![rule("WebFetch", &[], None)]);
        let e = m.write(|tx, now| set(tx, now, set_params(second.clone(), Some(0)))).unwrap_err();
        assert_eq!(e.code(), Some(ErrorCode::InvalidTransition));
        assert!(e.to_string().contains("version 1, not 0"), "{e}");
        let stored = m.read(|tx, _| load(tx)).unwrap();
        assert_eq!((stored.version, stored.lead.as_deref()), (1, Some("lead")));
        assert_eq!(m.events().len(), 1);
        let (now_stored, _) = m.write(|tx, now| set(tx, now, set_params(second, Some(1)))).unwrap();
        assert_eq!((now_stored.version, now_stored.lead.as_deref()), (2, Some("other")));
    }

    #[test]
    fn set_refuses_an_invalid_policy_or_a_missing_actor_before_writing() {
        let m = Memory::new();
        let orphan = policy(None, vec![rule("Bash", &[], None)]);
        let e = m.write(|tx, now| set(tx, now, set_params(orphan, None))).unwrap_err();
        assert_eq!(e.code(), Some(ErrorCode::InvalidInput));
        let nobody = PolicySetParams { actor: String::new(), ..set_params(Policy::default(), None) };
        assert_eq!(m.write(|tx, now| set(tx, now, nobody)).unwrap_err().code(), Some(ErrorCode::InvalidInput));
        assert_eq!(m.read(|tx, _| load(tx)).unwrap().version, 0);
        assert!(m.events().is_empty());
    }
}
