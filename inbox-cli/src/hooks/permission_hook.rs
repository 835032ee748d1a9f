//! `inbox hook claude pre-tool-use` and `permission-request`: gate a session's tool call by
//! the permission policy.
//!
//! 1. The policy snapshot the daemon writes beside the database is read and matched here,
//!    with no daemon round trip: a call no rule gates ends at once with no output, and so
//!    does a session with no agent, no snapshot or a snapshot that cannot be read.
//! 2. A gated call connects (never starting a daemon), first honours a pending shutdown
//!    request (answering it and stopping the session), then sends a `permission_request`
//!    to the rule's approver and waits, bounded, for the `permission_response` in the
//!    request's thread (a server-side subscription).
//! 3. The answer becomes Claude Code's decision JSON: allow or deny with the reason, and
//!    `updatedInput` when the approver changed the input. When the call matched only once
//!    resolved (`bash -c 'git push'`) or could not be read (`eval "$X"`), the gate's reason
//!    goes with the request (for the approver) and with a denial (for the model). With no answer in time the
//!    request is withdrawn (cancelled) and nothing is printed: Claude Code's own permission
//!    flow decides, never a silent allow; in a `bypassPermissions` session (the launch
//!    bridge's), whose own flow allows every call, the call is denied instead. With no
//!    daemon, likewise.

use std::path::Path;
use std::time::Duration;

use coord_client::Client;
use coord_inbox::new_message_id;
use coord_policy::Compiled;
use coord_proto::api::{ControlApiClient, InboxApiClient};
use coord_proto::types::*;
use serde_json::{Value, json};

use coord_cli::{Ctx, Outcome, Res};

use super::claude_hook::{HOOK_CONNECT, shutdown_if_asked};
use super::client_shape::{claude_call, pre_tool_decision};
use super::{AgentClient, HookClaudeArgs, HookEvent};
use crate::commands::control::answer as wait_answer;

/// What the hook read from Claude Code.
struct Call {
    tool_name: String,
    tool_input: Value,
    tool_use_id: String,
    cwd: Option<String>,
    /// The session's permission mode (`bypassPermissions` for the bridge's sessions).
    mode: Option<String>,
}

/// The call, with the client's tool names read as Claude Code's.
fn call(input: &str, client: AgentClient) -> Option<Call> {
    let v: Value = serde_json::from_str(input).ok()?;
    let tool = v.get("tool_name")?.as_str()?;
    let (tool_name, tool_input) =
        claude_call(client, tool, v.get("tool_input").cloned().unwrap_or_else(|| json!({})), &v);
    Some(Call {
        tool_name,
        tool_input,
        tool_use_id: v.get("tool_use_id").and_then(Value::as_str).unwrap_or_default().to_string(),
        cwd: v.get("cwd").and_then(Value::as_str).map(str::to_string),
        mode: v.get("permission_mode").and_then(Value::as_str).map(str::to_string),
    })
}

/// The stored policy's snapshot, if there is one that reads.
fn snapshot(db: &Path) -> Option<Policy> {
    let text = std::fs::read_to_string(coord_ipc::paths::policy_file(db)).ok()?;
    serde_json::from_str(&text).ok()
}

pub async fn answer(ctx: &Ctx, a: HookClaudeArgs) -> Res {
    let mut input = String::new();
    let _ = std::io::Read::read_to_string(&mut std::io::stdin(), &mut input);
    let (Some(agent), Some(call)) = (ctx.agent.clone(), call(&input, a.client)) else { return Ok(Outcome::Done) };
    let Some(policy) = snapshot(&ctx.connect_options().paths.db) else { return Ok(Outcome::Done) };
    let Ok(compiled) = Compiled::new(&policy) else { return Ok(Outcome::Done) };
    let cwd = call.cwd.clone().or_else(|| std::env::current_dir().ok().map(|d| d.display().to_string()));
    let Some(gate) = compiled.check(&agent, &call.tool_name, &call.tool_input, cwd.as_deref().map(Path::new)) else {
        return Ok(Outcome::Done);
    };
    let approver = gate.approver.clone();
    let note = gate.reason.clone();
    let (event, mode) = (a.event, call.mode.clone());
    // With no answer, a session whose own flow would run the call unasked gets a denial.
    let unanswered = |why: &str| {
        eprintln!("{why}: no decision, Claude Code's permission flow applies");
        if let Some(d) = no_answer(event, mode.as_deref(), why) {
            println!("{d}");
        }
    };
    let mut opts = ctx.connect_options().clone();
    opts.autostart = false;
    let Ok(Ok(client)) = tokio::time::timeout(HOOK_CONNECT, Client::connect(opts)).await else {
        unanswered("coordd is not running");
        return Ok(Outcome::Done);
    };
    if let Some(stop) = shutdown_if_asked(&client, &agent, a.task.as_deref()).await {
        println!("{stop}");
        return Ok(Outcome::Done);
    }
    let wait = Duration::from_secs(a.timeout_seconds.unwrap_or(policy.timeout_seconds));
    match ask(&client, &agent, &a, call, approver, note, wait).await {
        Ok(decision) => println!("{decision}"),
        Err(why) => unanswered(&why),
    }
    Ok(Outcome::Done)
}

