//! `inbox hook claude <event>`: the Claude Code hook handler, which Codex runs too (it
//! sends Claude-shaped hook JSON; `--client codex` adapts the answers). It answers one hook with the
//! hook's JSON on stdout when the mailbox has something to say, and never fails the
//! session: with no daemon (it never starts one), no identity or bad input it prints
//! nothing and succeeds. Every hook first honours a shutdown request addressed to the
//! agent (it answers `shutdown_approved` and tells Claude Code to stop); Stop also tells
//! the lead the agent went idle. The permission hooks are in `permission_hook`.

use std::io::Read;
use std::time::Duration;

use coord_client::Client;
use coord_proto::api::{AgentsApiClient, ControlApiClient, InboxApiClient, MailApiClient};
use coord_proto::types::*;
use serde_json::{Value, json};

use coord_cli::{Ctx, Outcome, Res};

use super::client_shape::{check_inbox_tool, event_name};
use super::{AgentClient, HookClaudeArgs, HookEvent};
use crate::output::agent_context;

/// How long a hook waits for an absent daemon before giving up silently.
pub const HOOK_CONNECT: Duration = Duration::from_millis(100);
/// How long a hook waits for its calls once connected.
const HOOK_CALLS: Duration = Duration::from_secs(3);

pub async fn answer(ctx: &Ctx, a: HookClaudeArgs) -> Res {
    // The hook's JSON is drained but not needed: what to say depends only on the mailbox
    // (`stop_hook_active` needs no case, since what blocked a stop is delivered by then).
    // The permission hooks (`permission_hook`) are routed there by `hooks::claude`.
    let _ = std::io::stdin().read_to_string(&mut String::new());
    let agent = ctx.agent.clone();
    if agent.is_none() && a.task.is_none() {
        return Ok(Outcome::Done);
    }
    let mut opts = ctx.connect_options().clone();
    opts.autostart = false;
    let Ok(Ok(client)) = tokio::time::timeout(HOOK_CONNECT, Client::connect(opts)).await else {
        return Ok(Outcome::Done);
    };
    let check = check_command(ctx, a.task.as_deref(), a.mcp, a.client);
    if let Ok(Some(answer)) = tokio::time::timeout(HOOK_CALLS, hook_output(&client, agent, a, &check)).await {
        println!("{answer}");
    }
    Ok(Outcome::Done)
}

/// How the session reads its mail, said so that it works as typed in the session (whose
/// environment has no `COORD_AGENT`): the MCP tool when the session has it, and this very
/// `inbox` with the database, agent and task spelled out.
///
/// In a Codex session with the MCP server, only the tool: Codex's `workspace-write` sandbox
/// keeps the model's shell commands from the daemon's socket (the MCP server runs outside).
fn check_command(ctx: &Ctx, task: Option<&str>, mcp: bool, client: AgentClient) -> String {
    if mcp && client == AgentClient::Codex {
        return format!(
            "call the `check_inbox` tool of the `{0}` MCP server (mcp__{0}__check_inbox)",
            coord_client::codex::MCP_SERVER
        );
    }
    let sh = |s: &str| shlex::try_quote(s).map_or_else(|_| s.to_string(), |q| q.into_owned());
    let exe = std::env::current_exe().map_or_else(|_| "inbox".to_string(), |p| p.display().to_string());
    let mut cmd = format!("{} --db {}", sh(&exe), sh(&ctx.connect_options().paths.db.display().to_string()));
    if let Some(a) = &ctx.agent {
        cmd.push_str(&format!(" --agent {}", sh(a)));
    }
    cmd.push_str(" check");
    if let Some(t) = task {
        cmd.push_str(&format!(" --task {}", sh(t)));
    }
    if mcp && matches!(client, AgentClient::Gemini | AgentClient::Opencode) {
        format!("call the `{}` tool, or run `{cmd}`", check_inbox_tool(client))
    } else if mcp {
        format!("call the `check_inbox` tool (MCP server `coordd`), or run `{cmd}`")
    } else {
        format!("run `{cmd}`")
    }
}

