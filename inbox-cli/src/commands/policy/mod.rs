//! `inbox policy ...`: the permission policy. Changes read the policy, edit it and write it
//! back with the version they read (`policy.set` with `expected_version`), so two
//! concurrent edits never lose one another: the later one is refused and says so.

pub mod check;
pub mod clear;
pub mod gate;
pub mod lead;
pub mod show;
pub mod timeout;
pub mod ungate;

use std::path::PathBuf;

use coord_cli::{CliError, json_object};
use coord_proto::api::ControlApiClient;
use coord_proto::types::*;

use coord_cli::{Command, Ctx, Outcome, Res};

coord_cli::subcommands! {
    /// The subcommands of `inbox policy`.
    pub enum Cmd {
        Show(show::Args),
        Gate(gate::Args),
        Ungate(ungate::Args),
        Lead(lead::Args),
        Timeout(timeout::Args),
        Check(check::Args),
        Clear(clear::Args),
    }
}

/// Read, change and write the policy, refusing if someone changed it in between.
async fn edit(ctx: &Ctx, change: impl FnOnce(&mut Policy) -> Result<(), CliError>) -> Res {
    let actor = ctx.agent()?;
    let c = ctx.client().await?;
    let mut policy = c.policy_get().await?.policy;
    let expected_version = Some(policy.version);
    change(&mut policy)?;
    let r = c.policy_set(PolicySetParams { actor, policy, expected_version }).await?;
    ctx.print(&r, || print(&r));
    Ok(Outcome::Done)
}

fn print(r: &PolicyResult) {
    let p = &r.policy;
    println!(
        "policy v{}: lead {}, approvers wait {} s (snapshot {})",
        p.version,
        p.lead.as_deref().unwrap_or("(none)"),
        p.timeout_seconds,
        r.file
    );
    if p.rules.is_empty() {
        println!("no gated tools");
    }
    for rule in &p.rules {
        let who = if rule.agents.is_empty() { "every agent".to_string() } else { rule.agents.join(", ") };
        let approver = rule.approver.as_deref().or(p.lead.as_deref()).unwrap_or("?");
        println!("  {}  for {who}, approved by {approver}", rule.tool);
    }
}
