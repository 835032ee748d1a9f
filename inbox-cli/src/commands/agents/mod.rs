//! The `bb agent` commands of `inbox`: the agent registry (`agent register|list|show|
//! heartbeat`), mail with read/ack, file-scope reservations and the status summary, one
//! call each. Only an `--agent` given on the command line (not `COORD_AGENT`) narrows the
//! `reservations` and `status` filters.

use coord_cli::CliError;
use coord_proto::api::{AgentsApiClient, InboxApiClient, MailApiClient};
use coord_proto::types::*;
use serde_json::json;

use crate::cli::*;
use crate::ctx::{Ctx, Outcome, Res};
use crate::output;

pub async fn register(ctx: &Ctx, a: RegisterArgs) -> Res {
    let p = RegisterParams {
        agent_id: a.name,
        role: a.role,
        display_name: a.display,
        force_update: a.force_update,
        rotate_secret: a.rotate_secret,
    };
    let r = ctx.client().await?.agent_register(p).await?;
    ctx.print(&r, || {
        output::agent_block(&r.agent);
        if let Some(secret) = &r.secret {
            println!("  secret {secret}");
            println!("  (shown once; the agent's commands read it from {AGENT_SECRET_ENV})");
        }
    });
    Ok(Outcome::Done)
}

pub async fn list(ctx: &Ctx, a: AgentListArgs) -> Res {
    let p = AgentListParams { role: a.role, status: a.status, include_unregistered: !a.registered };
    let r = ctx.client().await?.agent_list(p).await?;
    ctx.print(&r, || output::agent_table(&r.agents));
    Ok(Outcome::Done)
}

pub async fn show(ctx: &Ctx) -> Res {
    let p = AgentRef { agent_id: ctx.agent()? };
    let a = ctx.client().await?.agent_show(p).await?;
    ctx.print(&json!({ "agent": a }), || output::agent_block(&a));
    Ok(Outcome::Done)
}

pub async fn heartbeat(ctx: &Ctx, a: HeartbeatArgs) -> Res {
    let p = HeartbeatParams { agent_id: ctx.agent()?, status: a.status };
    let r = ctx.client().await?.agent_heartbeat(p).await?;
    ctx.print(&r, || output::agent_block(&r.agent));
    Ok(Outcome::Done)
}

pub async fn mail(ctx: &Ctx, a: MailArgs) -> Res {
    let p = MailParams { agent: ctx.agent()?, state: a.state, task_id: a.task, limit: a.limit };
    let r = ctx.client().await?.mail_list(p).await?;
    ctx.print(&r, || output::mail_table(&r.mail));
    Ok(Outcome::Done)
}

pub async fn read(ctx: &Ctx, a: MailMsgArgs) -> Res {
    let p = MailRef { agent: ctx.agent()?, message_id: a.message };
    let r = ctx.client().await?.mail_read(p).await?;
    mail_changed(ctx, &r);
    Ok(Outcome::Done)
}

pub async fn ack(ctx: &Ctx, a: MailMsgArgs) -> Res {
    let p = MailRef { agent: ctx.agent()?, message_id: a.message };
    let r = ctx.client().await?.mail_ack(p).await?;
    mail_changed(ctx, &r);
    Ok(Outcome::Done)
}

pub async fn reserve(ctx: &Ctx, a: ReserveArgs) -> Res {
    let task = a.task.filter(|t| !t.trim().is_empty()).ok_or_else(|| {
        CliError::Invalid(format!(
            "say which task you reserve {} for: pass --task TASK_ID (or set COORD_TASK)",
            a.scope
        ))
    })?;
    let p = ReserveParams {
        agent: ctx.agent()?,
        scope: a.scope,
        task_id: Some(task),
        ttl_minutes: a.ttl,
        shared: a.shared,
        takeover_stale: a.takeover_stale,
    };
    let r = ctx.client().await?.reserve(p).await?;
    ctx.print(&r, || {
        for t in &r.taken_over {
            println!("took over {}'s stale reservation of {}", t.agent_id, t.scope);
        }
        let verb = if r.renewed { "extended" } else { "reserved" };
        println!("{verb}: {}", output::reservation_line(&r.reservation));
    });
    Ok(Outcome::Done)
}

pub async fn release(ctx: &Ctx, a: ReleaseArgs) -> Res {
    let p = ReleaseParams { agent: ctx.agent()?, scope: a.scope };
    let r = ctx.client().await?.release(p).await?;
    ctx.print(&r, || println!("released: {}", output::reservation_line(&r.reservation)));
    Ok(Outcome::Done)
}

pub async fn reservations(ctx: &Ctx, a: ReservationsArgs) -> Res {
    let p = ReservationListParams {
        agent: ctx.explicit_agent(),
        task_id: a.task,
        path: a.path,
        include_history: a.all,
        limit: a.limit,
    };
    let r = ctx.client().await?.reservation_list(p).await?;
    ctx.print(&r, || output::reservation_table(&r.reservations));
    Ok(Outcome::Done)
}

pub async fn status(ctx: &Ctx, a: StatusArgs) -> Res {
    let p = StatusParams { task_id: a.task, agent: ctx.explicit_agent() };
    let r = ctx.client().await?.status(p).await?;
    ctx.print(&r, || output::status(&r));
    Ok(Outcome::Done)
}

/// A message read or acked (or already so).
fn mail_changed(ctx: &Ctx, r: &MailItemResult) {
    ctx.print(r, || {
        let m = &r.mail;
        let change = if r.event_id.is_some() { "now" } else { "already" };
        println!("{} is {change} {} for {}", m.message_id, m.state, m.to_agent);
        output::mail_block(m);
    });
}
