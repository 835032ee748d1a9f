//! Team control from the command line: any typed message (`control`), the open requests
//! (`requests`), answering them (`permit`, `approve-plan`), `idle`, `shutdown` and `plan`
//! (which can wait for their answer), and `progress` lines. Each is one call, plus one
//! subscription for `--wait`.

use std::time::Duration;

use coord_cli::{CliError, body, json_object};
use coord_client::Client;
use coord_proto::api::ControlApiClient;
use coord_proto::types::*;
use serde_json::{Value, json};

use crate::cli::*;
use crate::ctx::{Ctx, Outcome, Res};

fn params(ctx: &Ctx, msg_type: MessageType, payload: Value) -> Result<ControlSendParams, CliError> {
    Ok(ControlSendParams {
        from: ctx.agent_or(None, "agent")?,
        msg_type: msg_type.as_str().to_string(),
        payload,
        ..Default::default()
    })
}

/// Send one typed message and print what was written.
async fn send(ctx: &Ctx, p: ControlSendParams) -> Result<ControlSendResult, CliError> {
    let r = ctx.client().await?.control_send(p).await?;
    sent(ctx, &r);
    Ok(r)
}

fn sent(ctx: &Ctx, r: &ControlSendResult) {
    ctx.print(r, || {
        let m = &r.message;
        let request = r.request_id.as_deref().map_or(String::new(), |id| format!(" (request {id})"));
        println!(
            "sent {} {}: {} -> {} in {}{request}",
            m.msg_type.as_deref().unwrap_or(""),
            m.message_id,
            m.from_agent,
            m.to_agent,
            r.thread.thread_id
        );
        println!("  {}  (event {})", m.summary, r.event_id);
    });
}

pub async fn control(ctx: &Ctx, a: ControlArgs) -> Res {
    let mut p = params(ctx, MessageType::from_name(&a.msg_type), json_object("payload", &a.payload)?)?;
    (p.to, p.summary, p.thread_id, p.run_id, p.task_id, p.priority, p.message_id) =
        (a.to, a.summary, a.thread, a.run, a.task, a.priority, a.message_id);
    send(ctx, p).await?;
    Ok(Outcome::Done)
}

pub async fn requests(ctx: &Ctx, a: RequestsArgs) -> Res {
    let mine = a.to.is_none() && a.from.is_none() && a.run.is_none() && a.request.is_none();
    let p = RequestsParams {
        request_id: a.request,
        to: if mine {
            Some(ctx.agent.clone().ok_or_else(|| {
                CliError::Invalid(
                    "--agent is required to list the requests to you (or filter with --to, --from, --run or --request)"
                        .into(),
                )
            })?)
        } else {
            a.to
        },
        from: a.from,
        run_id: a.run,
        types: a.types,
        include_closed: a.all,
        limit: a.limit,
    };
    let r = ctx.client().await?.control_requests(p).await?;
    ctx.print(&r, || print_requests(&r.requests));
    Ok(if r.requests.is_empty() { Outcome::NoMatch } else { Outcome::Done })
}

/// A table of requests, with how to answer the open ones.
pub fn print_requests(requests: &[RequestView]) {
    if requests.is_empty() {
        println!("no matching requests");
        return;
    }
    for q in requests {
        println!("{} [{}] {} {} -> {}: {}", q.request_id, q.status, q.msg_type, q.from, q.to, q.summary);
        if q.msg_type == MessageType::PermissionRequest.as_str() {
            println!("    input: {}", q.payload.get("input").unwrap_or(&Value::Null));
        }
        if let Some(plan) = q.payload.get("plan").and_then(Value::as_str) {
            for line in plan.lines().take(20) {
                println!("    | {line}");
            }
        }
        if let Some(r) = &q.response {
            println!("    answered by {}: {}", r.from_agent, r.summary);
        }
    }
}

pub async fn permit(ctx: &Ctx, a: PermitArgs) -> Res {
    let updated_input = a.updated_input.as_deref().map(|t| json_object("updated-input", t)).transpose()?;
    let payload =
        PermissionResponsePayload { request_id: a.request, approved: a.allow, updated_input, reason: a.reason };
    send(ctx, params(ctx, MessageType::PermissionResponse, json!(payload))?).await?;
    Ok(Outcome::Done)
}

pub async fn approve_plan(ctx: &Ctx, a: ApprovePlanArgs) -> Res {
    let payload = PlanApprovalResponsePayload {
        request_id: a.request,
        approved: !a.reject,
        feedback: a.feedback,
        permission_mode: a.permission_mode,
    };
    send(ctx, params(ctx, MessageType::PlanApprovalResponse, json!(payload))?).await?;
    Ok(Outcome::Done)
}

pub async fn idle(ctx: &Ctx, a: IdleArgs) -> Res {
    let payload = IdleNotificationPayload {
        idle_reason: a.reason,
        summary: a.summary,
        completed_task_id: a.task.clone(),
        completed_status: a.completed_status,
        failure_reason: a.failure_reason,
    };
    let mut p = params(ctx, MessageType::IdleNotification, json!(payload))?;
    (p.to, p.run_id, p.task_id) = (a.to, a.run, a.task);
    send(ctx, p).await?;
    Ok(Outcome::Done)
}