/// The hook's JSON answer, if it has something to say.
async fn hook_output(c: &Client, agent: Option<String>, a: HookClaudeArgs, check_how: &str) -> Option<Value> {
    let stop = async {
        match &agent {
            Some(me) => shutdown_if_asked(c, me, a.task.as_deref()).await,
            None => None,
        }
    };
    // After each tool the shutdown check runs beside the mailbox calls (a reminder marked
    // for a session that stops is harmless); the other hooks check first, so that mail
    // they deliver is never lost to a stop.
    if a.event == HookEvent::PostToolUse {
        let (stop, context) = tokio::join!(stop, mailbox_output(c, agent.clone(), &a, check_how));
        return stop.map(|s| stop_for(a.client, a.event, s)).or(context);
    }
    if let Some(stop) = stop.await {
        return Some(stop_for(a.client, a.event, stop));
    }
    mailbox_output(c, agent, &a, check_how).await
}

/// A stop (`continue: false`) as the client honours it. Codex does not end a session on
/// PostToolUse `continue: false` (it only replaces the tool's output), so a Codex session
/// is told to stop by a block whose reason says so; the request is answered by then, so
/// the next Stop lets it end. (The launch bridge stops the process in any case.)
fn stop_for(client: AgentClient, event: HookEvent, stop: Value) -> Value {
    let codex_blocks = matches!(event, HookEvent::PostToolUse | HookEvent::Stop | HookEvent::UserPromptSubmit);
    if client != AgentClient::Codex || !codex_blocks {
        return stop;
    }
    let why = stop["stopReason"].as_str().unwrap_or("Shutdown requested");
    json!({"decision": "block", "reason": format!("{why}. Stop now: end your turn, with no more tool calls.")})
}

/// What the mailbox has to say for this hook.
async fn mailbox_output(c: &Client, agent: Option<String>, a: &HookClaudeArgs, check_how: &str) -> Option<Value> {
    let task_id = a.task.clone();
    let heartbeat = |status: AgentStatus| {
        let agent = agent.clone();
        async move {
            if let Some(agent_id) = agent {
                let _ = c.agent_heartbeat(HeartbeatParams { agent_id, status: Some(status) }).await;
            }
        }
    };
    let check = |priorities: Vec<Priority>| {
        c.mail_check(CheckParams { agent: agent.clone(), task_id: task_id.clone(), priorities, ..Default::default() })
    };
    let context_for = |event: &'static str, messages: &[MailItem]| {
        json!({"hookSpecificOutput": {"hookEventName": event_name(a.client, event), "additionalContext": format!(
            "New inbox messages ({}). Treat them as user input, with priority over your current plan:\n\n{}",
            messages.len(), agent_context(messages))}})
    };
    match a.event {
        HookEvent::PostToolUse => {
            let p = PendingParams { agent: agent.clone(), task_id: task_id.clone(), remind: true };
            let (_, r) = tokio::join!(heartbeat(AgentStatus::Busy), c.mail_pending(p));
            let r = r.ok().filter(|r| !r.new.is_empty())?;
            let urgent = if r.urgent > 0 { format!(", {} urgent", r.urgent) } else { String::new() };
            let text = format!(
                "Inbox: {} pending message(s){urgent}, new from {}. Read them now: {check_how}; then continue.",
                r.pending,
                senders(&r.new)
            );
            Some(
                json!({"hookSpecificOutput": {"hookEventName": event_name(a.client, "PostToolUse"), "additionalContext": text}}),
            )
        }
        HookEvent::Stop => {
            // Only mail not delivered before blocks, so the same messages never block twice:
            // at most one block per batch of new mail, whatever the client sends
            // (`stop_hook_active` is not trusted: Codex sets it but does not cap blocks).
            let wanted = vec![Priority::Urgent, Priority::High, Priority::Normal];
            let r = check(wanted).await.ok().filter(|r| !r.messages.is_empty());
            let Some(r) = r else {
                heartbeat(AgentStatus::Idle).await;
                if let Some(me) = &agent {
                    tell_idle(c, me, a).await;
                }
                return None;
            };
            Some(json!({"decision": "block", "reason": format!(
                "Before stopping, handle {} new inbox message(s), as user input:\n\n{}",
                r.messages.len(), agent_context(&r.messages))}))
        }
        HookEvent::UserPromptSubmit => {
            let (_, r) = tokio::join!(heartbeat(AgentStatus::Busy), check(vec![]));
            let r = r.ok().filter(|r| !r.messages.is_empty())?;
            Some(context_for("UserPromptSubmit", &r.messages))
        }
        HookEvent::SessionStart => {
            let (_, r) = tokio::join!(heartbeat(AgentStatus::Idle), check(vec![]));
            let r = r.ok().filter(|r| !r.messages.is_empty())?;
            Some(context_for("SessionStart", &r.messages))
        }
        HookEvent::PreToolUse | HookEvent::PermissionRequest => None,
    }
}

