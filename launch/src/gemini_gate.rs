//! The lead's permission gate for a live Gemini CLI session (gemini_live.rs). Gemini CLI's
//! ACP mode runs a tool without its BeforeTool hook (0.61: `runTool` calls the tool
//! directly, not through the scheduler that fires the hooks), and asks its client
//! instead (`session/request_permission`) for every call its approval mode does not
//! allow unasked (shell commands, file edits, web fetches). The driver answers each such
//! request by running the same handler the BeforeTool hook runs (`inbox hook claude
//! pre-tool-use --client gemini`) with the call as Gemini's hook would give it, so one
//! policy decides both modes; a gated call with no answer, or a handler that cannot run,
//! is denied (never allowed unasked).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

/// What the gate decided about one call.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Allow,
    /// Denied, with the reason the model is told.
    Deny(String),
}

/// A permission request's tool call as Gemini's BeforeTool hook names it: its tool and
/// input. ACP gives the call's kind, title (a shell call's title is its command) and
/// locations, not the tool's own arguments.
pub fn hook_call(tool_call: &Value) -> (String, Value) {
    let title = tool_call["title"].as_str().unwrap_or_default().to_string();
    let path = tool_call["locations"].as_array().and_then(|l| l.first()).and_then(|l| l["path"].as_str());
    match tool_call["kind"].as_str() {
        Some("execute") => ("run_shell_command".into(), json!({"command": title})),
        Some("edit" | "delete" | "move") => ("write_file".into(), json!({"file_path": path.unwrap_or(&title)})),
        Some("fetch") => ("web_fetch".into(), json!({"prompt": title})),
        _ => (title.clone(), json!({"title": title})),
    }
}

/// The BeforeTool hook's input for `tool_call`. The session runs unattended, so its mode is
/// the bridge's `bypassPermissions`: a gated call with no answer is denied.
pub fn hook_input(tool_call: &Value, cwd: &Path, session: &str) -> Value {
    let (tool_name, tool_input) = hook_call(tool_call);
    json!({
        "session_id": session,
        "hook_event_name": "BeforeTool",
        "tool_name": tool_name,
        "tool_input": tool_input,
        "tool_use_id": tool_call["toolCallId"],
        "cwd": cwd,
        "permission_mode": "bypassPermissions",
    })
}

/// The gate's handler for the session in the environment (`COORD_DB`, `COORD_AGENT`,
/// `COORD_TASK`, `COORD_RUN`, set by the bridge): `inbox … hook claude pre-tool-use`.
pub fn handler(inbox: &str) -> Command {
    let mut c = Command::new(inbox);
    c.args(["hook", "claude", "pre-tool-use", "--mcp", "--client", "gemini"]);
    c
}

/// Ask the gate about `tool_call` (blocking: a gated call waits for its approver).
pub fn decide(mut handler: Command, tool_call: &Value, cwd: &Path, session: &str) -> Verdict {
    let input = hook_input(tool_call, cwd, session);
    let mut run = || -> std::io::Result<std::process::Output> {
        let mut child =
            handler.current_dir(cwd).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
        child.stdin.take().expect("piped").write_all(input.to_string().as_bytes())?;
        let out = child.wait_with_output()?;
        // Its stderr goes to the log as the driver's own lines do (with their time), never
        // straight into the output filter, where a bare line could pass for a usage report.
        for line in String::from_utf8_lossy(&out.stderr).lines().filter(|l| !l.trim().is_empty()) {
            crate::live_io::say(line);
        }
        Ok(out)
    };
    match run() {
        Ok(out) if out.status.success() => verdict(&String::from_utf8_lossy(&out.stdout)),
        Ok(out) => Verdict::Deny(format!("Denied: the permission gate failed ({})", out.status)),
        Err(e) => Verdict::Deny(format!("Denied: the permission gate could not run ({e})")),
    }
}

