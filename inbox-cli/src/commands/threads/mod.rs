//! The worker protocol: init, send, fetch, claim, renew, update, reply, done, fail,
//! cancel, list and show. Each handler builds its params from the flags, makes one call
//! (`show --agent` also marks the thread read) and prints the result.

use coord_cli::{CliError, body, json_object};
use coord_proto::api::InboxApiClient;
use coord_proto::types::*;

use crate::cli::*;
use crate::ctx::{Ctx, Outcome, Res};
use crate::output;

pub async fn init(ctx: &Ctx, a: InitArgs) -> Res {
    let p = InitParams {
        strict_agents: flag_pair(a.strict_agents, a.no_strict_agents),
        require_credentials: flag_pair(a.require_credentials, a.no_require_credentials),
        lead: a.lead,
        admins: (a.no_admins || !a.admins.is_empty()).then_some(a.admins),
    };
    let r = ctx.client().await?.init(p).await?;
    let on_off = |b: bool| if b { "on" } else { "off" };
    ctx.print(&r, || {
        println!(
            "initialized {} (schema v{}, {} journal)\ndaemon socket {}\nstrict agents {}\nrequire credentials {}\nlead {}\nadmins {}",
            r.db,
            r.schema_version,
            r.journal_mode,
            r.socket,
            on_off(r.strict_agents),
            on_off(r.require_credentials),
            r.lead.as_deref().unwrap_or("(none)"),
            if r.admins.is_empty() { "(none)".to_string() } else { r.admins.join(", ") }
        )
    });
    Ok(Outcome::Done)
}

pub async fn send(ctx: &Ctx, a: SendArgs) -> Res {
    let p = SendParams {
        from: ctx.agent_or(a.from, "from")?,
        to: a.to.unwrap_or_default(),
        to_task: a.to_task,
        // --to-peer: the peers of your own task (--task, else $COORD_TASK).
        to_peer: if a.to_peer {
            Some(a.task.clone().or_else(|| std::env::var("COORD_TASK").ok()).ok_or_else(|| {
                CliError::Invalid("--to-peer needs your task: pass --task TASK_ID (or set COORD_TASK)".into())
            })?)
        } else {
            None
        },
        expires_in_seconds: a.expires_in,
        thread_id: a.thread,
        subject: a.subject,
        run_id: a.run,
        task_id: if a.to_peer { None } else { a.task },
        kind: a.kind,
        priority: a.priority,
        category: a.category,
        requires_ack: flag_pair(a.requires_ack, a.no_ack),
        message: content(a.content)?,
    };
    let r = ctx.client().await?.send(p).await?;
    posted(ctx, "sent", r)
}

pub async fn fetch(ctx: &Ctx, a: FetchArgs) -> Res {
    let p = FetchParams { agent: ctx.agent()?, statuses: a.status, limit: a.limit, unread: a.unread };
    let r = ctx.client().await?.fetch(p).await?;
    threads(ctx, &r);
    Ok(if r.threads.is_empty() { Outcome::NoMatch } else { Outcome::Done })
}

pub async fn claim(ctx: &Ctx, a: LeaseArgs) -> Res {
    if a.lease_token.is_some() {
        return Err(CliError::Invalid("claim takes no --lease-token: it grants a new one".into()));
    }
    let p = ClaimParams { agent: ctx.agent()?, thread_id: a.thread, lease_seconds: a.lease_seconds };
    let r = ctx.client().await?.claim(p).await?;
    leased(ctx, "claimed", r)
}

pub async fn renew(ctx: &Ctx, a: LeaseArgs) -> Res {
    let p = RenewParams {
        agent: ctx.agent()?,
        thread_id: a.thread,
        lease_seconds: a.lease_seconds,
        lease_token: a.lease_token,
    };
    let r = ctx.client().await?.renew(p).await?;
    leased(ctx, "renewed", r)
}

pub async fn update(ctx: &Ctx, a: UpdateArgs) -> Res {
    let p = UpdateParams {
        agent: ctx.agent()?,
        thread_id: a.thread,
        status: a.status,
        lease_token: a.lease_token,
        message: content(a.content)?,
    };
    let r = ctx.client().await?.update(p).await?;
    let wait = (r.thread.status == ThreadStatus::Blocked).then(|| {
        format!("wait for the answer: inbox wait-reply --thread {} --after-event {}", r.thread.thread_id, r.event_id)
    });
    let out = posted(ctx, "updated", r);
    if let Some(line) = wait.filter(|_| !ctx.json) {
        println!("{line}");
    }
    out
}

pub async fn reply(ctx: &Ctx, a: ReplyArgs) -> Res {
    let p = ReplyParams {
        from: ctx.agent_or(a.from, "from")?,
        to: a.to,
        thread_id: a.thread,
        kind: a.kind,
        message: content(a.content)?,
    };
    let r = ctx.client().await?.reply(p).await?;
    posted(ctx, "replied", r)
}