pub async fn shutdown(ctx: &Ctx, a: ShutdownArgs) -> Res {
    let payload = ShutdownRequestPayload { reason: a.reason, expires_in_seconds: a.expires_in, ..Default::default() };
    let mut p = params(ctx, MessageType::ShutdownRequest, json!(payload))?;
    (p.to, p.run_id, p.task_id) = (Some(a.to), a.run, a.task);
    if !a.wait {
        send(ctx, p).await?;
        return Ok(Outcome::Done);
    }
    let r = ctx.client().await?.control_send(p).await?;
    let answers = [MessageType::ShutdownApproved, MessageType::ShutdownRejected];
    wait_answer(ctx, &r, &answers, a.timeout_seconds, |m| m.msg_type.as_deref() == Some("shutdown_approved")).await
}

pub async fn plan(ctx: &Ctx, a: PlanArgs) -> Res {
    let plan = body(a.plan, a.plan_file.as_deref())?.unwrap_or_default();
    let payload = PlanApprovalRequestPayload { request_id: String::new(), plan };
    let mut p = params(ctx, MessageType::PlanApprovalRequest, json!(payload))?;
    (p.to, p.run_id, p.task_id) = (a.to, a.run, a.task);
    if !a.wait {
        send(ctx, p).await?;
        return Ok(Outcome::Done);
    }
    let r = ctx.client().await?.control_send(p).await?;
    let approved = |m: &Message| m.payload_json.get("approved") == Some(&Value::Bool(true));
    wait_answer(ctx, &r, &[MessageType::PlanApprovalResponse], a.timeout_seconds, approved).await
}

/// The answer to a request just sent, within the timeout: exit 0 when `yes` says so, 20
/// when it is a refusal, 10 when none came. One envelope: the request and its answer.
async fn wait_answer(
    ctx: &Ctx,
    sent: &ControlSendResult,
    types: &[MessageType],
    timeout: Option<u64>,
    yes: impl Fn(&Message) -> bool,
) -> Res {
    let c = ctx.client().await?;
    match answer(c, &sent.thread.thread_id, sent.event_id, types, timeout.map(Duration::from_secs)).await? {
        Some(m) => {
            ctx.print(&json!({"request": sent, "woke": true, "answer": m}), || {
                println!(
                    "request {} answered by {}: {}",
                    sent.request_id.as_deref().unwrap_or(""),
                    m.from_agent,
                    m.summary
                )
            });
            Ok(if yes(&m) { Outcome::Done } else { Outcome::Refused })
        }
        None => {
            ctx.print(&json!({"request": sent, "woke": false, "answer": null}), || {
                println!("request {}: no answer within the timeout", sent.request_id.as_deref().unwrap_or(""))
            });
            Ok(Outcome::NoMatch)
        }
    }
}

/// Wait (a server-side subscription) for a message of one of `types` in a thread, after
/// the cursor; `None` on timeout.
pub async fn answer(
    c: &Client,
    thread_id: &str,
    after_event: i64,
    types: &[MessageType],
    timeout: Option<Duration>,
) -> Result<Option<Message>, coord_client::ClientError> {
    let filter = EventFilter {
        thread_id: Some(thread_id.to_string()),
        after_event: Some(after_event),
        message_types: types.iter().map(|t| t.as_str().to_string()).collect(),
        ..Default::default()
    };
    let mut sub = c.subscribe(filter).await?;
    Ok(sub.next_within(timeout).await?.and_then(|e| e.message))
}

pub async fn progress(ctx: &Ctx, a: ProgressArgs) -> Res {
    let meta = a.meta.as_deref().map(|m| json_object("meta", m)).transpose()?;
    let p = ProgressParams {
        agent: ctx.agent()?,
        task_id: a.task,
        line_type: a.line_type,
        tool_use_id: a.tool_use_id,
        data: a.text,
        meta,
    };
    // A tool started by a session reports to the daemon its environment names.
    let socket = std::env::var_os(coord_inbox::PROGRESS_ENV).filter(|s| !s.is_empty());
    let client = match socket {
        Some(s) => Client::connect_socket(std::path::Path::new(&s)).await.map(Some),
        None => ctx.client().await.map(|_| None).map_err(|e| match e {
            CliError::Client(c) => c,
            other => coord_client::ClientError::Transport(other.to_string()),
        }),
    };
    // Progress is lossy: with no daemon to take it, the line is dropped and the tool that
    // reported it goes on (a script under `set -e` must not fail for it).
    let client = match client {
        Err(e @ (coord_client::ClientError::Connect { .. } | coord_client::ClientError::DaemonUnavailable { .. })) => {
            let reason = e.to_string();
            ctx.print(&json!({"dropped": true, "reason": reason}), || {
                eprintln!("inbox: progress line dropped: {reason}")
            });
            return Ok(Outcome::Done);
        }
        other => other?,
    };
    let r = match &client {
        Some(c) => c.progress_report(p).await?,
        None => ctx.client().await?.progress_report(p).await?,
    };
    ctx.print(&r, || println!("progress line {}", r.seq));
    Ok(Outcome::Done)
}
