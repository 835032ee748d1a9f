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
use coord_cli::mcp::DaemonLink;
use coord_cli::{Command, Ctx, Res};
use coord_client::Client;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::CallToolResult;

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
    /// The longest one wait_reply call waits, and its default. Keep it under your MCP
    /// client's request timeout; the agent re-arms with the cursor it returns. Also
    /// $COORD_MCP_WAIT_SECONDS, which reaches the servers orch dispatch registers (their
    /// command line is fixed): start the agent CLI, or coord-launch, with it set.
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_WAIT_SECONDS, env = "COORD_MCP_WAIT_SECONDS",
          value_parser = clap::value_parser!(u64).range(1..=MAX_TIMEOUT))]
    pub wait_seconds: u64,
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
    /// The daemon connection, opened on first use and reopened when it broke.
    daemon: DaemonLink,
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
        max_wait: Duration::from_secs(a.wait_seconds),
        daemon: DaemonLink::new(ctx.connect_options().clone()),
        cursors: Arc::default(),
        tool_router: InboxMcp::tool_router() + InboxMcp::search_router() + InboxMcp::control_router(),
    };
    coord_cli::mcp::serve_stdio(server).await
}

pub use coord_cli::mcp::{ToolError, ToolResult};

impl InboxMcp {
    /// Run one tool body against the daemon.
    async fn run<F, Fut>(&self, body: F) -> CallToolResult
    where
        F: FnOnce(Arc<Client>) -> Fut,
        Fut: Future<Output = ToolResult>,
    {
        self.daemon.run(body).await
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
