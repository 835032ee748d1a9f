//! The session mailbox commands of `inbox`: check, pending, withdraw, peer link and hook
//! install (the Claude Code hook handler itself is in `claude_hook`).

use coord_cli::CliError;
use coord_proto::api::MailApiClient;
use coord_proto::types::*;
use serde_json::json;

use crate::cli::*;
use crate::ctx::{Ctx, Outcome, Res};
use crate::output;

pub async fn check(ctx: &Ctx, a: MailboxArgs) -> Res {
    let p = CheckParams { agent: ctx.agent.clone(), task_id: a.task, ..Default::default() };
    let r = ctx.client().await?.mail_check(p).await?;
    ctx.print(&r, || {
        if r.messages.is_empty() {
            println!("no new messages");
        } else {
            print!("{}", output::agent_context(&r.messages));
        }
    });
    Ok(Outcome::Done)
}

pub async fn pending(ctx: &Ctx, a: MailboxArgs) -> Res {
    let p = PendingParams { agent: ctx.agent.clone(), task_id: a.task, remind: false };
    let r = ctx.client().await?.mail_pending(p).await?;
    ctx.print(&json!({"pending": r.pending, "urgent": r.urgent}), || {
        println!("{} pending ({} urgent)", r.pending, r.urgent)
    });
    Ok(Outcome::Done)
}

pub async fn withdraw(ctx: &Ctx, a: MailMsgArgs) -> Res {
    let p = MailRef { agent: ctx.agent()?, message_id: a.message };
    let r = ctx.client().await?.mail_withdraw(p).await?;
    ctx.print(&r, || println!("withdrew {} from {}", r.message_id, r.recipients.join(", ")));
    Ok(Outcome::Done)
}

pub async fn peer_link(ctx: &Ctx, a: PeerLinkArgs) -> Res {
    let p = match a.tasks.as_slice() {
        [x, y] => PeerLinkParams { task_id: x.clone(), peer_task_id: y.clone() },
        _ => return Err(CliError::Invalid("peer link takes exactly two --task".into())),
    };
    let r = ctx.client().await?.peers_link(p).await?;
    ctx.print(&r, || println!("{} is linked with {}", r.task_id, r.peers.join(", ")));
    Ok(Outcome::Done)
}

pub async fn hook_install(ctx: &Ctx, a: HookInstallArgs) -> Res {
    let agent = ctx.agent.clone().ok_or_else(|| {
        CliError::Invalid(
            "hooks act for an agent: pass --agent NAME (or set COORD_AGENT); without one they would do nothing".into(),
        )
    })?;
    let cwd = std::env::current_dir().map_err(|e| CliError::Internal(e.to_string()))?;
    let dir = a.dir.map_or(cwd.clone(), |d| cwd.join(d));
    let clients = crate::codex_setup::clients(a.client, &dir);
    if a.trust_global && !clients.iter().any(|c| c == "codex") {
        return Err(CliError::Invalid(
            "--trust-global trusts the worktree for Codex: use it with --client codex (or all)".into(),
        ));
    }
    let p = InstallHooksParams {
        dir: dir.display().to_string(),
        agent: Some(agent),
        task_id: a.task,
        thread_id: None,
        inbox_bin: std::env::current_exe().ok().map(|p| p.display().to_string()),
        run_id: a.run,
        approve_mcp: a.approve_mcp,
        clients,
    };
    let r = ctx.client().await?.install_hooks(p).await?;
    let trust = match a.trust_global {
        true => Some(crate::codex_setup::trust_global(ctx, &std::fs::canonicalize(&dir).unwrap_or(dir.clone()))?),
        false => None,
    };
    let mut out = serde_json::to_value(&r).map_err(|e| CliError::Internal(e.to_string()))?;
    out["trust_global"] = serde_json::to_value(&trust).unwrap_or_default();
    ctx.print(&out, || {
        for f in &r.files {
            println!("wrote {f}");
        }
        for n in &r.notes {
            println!("note: {n}");
        }
        println!(
            "(for {}; kept out of git: listed in .git/info/exclude, or ignored in orch worktrees)",
            r.clients.join(", ")
        );
        if r.clients.iter().any(|c| c == "codex") && !a.trust_global {
            println!("Codex loads .codex/ only in a trusted project, with trusted hooks: see `inbox hook doctor`");
        }
    });
    Ok(Outcome::Done)
}
