//! `inbox mcp`: coordd as a Model Context Protocol server on stdio, built on the official
//! Rust SDK (`rmcp`). One server serves one agent session: `--agent` (or `COORD_AGENT`)
//! binds its identity and `--task` (or `COORD_TASK`) its task, so the tools never ask for
//! them. Every tool is one or two calls to the project's daemon over one long-lived
//! connection, reopened after the daemon restarts.
//!
//! stdout is the protocol channel: nothing here prints to it; problems go to stderr.
//! Daemon errors come back as MCP tool errors (`isError: true`) whose structured content
//! is `{"code": <coordd error code>, "message": ...}`. The tools are declared in `tools`
//! (the mailbox and the worker flow), `finish`, `search_messages`, and `requests`
//! (answering requests).

mod finish;
mod requests;
mod search_messages;
mod tools;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use coord_cli::CliError;
use coord_cli::{Command, Ctx, Outcome, Res};
use coord_client::{Client, ClientError, ConnectOptions};
use coord_proto::api::SystemApiClient;
use rmcp::ServiceExt;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::CallToolResult;
use serde_json::{Value, json};

use crate::commands::args::MAX_TIMEOUT;

/// The longest `wait_reply` of `inbox mcp` waits by default: under the 60 s many MCP
/// clients allow a call.
pub const DEFAULT_WAIT_SECONDS: u64 = 45;

/// Serve the Model Context Protocol on stdin/stdout for one agent session (--agent).
///
/// Tools: check_inbox, inbox_status, send_message, fetch_work, claim, update, ask,
/// wait_reply, reply, done, fail, reserve, release, list_agents, search_messages,
/// requests, respond (answer a permission, plan approval or shutdown request).
/// Daemon errors come back as tool errors with {"code","message"}. Register it in an MCP
/// client, e.g. .mcp.json: {"mcpServers":{"coordd":{"command":"inbox","args":["--agent","W","mcp"]}}}
/// (`inbox hook install` writes that file).
#[derive(clap::Args)]
#[command(after_help = "Example:\n  inbox --agent backend mcp --task T1")]
pub struct Args {
    /// The session's task (also $COORD_TASK): its mail is checked with yours, reservations
    /// are made for it, and send_message to_peer reaches its linked peers.
    #[arg(long, value_name = "TASK_ID", env = "COORD_TASK")]
    pub task: Option<String>,
    /// The longest one wait_reply call waits, and its default (a longer timeout_seconds is
    /// cut to it, and the tool's result says so). Default: `mcp_wait_seconds` in the
    /// project's .agents/coordd.json, else 45. Keep it under your MCP client's request
    /// timeout; the agent re-arms with the cursor it returns.
    #[arg(long, value_name = "SECONDS", value_parser = clap::value_parser!(u64).range(1..=MAX_TIMEOUT))]
    pub wait_seconds: Option<u64>,
}

/// The key of the project's `.agents/coordd.json` that sets the `wait_reply` limit of every
/// `inbox mcp` of the project (dispatched sessions included) without a `--wait-seconds`.
pub const WAIT_SECONDS_KEY: &str = "mcp_wait_seconds";

/// The `wait_reply` limit: `--wait-seconds`, else the project's `mcp_wait_seconds`, else
/// [`DEFAULT_WAIT_SECONDS`].
fn wait_limit(flag: Option<u64>, opts: &ConnectOptions) -> Result<u64, CliError> {
    if let Some(s) = flag {
        return Ok(s);
    }
    let path = coord_ipc::paths::store_config(&opts.paths.db);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(DEFAULT_WAIT_SECONDS),
        Err(e) => return Err(CliError::Invalid(format!("cannot read {}: {e}", path.display()))),
    };
    let bad = |why: &str| CliError::Invalid(format!("{}: {WAIT_SECONDS_KEY} {why}", path.display()));
    let v: Value =
        serde_json::from_str(&text).map_err(|e| bad(&format!("cannot be read, the file is not JSON: {e}")))?;
    match v.get(WAIT_SECONDS_KEY) {
        None | Some(Value::Null) => Ok(DEFAULT_WAIT_SECONDS),
        Some(n) => n
            .as_u64()
            .filter(|s| (1..=MAX_TIMEOUT).contains(s))
            .ok_or_else(|| bad(&format!("must be a whole number of seconds from 1 to {MAX_TIMEOUT}, not {n}"))),
    }
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        serve(ctx, self).await
    }
}

