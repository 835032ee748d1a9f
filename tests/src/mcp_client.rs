//! An MCP client this project did not write (the official Rust SDK's, `rmcp`), driving our
//! MCP servers (`inbox mcp`, `orch mcp`) as a child process over stdio: start a session,
//! call a tool, expect success or a tool error.

use std::process::{Command, Stdio};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;

/// An initialized client session with one server process.
pub type Session = RunningService<RoleClient, ()>;

/// Only matters when something is broken: no call here should take long.
pub const LIMIT: Duration = Duration::from_secs(120);

/// Start `cmd` as an MCP server and initialize a client session with it.
pub async fn session(cmd: Command) -> Session {
    let cmd = tokio::process::Command::from(cmd);
    let (transport, _) = TokioChildProcess::builder(cmd).stderr(Stdio::inherit()).spawn().expect("spawn MCP server");
    tokio::time::timeout(LIMIT, ().serve(transport)).await.expect("initialize in time").expect("initialize")
}

/// Call `tool` with `args` (an object).
pub async fn call(s: &Session, tool: &str, args: Value) -> CallToolResult {
    let args = args.as_object().expect("arguments are an object").clone();
    let params = CallToolRequestParams::new(tool.to_string()).with_arguments(args);
    tokio::time::timeout(LIMIT, s.call_tool(params)).await.expect("tool call in time").expect("tool call")
}

/// A successful call's structured result.
pub async fn ok(s: &Session, tool: &str, args: Value) -> Value {
    let r = call(s, tool, args).await;
    assert_ne!(r.is_error, Some(true), "{tool} failed: {r:?}");
    r.structured_content.expect("structured result")
}

/// A failed call's `{"code","message"}`.
pub async fn err(s: &Session, tool: &str, args: Value) -> Value {
    let r = call(s, tool, args).await;
    assert_eq!(r.is_error, Some(true), "{tool} should fail: {r:?}");
    r.structured_content.expect("structured error")
}

/// The server's tool names, sorted.
pub async fn tool_names(s: &Session) -> Vec<String> {
    let tools = tokio::time::timeout(LIMIT, s.list_all_tools()).await.expect("list in time").expect("list tools");
    let mut names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
    names.sort();
    names
}

/// The size of a server's tool set as a model receives it (each tool's name, description
/// and input schema, as JSON), in tokens of OpenAI's `o200k_base` and `cl100k_base`
/// encodings, the closest public stand-ins for a model's own tokenizer.
pub async fn tool_set_tokens(s: &Session) -> ToolSetSize {
    let tools = tokio::time::timeout(LIMIT, s.list_all_tools()).await.expect("list in time").expect("list tools");
    let defs: Vec<Value> = tools
        .iter()
        .map(|t| serde_json::json!({"name": t.name, "description": t.description, "input_schema": t.input_schema}))
        .collect();
    let text = serde_json::to_string(&defs).expect("tools as JSON");
    let o200k = tiktoken_rs::o200k_base().expect("o200k_base").encode_ordinary(&text).len();
    let cl100k = tiktoken_rs::cl100k_base().expect("cl100k_base").encode_ordinary(&text).len();
    ToolSetSize { tools: tools.len(), bytes: text.len(), o200k, cl100k }
}

/// What [`tool_set_tokens`] measured.
#[derive(Debug, Clone, Copy)]
pub struct ToolSetSize {
    pub tools: usize,
    pub bytes: usize,
    pub o200k: usize,
    pub cl100k: usize,
}
