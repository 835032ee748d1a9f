//! What differs between the agent CLIs the mailbox hook handler (`inbox hook claude`)
//! answers: Gemini CLI (`--client gemini`) and coordd's opencode plugin (`--client
//! opencode`) send their own tool names and arguments, mapped here to Claude Code's so the
//! permission policy reads them alike; Gemini CLI names its events and reads a permission
//! decision in its own shape; and each names the coordd MCP tools its own way.

use serde_json::{Value, json};

use super::AgentClient;

/// A tool call as Claude Code names it: the tool, and its input with the argument names
/// the policy reads (`command`, `file_path`, `url`) added to the client's own.
pub fn claude_call(client: AgentClient, tool: &str, input: Value, hook: &Value) -> (String, Value) {
    let (name, keys): (&str, &[(&str, &str)]) = match (client, tool) {
        (AgentClient::Gemini, "run_shell_command") | (AgentClient::Opencode, "bash") => ("Bash", &[]),
        (AgentClient::Gemini, "write_file") => ("Write", &[]),
        (AgentClient::Gemini, "replace") => ("Edit", &[]),
        (AgentClient::Gemini, "read_file") => ("Read", &[]),
        (AgentClient::Gemini, "web_fetch") => ("WebFetch", &[]),
        (AgentClient::Opencode, "write") => ("Write", &[("filePath", "file_path")]),
        (AgentClient::Opencode, "edit") => ("Edit", &[("filePath", "file_path")]),
        (AgentClient::Opencode, "read") => ("Read", &[("filePath", "file_path")]),
        (AgentClient::Opencode, "webfetch") => ("WebFetch", &[]),
        _ => return (mcp_name(client, tool, hook), input),
    };
    let mut input = input;
    if let Value::Object(m) = &mut input {
        for (from, to) in keys {
            if let Some(v) = m.get(*from).cloned() {
                m.entry(*to).or_insert(v);
            }
        }
    }
    (name.to_string(), input)
}

/// An MCP tool's Claude Code name (`mcp__SERVER__TOOL`): Gemini CLI says `mcp_SERVER_TOOL`
/// (and the server in `mcp_context`), opencode `SERVER_TOOL`. Other tools keep their name.
fn mcp_name(client: AgentClient, tool: &str, hook: &Value) -> String {
    let server = hook["mcp_context"]["server_name"].as_str().unwrap_or(coord_client::codex::MCP_SERVER);
    let prefix = match client {
        AgentClient::Gemini => format!("mcp_{server}_"),
        AgentClient::Opencode => format!("{server}_"),
        _ => return tool.to_string(),
    };
    match tool.strip_prefix(&prefix) {
        Some(rest) => format!("mcp__{server}__{rest}"),
        None => tool.to_string(),
    }
}

/// The client's name for a Claude Code hook event (Gemini CLI's differ).
pub fn event_name(client: AgentClient, claude: &'static str) -> &'static str {
    match (client, claude) {
        (AgentClient::Gemini, "PostToolUse") => "AfterTool",
        (AgentClient::Gemini, "UserPromptSubmit") => "BeforeAgent",
        (AgentClient::Gemini, "PreToolUse") => "BeforeTool",
        _ => claude,
    }
}

/// A PreToolUse decision as the client reads it: Gemini CLI reads `decision`/`reason`
/// (and a changed input as `hookSpecificOutput.tool_input`), not Claude Code's
/// `permissionDecision`.
pub fn pre_tool_decision(client: AgentClient, claude: Value) -> Value {
    if client != AgentClient::Gemini {
        return claude;
    }
    let d = &claude["hookSpecificOutput"];
    let mut out = json!({"decision": d["permissionDecision"], "reason": d["permissionDecisionReason"]});
    if let Some(input) = d.get("updatedInput") {
        out["hookSpecificOutput"] = json!({"hookEventName": "BeforeTool", "tool_input": input});
    }
    out
}

/// How the model calls coordd's `check_inbox` tool in this client.
pub fn check_inbox_tool(client: AgentClient) -> String {
    let s = coord_client::codex::MCP_SERVER;
    match client {
        AgentClient::Gemini => format!("mcp_{s}_check_inbox"),
        AgentClient::Opencode => format!("{s}_check_inbox"),
        _ => format!("mcp__{s}__check_inbox"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemini_and_opencode_tools_read_as_claude_codes() {
        let none = json!({});
        let c = claude_call(AgentClient::Gemini, "run_shell_command", json!({"command": "git push"}), &none);
        assert_eq!(c, ("Bash".to_string(), json!({"command": "git push"})));
        let c = claude_call(AgentClient::Opencode, "edit", json!({"filePath": "/w/a.rs"}), &none);
        assert_eq!(c, ("Edit".to_string(), json!({"filePath": "/w/a.rs", "file_path": "/w/a.rs"})));
        let c = claude_call(AgentClient::Gemini, "mcp_coordd_send_message", json!({}), &none);
        assert_eq!(c.0, "mcp__coordd__send_message");
        let hook = json!({"mcp_context": {"server_name": "my_srv"}});
        assert_eq!(claude_call(AgentClient::Gemini, "mcp_my_srv_do_it", json!({}), &hook).0, "mcp__my_srv__do_it");
        assert_eq!(
            claude_call(AgentClient::Opencode, "coordd_check_inbox", json!({}), &none).0,
            "mcp__coordd__check_inbox"
        );
        assert_eq!(claude_call(AgentClient::Opencode, "glob", json!({}), &none).0, "glob");
    }

    #[test]
    fn gemini_reads_a_denial_as_decision_and_reason() {
        let claude = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
            "permissionDecisionReason": "Denied by lead: no"}});
        assert_eq!(
            pre_tool_decision(AgentClient::Gemini, claude.clone()),
            json!({"decision": "deny", "reason": "Denied by lead: no"})
        );
        assert_eq!(pre_tool_decision(AgentClient::Opencode, claude.clone()), claude);
    }
}
