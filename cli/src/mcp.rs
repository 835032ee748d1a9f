//! What the two MCP servers (`inbox mcp` for a worker's session, `orch mcp` for the lead's)
//! share: the tool error the model sees, and the one daemon connection a server keeps.
//!
//! A daemon error becomes an MCP tool error (`isError: true`) whose structured content is
//! `{"code": <coordd error code>, "message": ..., "details"?: ...}`, so the model can switch
//! on a stable code.

use std::sync::Arc;

use coord_client::{Client, ClientError, ConnectOptions};
use coord_proto::api::SystemApiClient;
use rmcp::model::CallToolResult;
use rmcp::{ServerHandler, ServiceExt};

use crate::{CliError, Outcome, Res};
use serde_json::{Value, json};

/// A failed tool call, as the agent sees it.
#[derive(Debug)]
pub struct ToolError {
    pub code: &'static str,
    pub message: String,
    pub details: Option<Value>,
}

impl ToolError {
    /// The tool's arguments are wrong (code `invalid_args`).
    pub fn invalid(message: impl Into<String>) -> ToolError {
        ToolError { code: "invalid_args", message: message.into(), details: None }
    }

    /// What the arguments name does not exist (code `not_found`).
    pub fn not_found(message: impl Into<String>) -> ToolError {
        ToolError { code: "not_found", message: message.into(), details: None }
    }
}

impl From<jsonrpsee::core::client::Error> for ToolError {
    fn from(e: jsonrpsee::core::client::Error) -> Self {
        ClientError::from(e).into()
    }
}

impl From<ClientError> for ToolError {
    fn from(e: ClientError) -> Self {
        let details = match &e {
            ClientError::Rpc { details, .. } => details.clone(),
            _ => None,
        };
        ToolError { code: e.code(), message: e.to_string(), details }
    }
}

/// What every tool body returns: its JSON result, or a tool error carrying the code.
pub type ToolResult = Result<Value, ToolError>;

/// The MCP result of a tool body.
pub fn to_call_result(r: ToolResult) -> CallToolResult {
    match r {
        Ok(v) => CallToolResult::structured(v),
        Err(e) => {
            let mut v = json!({"code": e.code, "message": e.message});
            if let Some(d) = e.details {
                v["details"] = d;
            }
            CallToolResult::structured_error(v)
        }
    }
}

/// The daemon connection of one MCP server: opened (and the daemon started, unless
/// auto-start is off) on first use, reopened when it broke.
#[derive(Clone)]
pub struct DaemonLink {
    opts: ConnectOptions,
    slot: Arc<tokio::sync::Mutex<Option<Arc<Client>>>>,
}

impl DaemonLink {
    pub fn new(opts: ConnectOptions) -> DaemonLink {
        DaemonLink { opts, slot: Arc::default() }
    }

    /// The connection. A kept one is checked with a `hello` first: the daemon may have
    /// restarted since the last call, and one round trip is cheap next to a tool call,
    /// while resending a write after it failed could apply it twice.
    pub async fn client(&self) -> Result<Arc<Client>, ToolError> {
        let mut slot = self.slot.lock().await;
        if let Some(c) = slot.as_ref()
            && c.is_connected()
            && c.hello().await.is_ok()
        {
            return Ok(c.clone());
        }
        *slot = None;
        let c = Arc::new(Client::connect(self.opts.clone()).await?);
        *slot = Some(c.clone());
        Ok(c)
    }

    /// Run one tool body against the daemon.
    pub async fn run<F, Fut>(&self, body: F) -> CallToolResult
    where
        F: FnOnce(Arc<Client>) -> Fut,
        Fut: Future<Output = ToolResult>,
    {
        to_call_result(match self.client().await {
            Ok(c) => body(c).await,
            Err(e) => Err(e),
        })
    }
}

/// Serve `server` over MCP on stdin/stdout until the client closes it.
pub async fn serve_stdio<S: ServerHandler>(server: S) -> Res {
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| CliError::Internal(format!("MCP initialization failed: {e}")))?;
    running.waiting().await.map_err(|e| CliError::Internal(format!("MCP server stopped: {e}")))?;
    Ok(Outcome::Done)
}
