//! Team control from the command line, one file per command: any typed message
//! (`control`, in `send.rs`), the open requests (`requests`), answering them (`permit`,
//! `approve-plan`), `idle`, `shutdown` and `plan` (which can wait for their answer), and
//! `progress` lines. Each is one call, plus one subscription for `--wait`.

pub mod approve_plan;
pub mod idle;
pub mod permit;
pub mod plan;
pub mod progress;
pub mod requests;
pub mod send;
pub mod shutdown;

use std::path::PathBuf;

use std::time::Duration;

use coord_cli::{CliError, body, json_object};
use coord_client::Client;
use coord_proto::api::ControlApiClient;
use coord_proto::types::*;
use serde_json::{Value, json};

use crate::commands::args::*;
use coord_cli::{Command, Ctx, Outcome, Res};

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
            Ok(if yes(&m) { Outcome::Done } else { Outcome::Conflict })
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
