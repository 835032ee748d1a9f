//! `orch mcp`: the lead's Model Context Protocol server on stdio (rmcp), so an agent can
//! sit in the lead's seat: plan a run, dispatch it, wait for what needs it, answer,
//! approve, retry, review and merge. One server serves one lead session and one run:
//! `--run` (or `COORD_RUN`, or the run `create_run` made) binds the run, so the tools
//! never ask for it.
//!
//! The tools are declared in `plan` (create the run, add and edit tasks, dispatch, read
//! the run and a task), `steer` (answer, requests, retry, reassign, cancel, shutdown,
//! council, merge, finish), `review` (a task's diff, comments on its lines, approve or
//! request changes) and `attention` (`wait_for_attention`, the lead's one wait).
//! Every tool is one or a few calls to the daemon over one long-lived connection; the
//! daemon's authority table decides what the caller may do, so a worker's credentials get
//! `not_permitted` from the write tools. Errors come back as MCP tool errors with
//! `{"code","message"}` (`coord_cli::mcp`). stdout is the protocol channel: nothing here
//! prints to it.

mod attention;
mod plan;
mod review;
mod steer;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use coord_cli::mcp::{DaemonLink, ToolError, ToolResult};
use coord_cli::{Command, Ctx, Res};
use coord_client::Client;
use coord_proto::api::OrchApiClient;
use coord_proto::types::RunRef;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{CallToolResult, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, tool_handler};

/// The longest one `wait_for_attention` call waits, and its default: under the 60 s many
/// MCP clients allow a call. The lead calls it again with the cursor it returns.
pub const DEFAULT_WAIT_SECONDS: u64 = 45;

/// Serve the lead's tools over MCP on stdin/stdout, for one run.
///
/// Tools: create_run, add_task, edit_task, dispatch, status, task, wait_for_attention,
/// answer, requests, respond, retry, reassign, cancel, shutdown_worker, start_council,
/// council, merge, finish_run, diff, comment, review. Register it in an MCP client, e.g. .mcp.json:
/// {"mcpServers":{"orch":{"command":"orch","args":["mcp","--run","R1"]}}}
#[derive(clap::Args)]
#[command(after_help = "Examples:\n  orch mcp --run R1\n  orch mcp --as lead   # create_run binds the run")]
pub struct Args {
    /// The run the tools act on (also $COORD_RUN). Without it, `create_run` makes one and
    /// binds it.
    #[arg(long, value_name = "RUN_ID", env = "COORD_RUN")]
    pub run: Option<String>,
    /// Who the lead is, for the requests it answers and the shutdowns it sends (also
    /// $COORD_AGENT). Default: the run's creator. With credentials required it must be the
    /// agent $COORD_AGENT_SECRET authenticates.
    #[arg(long = "as", value_name = "AGENT", env = "COORD_AGENT")]
    pub lead: Option<String>,
    /// The longest one wait_for_attention call waits, and its default. Keep it under your
    /// MCP client's request timeout.
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_WAIT_SECONDS,
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub wait_seconds: u64,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let server = OrchMcp {
            run: Arc::new(Mutex::new(self.run.filter(|r| !r.trim().is_empty()))),
            lead: self.lead.filter(|a| !a.trim().is_empty()),
            max_wait: Duration::from_secs(self.wait_seconds),
            cursor: Arc::default(),
            daemon: DaemonLink::new(ctx.connect_options().clone()),
            tool_router: OrchMcp::plan_router()
                + OrchMcp::steer_router()
                + OrchMcp::review_router()
                + OrchMcp::attention_router(),
        };
        coord_cli::mcp::serve_stdio(server).await
    }
}

/// The MCP server of one lead session.
#[derive(Clone)]
pub struct OrchMcp {
    /// The bound run: `--run`, or the one `create_run` made.
    run: Arc<Mutex<Option<String>>>,
    /// `--as`: who answers and sends shutdowns (default: the run's creator).
    lead: Option<String>,
    /// Upper bound (and default) of one `wait_for_attention`.
    max_wait: Duration,
    /// Where the next `wait_for_attention` without a cursor starts: after the last event it
    /// returned (at first, the newest event when the session made its first call), so
    /// nothing is returned twice and nothing between two calls is missed.
    cursor: Arc<Mutex<Option<i64>>>,
    daemon: DaemonLink,
    tool_router: ToolRouter<OrchMcp>,
}

impl OrchMcp {
    /// Run one tool body against the daemon. The session's first call anchors the
    /// attention cursor at the daemon's newest event, so `wait_for_attention` returns
    /// everything from the session's start, even what came before the lead first waits.
    async fn run<F, Fut>(&self, body: F) -> CallToolResult
    where
        F: FnOnce(Arc<Client>) -> Fut,
        Fut: Future<Output = ToolResult>,
    {
        self.daemon
            .run(|c| async move {
                if self.cursor().is_none() {
                    self.set_cursor(c.newest_event().await?);
                }
                body(c).await
            })
            .await
    }

    /// The bound run, or the error that says how to bind one.
    fn run_id(&self) -> Result<String, ToolError> {
        self.run.lock().unwrap_or_else(|e| e.into_inner()).clone().ok_or_else(|| {
            ToolError::invalid("no run yet: call create_run first (or start `orch mcp` with --run RUN_ID)")
        })
    }

    fn bind_run(&self, run_id: &str) {
        *self.run.lock().unwrap_or_else(|e| e.into_inner()) = Some(run_id.to_string());
    }

    /// Who the lead is: `--as`, else the run's creator.
    async fn lead(&self, c: &Client, run_id: &str) -> Result<String, ToolError> {
        if let Some(l) = &self.lead {
            return Ok(l.clone());
        }
        Ok(c.run_show(RunRef { run_id: run_id.to_string() }).await?.run.created_by)
    }

    fn cursor(&self) -> Option<i64> {
        *self.cursor.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Move the remembered cursor forward to `event_id` (never back).
    fn set_cursor(&self, event_id: i64) {
        let mut c = self.cursor.lock().unwrap_or_else(|e| e.into_inner());
        *c = Some(c.map_or(event_id, |old| old.max(event_id)));
    }
}

const INSTRUCTIONS: &str = "\
You lead a team of agent workers through coordd. Plan small tasks with explicit \
dependencies and acceptance criteria (add_task), dispatch ready ones, then loop: \
wait_for_attention, act on what it returns (answer questions, respond to permission \
requests, retry or reassign failures, review (diff, comment, review) and merge done \
code tasks), until every task is merged; then finish_run. Read status or task when \
unsure. Errors carry a stable `code`.";

#[tool_handler(router = self.tool_router)]
impl ServerHandler for OrchMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("coordd-orch", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }
}