pub async fn done(ctx: &Ctx, a: FinishArgs) -> Res {
    let p = finish(ctx, a)?;
    let r = ctx.client().await?.done(p).await?;
    posted(ctx, "done", r)
}

pub async fn fail(ctx: &Ctx, a: FinishArgs) -> Res {
    let p = finish(ctx, a)?;
    let r = ctx.client().await?.fail(p).await?;
    posted(ctx, "failed", r)
}

pub async fn cancel(ctx: &Ctx, a: CancelArgs) -> Res {
    let p =
        CancelParams { agent: ctx.agent()?, thread_id: a.thread, reason: a.reason, artifacts: artifacts(a.artifacts)? };
    let r = ctx.client().await?.cancel(p).await?;
    posted(ctx, "cancelled", r)
}

pub async fn list(ctx: &Ctx, a: ListArgs) -> Res {
    let p = ListParams {
        agent: ctx.agent.clone(),
        statuses: a.status,
        created_by: a.created_by,
        assigned_to: a.assigned_to,
        run_id: a.run,
        task_id: a.task,
        limit: a.limit,
    };
    threads(ctx, &ctx.client().await?.list(p).await?);
    Ok(Outcome::Done)
}

pub async fn show(ctx: &Ctx, a: ShowArgs) -> Res {
    let thread_id = a.thread.clone();
    let c = ctx.client().await?;
    let r = c.show(ShowParams { thread_id: a.thread }).await?;
    if let Some(agent) = &ctx.agent {
        c.mark_read(MarkReadParams { agent: agent.clone(), thread_id }).await?;
    }
    ctx.print(&r, || {
        output::thread_header(&r.thread);
        println!();
        for m in &r.messages {
            output::message_block(m);
        }
    });
    Ok(Outcome::Done)
}

/// `--yes` / `--no` flag pairs (clap makes them conflict): `Some(true)`, `Some(false)` or
/// neither.
fn flag_pair(yes: bool, no: bool) -> Option<bool> {
    if yes {
        Some(true)
    } else if no {
        Some(false)
    } else {
        None
    }
}

/// The params of done and fail.
fn finish(ctx: &Ctx, a: FinishArgs) -> Result<FinishParams, CliError> {
    Ok(FinishParams {
        agent: ctx.agent()?,
        thread_id: a.thread,
        lease_token: a.lease_token,
        message: content(a.content)?,
    })
}

fn content(c: Content) -> Result<MessageInput, CliError> {
    let body = body(c.body, c.body_file.as_deref())?;
    let payload_json = c.payload_json.as_deref().map(|p| json_object("payload-json", p)).transpose()?;
    Ok(MessageInput { summary: c.summary, body, payload_json, artifacts: artifacts(c.artifacts)? })
}

/// Pair --artifact with --artifact-kind and --artifact-metadata-json by position, each
/// path located in its repository (`artifacts::locate`).
fn artifacts(a: ArtifactArgs) -> Result<Vec<ArtifactInput>, CliError> {
    let n = a.paths.len();
    for (flag, len) in [("artifact-kind", a.kinds.len()), ("artifact-metadata-json", a.metadata.len())] {
        if len > 1 && len != n || (len == 1 && n == 0) {
            return Err(CliError::Invalid(format!(
                "--{flag} given {len} times for {n} --artifact: give one for all, or one per --artifact"
            )));
        }
    }
    let pick = |v: &Vec<String>, i: usize| if v.len() == 1 { v.first().cloned() } else { v.get(i).cloned() };
    let given = (0..n)
        .map(|i| {
            Ok(ArtifactInput {
                path: a.paths[i].clone(),
                kind: pick(&a.kinds, i),
                metadata_json: pick(&a.metadata, i).map(|m| json_object("artifact-metadata-json", &m)).transpose()?,
            })
        })
        .collect::<Result<Vec<_>, CliError>>()?;
    Ok(crate::artifacts::locate_all(given))
}

/// A message written: `verb` says how (sent, updated, replied, ...).
fn posted(ctx: &Ctx, verb: &str, r: MessageResult) -> Res {
    ctx.print(&r, || {
        let (m, t) = (&r.message, &r.thread);
        println!("{verb}: {} {} -> {} in {} [{}]", m.message_id, m.from_agent, m.to_agent, t.thread_id, t.status);
        println!("  {}  (event {})", m.summary, r.event_id);
    });
    Ok(Outcome::Done)
}

/// A lease granted (`claimed`) or extended (`renewed`).
fn leased(ctx: &Ctx, verb: &str, r: LeaseResult) -> Res {
    ctx.print(&r, || {
        let l = &r.lease;
        println!("{verb} {} by {} until {} (generation {})", l.thread_id, l.agent_id, l.expires_at, l.generation);
        println!("  lease token {}", l.lease_token);
        println!("  subject: {}", r.thread.subject);
    });
    Ok(Outcome::Done)
}

fn threads(ctx: &Ctx, r: &ThreadsResult) {
    ctx.print(r, || {
        if r.threads.is_empty() {
            println!("no matching threads");
        } else {
            output::thread_table(&r.threads);
        }
    });
}