/// Send the request and wait for its answer; the decision JSON, or why there is none.
async fn ask(
    c: &Client,
    agent: &str,
    a: &HookClaudeArgs,
    call: Call,
    approver: String,
    note: Option<String>,
    wait: Duration,
) -> Result<Value, String> {
    let id = new_message_id();
    let mut description = match call.tool_input.get("description").and_then(Value::as_str) {
        Some(d) => d.to_string(),
        None => format!("{agent} wants to run {}", call.tool_name),
    };
    if let Some(n) = &note {
        description = format!("{description} ({n})");
    }
    let payload = PermissionRequestPayload {
        request_id: id.clone(),
        tool_name: call.tool_name,
        tool_use_id: call.tool_use_id,
        description,
        input: call.tool_input,
    };
    let p = ControlSendParams {
        from: agent.to_string(),
        msg_type: MessageType::PermissionRequest.as_str().to_string(),
        to: Some(approver.clone()),
        payload: json!(payload),
        message_id: Some(id),
        run_id: a.run.clone(),
        task_id: a.task.clone(),
        ..Default::default()
    };
    let sent = match c.control_send(p).await {
        Ok(s) => s,
        Err(e) => return Err(format!("could not ask {approver} for permission ({e})")),
    };
    let thread = sent.thread.thread_id.clone();
    match wait_answer(c, &thread, sent.event_id, &[MessageType::PermissionResponse], Some(wait)).await {
        Ok(Some(m)) => Ok(pre_tool_decision(a.client, decision(a.event, &m, note.as_deref()))),
        Ok(None) => {
            let reason = format!("no answer from {approver} within {} s", wait.as_secs());
            let p =
                CancelParams { agent: agent.to_string(), thread_id: thread, reason: reason.clone(), artifacts: vec![] };
            let _ = c.cancel(p).await;
            Err(reason)
        }
        Err(e) => Err(format!("lost the daemon while waiting for {approver} ({e})")),
    }
}

/// The decision for a gated call that got no answer (`why`): none, so Claude Code's own
/// permission flow decides, unless the session's mode is `bypassPermissions` (as the launch
/// bridge runs its sessions), whose own flow runs every call unasked: a denial then.
fn no_answer(event: HookEvent, mode: Option<&str>, why: &str) -> Option<Value> {
    if mode != Some("bypassPermissions") {
        return None;
    }
    let reason = format!("Denied: a gated call needs an approval and got none ({why})");
    Some(match event {
        HookEvent::PermissionRequest => json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
            "decision": {"behavior": "deny", "message": reason}}}),
        _ => json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
            "permissionDecisionReason": reason}}),
    })
}

/// Claude Code's decision JSON for an answer; `note` is why the call was gated, when
/// that is not plain from the command (told to the model with a denial).
fn decision(event: HookEvent, m: &Message, note: Option<&str>) -> Value {
    let r: PermissionResponsePayload = serde_json::from_value(m.payload_json.clone()).unwrap_or_default();
    let verdict = if r.approved { "Approved" } else { "Denied" };
    let mut reason = match &r.reason {
        Some(why) => format!("{verdict} by {}: {why}", m.from_agent),
        None => format!("{verdict} by {}", m.from_agent),
    };
    if let (false, Some(n)) = (r.approved, note) {
        reason = format!("{reason} ({n})");
    }
    if event == HookEvent::PermissionRequest {
        let mut d = json!({"behavior": if r.approved { "allow" } else { "deny" }});
        if r.approved {
            if let Some(input) = r.updated_input {
                d["updatedInput"] = input;
            }
        } else {
            d["message"] = json!(reason);
        }
        return json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": d}});
    }
    let mut out = json!({
        "hookEventName": "PreToolUse",
        "permissionDecision": if r.approved { "allow" } else { "deny" },
        "permissionDecisionReason": reason,
    });
    if let (true, Some(input)) = (r.approved, r.updated_input) {
        out["updatedInput"] = input;
    }
    json!({"hookSpecificOutput": out})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(payload: Value) -> Message {
        Message {
            message_id: "m".into(),
            thread_id: "t".into(),
            from_agent: "lead".into(),
            to_agent: "w".into(),
            kind: MessageKind::Control,
            summary: String::new(),
            body: String::new(),
            payload_json: payload,
            created_at: String::new(),
            event_id: 1,
            category: None,
            requires_ack: false,
            artifacts: vec![],
            msg_type: Some("permission_response".into()),
        }
    }

    #[test]
    fn pre_tool_use_decisions_follow_the_hooks_reference() {
        let allow = decision(
            HookEvent::PreToolUse,
            &response(json!({"request_id": "r", "approved": true, "updated_input": {"command": "git push --dry-run"}})),
            Some("not shown with an approval"),
        );
        assert_eq!(
            allow,
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow",
                "permissionDecisionReason": "Approved by lead", "updatedInput": {"command": "git push --dry-run"}}})
        );
        let deny = decision(
            HookEvent::PreToolUse,
            &response(json!({"request_id": "r", "approved": false, "reason": "no"})),
            None,
        );
        assert_eq!(deny["hookSpecificOutput"]["permissionDecision"], "deny");
        assert_eq!(deny["hookSpecificOutput"]["permissionDecisionReason"], "Denied by lead: no");
        let resolved = decision(
            HookEvent::PreToolUse,
            &response(json!({"request_id": "r", "approved": false, "reason": "no"})),
            Some("gated by Bash(git push*): `sh -c 'git push'` runs `git push`"),
        );
        assert_eq!(
            resolved["hookSpecificOutput"]["permissionDecisionReason"],
            "Denied by lead: no (gated by Bash(git push*): `sh -c 'git push'` runs `git push`)"
        );
        assert!(deny["hookSpecificOutput"].get("updatedInput").is_none());
    }

    #[test]
    fn permission_request_decisions_follow_the_hooks_reference() {
        let deny = decision(
            HookEvent::PermissionRequest,
            &response(json!({"request_id": "r", "approved": false, "reason": "x"})),
            None,
        );
        assert_eq!(
            deny,
            json!({"hookSpecificOutput": {"hookEventName": "PermissionRequest",
                "decision": {"behavior": "deny", "message": "Denied by lead: x"}}})
        );
    }
}