/// The handler's answer (its stdout) as a verdict: Gemini's `decision`/`reason`, Claude
/// Code's `permissionDecision` (a gated call with no answer), or a stop (`continue:
/// false`: a shutdown asked for) deny; nothing, or an approval, allows. An approval that
/// changed the input is denied with the approved input named: ACP cannot run a changed
/// call.
pub fn verdict(stdout: &str) -> Verdict {
    let Some(v) = stdout.lines().rev().find_map(|l| serde_json::from_str::<Value>(l).ok()) else {
        return Verdict::Allow;
    };
    let text = |v: &Value| v.as_str().unwrap_or("Denied by the permission gate").to_string();
    if v["continue"] == false {
        return Verdict::Deny(text(&v["stopReason"]));
    }
    if matches!(v["decision"].as_str(), Some("deny" | "block")) {
        return Verdict::Deny(text(&v["reason"]));
    }
    let h = &v["hookSpecificOutput"];
    if h["permissionDecision"] == "deny" {
        return Verdict::Deny(text(&h["permissionDecisionReason"]));
    }
    if let Some(changed) = h.get("tool_input").or(h.get("updatedInput")) {
        return Verdict::Deny(format!(
            "Approved only with a changed input, which this session cannot apply to the call: run it as {changed}"
        ));
    }
    Verdict::Allow
}

/// The ACP answer to a permission request: the offered option of the verdict's kind
/// (`allow_once` or `reject_once`), else Gemini's own ids.
pub fn outcome(options: &Value, v: &Verdict) -> Value {
    let (kind, fallback) = match v {
        Verdict::Allow => ("allow_once", "proceed_once"),
        Verdict::Deny(_) => ("reject_once", "cancel"),
    };
    let id = options
        .as_array()
        .into_iter()
        .flatten()
        .find(|o| o["kind"] == kind)
        .and_then(|o| o["optionId"].as_str())
        .unwrap_or(fallback);
    json!({"outcome": {"outcome": "selected", "optionId": id}})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shell_call_reaches_the_hook_as_geminis_shell_tool_with_its_command() {
        let call = json!({"toolCallId": "c1", "title": "git push origin main", "kind": "execute", "locations": []});
        let input = hook_input(&call, Path::new("/w"), "s");
        assert_eq!(
            (input["tool_name"].as_str(), input["tool_input"]["command"].as_str()),
            (Some("run_shell_command"), Some("git push origin main"))
        );
        assert_eq!(input["permission_mode"], "bypassPermissions");
        let edit = json!({"title": "a.txt: x => y", "kind": "edit", "locations": [{"path": "/w/a.txt"}]});
        assert_eq!(hook_call(&edit), ("write_file".to_string(), json!({"file_path": "/w/a.txt"})));
    }

    #[test]
    fn denials_in_every_shape_the_handler_prints_deny_and_silence_allows() {
        let gemini = r#"{"decision":"deny","reason":"Denied by lead: not now"}"#;
        assert_eq!(verdict(gemini), Verdict::Deny("Denied by lead: not now".into()));
        let unanswered = r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"Denied: none"}}"#;
        assert_eq!(verdict(unanswered), Verdict::Deny("Denied: none".into()));
        assert_eq!(verdict(r#"{"continue":false,"stopReason":"shut down"}"#), Verdict::Deny("shut down".into()));
        assert_eq!(verdict(""), Verdict::Allow);
        assert_eq!(verdict(r#"{"decision":"allow","reason":"Approved by lead"}"#), Verdict::Allow);
        let changed = r#"{"decision":"allow","hookSpecificOutput":{"tool_input":{"command":"git push --dry-run"}}}"#;
        assert!(matches!(verdict(changed), Verdict::Deny(r) if r.contains("--dry-run")));
    }

    #[test]
    fn the_answer_picks_the_offered_option_of_its_kind() {
        let options = json!([{"optionId": "proceed_always", "kind": "allow_always"},
            {"optionId": "proceed_once", "kind": "allow_once"}, {"optionId": "cancel", "kind": "reject_once"}]);
        assert_eq!(outcome(&options, &Verdict::Allow)["outcome"]["optionId"], "proceed_once");
        assert_eq!(outcome(&options, &Verdict::Deny("no".into()))["outcome"]["optionId"], "cancel");
    }
}
