//! coord-policy: which tool calls of which agents need an approver, in Claude Code's
//! permission-rule syntax where it fits. The daemon checks rules with it when a policy is
//! set (and answers `policy.check`); the permission hooks match a tool call against the
//! policy snapshot with it, with no round trip to the daemon.
//!
//! ```
//! use coord_policy::Compiled;
//! use coord_proto::types::{Policy, PolicyRule};
//! use serde_json::json;
//!
//! let policy = Policy {
//!     lead: Some("lead".into()),
//!     rules: vec![PolicyRule { tool: "Bash(git push*)".into(), agents: vec![], approver: None }],
//!     ..Policy::default()
//! };
//! let compiled = Compiled::new(&policy).unwrap();
//! let push = compiled.check("backend", "Bash", &json!({"command": "git push origin main"}), None);
//! assert_eq!(push.unwrap().approver, "lead");
//! assert!(compiled.check("backend", "Bash", &json!({"command": "git status"}), None).is_none());
//! // Each part of a compound command counts.
//! let hidden = compiled.check("backend", "Bash", &json!({"command": "cd app && git push -f"}), None);
//! assert_eq!(hidden.unwrap().approver, "lead");
//! // What a command runs counts, not how it is spelt; the gate says why it matched.
//! let wrapped = compiled.check("backend", "Bash", &json!({"command": "bash -c 'git -C . push'"}), None);
//! assert_eq!(wrapped.unwrap().reason.unwrap(), "gated by Bash(git push*): `bash -c 'git -C . push'` runs `git push`");
//! ```

mod rule;
pub mod shell;
mod wildcard;

use std::path::Path;

use coord_proto::types::{Policy, PolicyRule};
use serde_json::Value;

pub use rule::{Call, Pattern};
pub use wildcard::Wildcard;

/// A rule or policy that cannot be used, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PolicyError(pub String);

/// A gated call: the rule that matched and who approves.
#[derive(Debug, Clone, PartialEq)]
pub struct Gate<'a> {
    pub index: usize,
    pub rule: &'a PolicyRule,
    pub approver: String,
    /// Why the call matches when it is not plain to see: what a command resolved to
    /// (`` `bash -c 'git push'` runs `git push` ``), or why it could not be resolved.
    pub reason: Option<String>,
}

/// A policy ready to match tool calls.
pub struct Compiled<'p> {
    policy: &'p Policy,
    rules: Vec<(Pattern, Vec<Wildcard>)>,
}

impl<'p> Compiled<'p> {
    /// Parse every rule; a rule that cannot be parsed, or that has no approver while the
    /// policy has no lead, is an error naming it.
    pub fn new(policy: &'p Policy) -> Result<Compiled<'p>, PolicyError> {
        let mut rules = Vec::with_capacity(policy.rules.len());
        for r in &policy.rules {
            let pattern = Pattern::parse(&r.tool)?;
            if r.approver.as_deref().is_none_or(str::is_empty) && policy.lead.as_deref().is_none_or(str::is_empty) {
                return Err(PolicyError(format!(
                    "rule '{}' has no approver and the policy has no lead: give it an approver or set a lead",
                    r.tool
                )));
            }
            let agents = r.agents.iter().map(|a| Wildcard::new(a)).collect();
            rules.push((pattern, agents));
        }
        Ok(Compiled { policy, rules })
    }

    /// The first rule that gates this call of `agent`, if any. `cwd` is the session's
    /// directory, which relative path rules are taken from.
    pub fn check(&self, agent: &str, tool_name: &str, input: &Value, cwd: Option<&Path>) -> Option<Gate<'p>> {
        let call = Call::new(tool_name, input, cwd);
        self.rules.iter().enumerate().find_map(|(index, (pattern, agents))| {
            let agent_ok = agents.is_empty() || agents.iter().any(|w| w.matches(agent));
            if !agent_ok {
                return None;
            }
            let why = pattern.check(&call)?;
            let rule = &self.policy.rules[index];
            let approver = rule.approver.clone().filter(|a| !a.is_empty()).or_else(|| self.policy.lead.clone())?;
            let reason = why.map(|w| format!("gated by {}: {w}", rule.tool));
            Some(Gate { index, rule, approver, reason })
        })
    }
}