/// The MCP server of one agent session.
#[derive(Clone)]
pub struct InboxMcp {
    agent: String,
    task: Option<String>,
    /// Upper bound (and default) of one `wait_reply`.
    max_wait: Duration,
    opts: ConnectOptions,
    /// The daemon connection, opened on first use and reopened when it broke.
    client: Arc<tokio::sync::Mutex<Option<Arc<Client>>>>,
    /// Per thread, where this session's next `wait_reply` starts when the agent gives no
    /// cursor: after its latest `ask`, `send_message` or `reply` there, or where its last
    /// wait ended. So a reply that came before the wait is not missed, and one already
    /// returned is not returned again.
    cursors: Arc<Mutex<HashMap<String, i64>>>,
    tool_router: ToolRouter<InboxMcp>,
}

/// Serve MCP on stdin/stdout until the client closes it.
async fn serve(ctx: &Ctx, a: Args) -> Res {
    let agent = ctx.agent.clone().filter(|a| !a.trim().is_empty()).ok_or_else(|| {
        CliError::Invalid("inbox mcp serves one agent: pass --agent NAME (or set COORD_AGENT)".into())
    })?;
    let server = InboxMcp {
        agent,
        task: a.task.filter(|t| !t.trim().is_empty()),
        max_wait: Duration::from_secs(wait_limit(a.wait_seconds, ctx.connect_options())?),
        opts: ctx.connect_options().clone(),
        client: Arc::default(),
        cursors: Arc::default(),
        tool_router: InboxMcp::tool_router() + InboxMcp::search_router() + InboxMcp::control_router(),
    };
    let running = server
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| CliError::Internal(format!("MCP initialization failed: {e}")))?;
    running.waiting().await.map_err(|e| CliError::Internal(format!("MCP server stopped: {e}")))?;
    Ok(Outcome::Done)
}

/// A failed tool call, as the agent sees it.
pub struct ToolError {
    code: &'static str,
    message: String,
    details: Option<Value>,
}

impl ToolError {
    fn invalid(message: impl Into<String>) -> ToolError {
        ToolError { code: "invalid_args", message: message.into(), details: None }
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

fn to_call_result(r: ToolResult) -> CallToolResult {
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

impl InboxMcp {
    /// The daemon connection, opened (and the daemon started, unless auto-start is off)
    /// on first use. A kept connection is checked with a `hello` first: the daemon may
    /// have restarted since the last call, and one round trip is cheap next to a tool
    /// call, while resending a write after it failed could apply it twice.
    async fn client(&self) -> Result<Arc<Client>, ToolError> {
        let mut slot = self.client.lock().await;
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
    async fn run<F, Fut>(&self, body: F) -> CallToolResult
    where
        F: FnOnce(Arc<Client>) -> Fut,
        Fut: Future<Output = ToolResult>,
    {
        to_call_result(match self.client().await {
            Ok(c) => body(c).await,
            Err(e) => Err(e),
        })
    }

    fn cursor(&self, thread_id: &str) -> Option<i64> {
        self.cursors.lock().unwrap_or_else(|e| e.into_inner()).get(thread_id).copied()
    }

    /// Move the thread's remembered cursor forward to `event_id` (never back).
    fn set_cursor(&self, thread_id: &str, event_id: i64) {
        let mut cursors = self.cursors.lock().unwrap_or_else(|e| e.into_inner());
        let c = cursors.entry(thread_id.to_string()).or_insert(event_id);
        *c = (*c).max(event_id);
    }

    /// The bound task, for tools that act on "my task".
    fn task(&self, what: &str) -> Result<String, ToolError> {
        self.task.clone().ok_or_else(|| {
            ToolError::invalid(format!("{what} needs this session's task: start `inbox mcp` with --task TASK_ID"))
        })
    }
}
