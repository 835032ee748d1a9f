//! `inbox policy ...`: the permission policy. Changes read the policy, edit it and write it
//! back with the version they read (`policy.set` with `expected_version`), so two
//! concurrent edits never lose one another: the later one is refused and says so.

use coord_cli::{CliError, json_object};
use coord_proto::api::ControlApiClient;
use coord_proto::types::*;

use crate::cli::*;
use crate::ctx::{Ctx, Outcome, Res};

pub async fn run(ctx: &Ctx, cmd: PolicyCmd) -> Res {
    match cmd {
        PolicyCmd::Show => {
            let r = ctx.client().await?.policy_get().await?;
            ctx.print(&r, || print(&r));
            Ok(Outcome::Done)
        }
        PolicyCmd::Check(a) => check(ctx, a).await,
        PolicyCmd::Gate(a) => {
            edit(ctx, |p| {
                p.rules.retain(|r| !(r.tool == a.rule && r.agents == a.agents));
                p.rules.push(PolicyRule {
                    tool: a.rule.clone(),
                    agents: a.agents.clone(),
                    approver: a.approver.clone(),
                });
                Ok(())
            })
            .await
        }
        PolicyCmd::Ungate(a) => {
            edit(ctx, |p| {
                let before = p.rules.len();
                p.rules.retain(|r| r.tool != a.rule);
                if p.rules.len() == before {
                    return Err(CliError::Invalid(format!("no rule '{}' in the policy", a.rule)));
                }
                Ok(())
            })
            .await
        }
        PolicyCmd::Lead(a) => {
            edit(ctx, |p| {
                p.lead = Some(a.name.clone());
                Ok(())
            })
            .await
        }
        PolicyCmd::Timeout(a) => {
            edit(ctx, |p| {
                p.timeout_seconds = a.seconds;
                Ok(())
            })
            .await
        }
        PolicyCmd::Clear => {
            edit(ctx, |p| {
                p.rules.clear();
                Ok(())
            })
            .await
        }
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

async fn check(ctx: &Ctx, a: PolicyCheckArgs) -> Res {
    let cwd = match a.cwd {
        Some(d) => d,
        None => std::env::current_dir().map_err(|e| CliError::Internal(e.to_string()))?,
    };
    let p = PolicyCheckParams {
        agent: ctx.agent()?,
        tool_name: a.tool,
        tool_input: json_object("input", &a.input)?,
        cwd: Some(cwd.display().to_string()),
    };
    let r = ctx.client().await?.policy_check(p).await?;
    ctx.print(&r, || match (&r.rule, &r.approver) {
        (Some(rule), Some(approver)) => println!("gated by {}: {approver} approves", rule.tool),
        _ => println!("not gated"),
    });
    Ok(if r.gated { Outcome::Done } else { Outcome::NoMatch })
}