/// If a shutdown request to `agent` is open (not expired) and aimed at this session (its
/// `task`, or no task): answer it (`shutdown_approved`) and return the JSON that stops the
/// session. A request for another task's session is left for that session.
pub async fn shutdown_if_asked(c: &Client, agent: &str, task: Option<&str>) -> Option<Value> {
    let p = RequestsParams {
        to: Some(agent.to_string()),
        types: vec![MessageType::ShutdownRequest.as_str().to_string()],
        ..Default::default()
    };
    let mine = |r: &RequestView| r.task_id.is_empty() || Some(r.task_id.as_str()) == task;
    let request = c.control_requests(p).await.ok()?.requests.into_iter().find(mine)?;
    let approve = ControlSendParams {
        from: agent.to_string(),
        msg_type: MessageType::ShutdownApproved.as_str().to_string(),
        payload: json!(ShutdownApprovedPayload { request_id: request.request_id.clone() }),
        ..Default::default()
    };
    c.control_send(approve).await.ok()?;
    let why = request.payload.get("reason").and_then(Value::as_str).map_or(String::new(), |r| format!(": {r}"));
    Some(json!({"continue": false, "stopReason": format!("Shutdown requested by {}{why}", request.from)}))
}

/// Tell the lead the session went idle (the run's creator, else the policy's lead; with
/// neither, nobody is told). The task's thread says how the work ended.
async fn tell_idle(c: &Client, agent: &str, a: &HookClaudeArgs) {
    let mut completed_status = None;
    if let Some(task) = &a.task {
        let p = ListParams {
            assigned_to: Some(agent.to_string()),
            task_id: Some(task.clone()),
            run_id: a.run.clone(),
            limit: Some(1),
            ..Default::default()
        };
        if let Some(t) = c.list(p).await.ok().and_then(|r| r.threads.into_iter().next()) {
            completed_status = match t.status {
                ThreadStatus::Done => Some("resolved"),
                ThreadStatus::Blocked => Some("blocked"),
                ThreadStatus::Failed => Some("failed"),
                _ => None,
            };
        }
    }
    // A session whose task failed is idle because it failed; otherwise it is available.
    let idle_reason = if completed_status == Some("failed") { IdleReason::Failed } else { IdleReason::Available };
    let payload = IdleNotificationPayload {
        idle_reason,
        summary: None,
        completed_task_id: a.task.clone(),
        completed_status: completed_status.map(str::to_string),
        failure_reason: None,
    };
    let p = ControlSendParams {
        from: agent.to_string(),
        msg_type: MessageType::IdleNotification.as_str().to_string(),
        payload: json!(payload),
        run_id: a.run.clone(),
        task_id: a.task.clone(),
        ..Default::default()
    };
    let _ = c.control_send(p).await;
}

fn senders(messages: &[MailItem]) -> String {
    let mut s: Vec<&str> = messages.iter().map(|m| m.from_agent.as_str()).collect();
    s.sort();
    s.dedup();
    s.join(", ")
}
