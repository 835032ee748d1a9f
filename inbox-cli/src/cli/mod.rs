//! Command-line definitions of `inbox`: every command and flag of the inbox CLI contract.
//! The commands and the global flags are declared here; the flags of each command group
//! in a file of its own: [`threads`] (the worker protocol), [`waits`], [`agents`] (agents,
//! mail, reservations, the git guard) and [`session`] (the session mailbox, hooks, MCP).

mod agents;
mod control;
mod session;
mod threads;
mod waits;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

pub use agents::*;
pub use control::*;
pub use session::*;
pub use threads::*;
pub use waits::*;

/// Durable coordination bus for agents: threads, messages, leases, artifacts and waits.
///
/// Workers fetch work, claim a thread (a lease), report progress, ask when blocked, wait
/// for the reply, and finish with done or fail. All state lives in the project's coordd
/// daemon (started on first use) and its SQLite database, `<project>/.agents/coord.db`.
///
/// Agents also register identities, exchange categorised mail with read/ack, and reserve
/// file scopes (see `inbox agent --help`, `inbox reserve --help`, docs/agents.md).
///
/// Exit codes: 0 ok, 10 nothing matched (fetch found no work, a wait timed out),
/// 20 conflict (lease or reservation held by another, duplicate agent, ack or release
/// forbidden, stale lease or reservation), 30 invalid input, arguments, category or state
/// transition, 40 not found (thread, message, agent, reservation, unknown sender or
/// recipient, missing task), 50 storage, I/O or internal error.
/// With --json every command prints one envelope: {"ok":true,"command":...} or
/// {"ok":false,"command":...,"error":{"code":...,"message":...}}.
#[derive(Parser)]
#[command(name = "inbox", version, about, long_about, after_help = WORKER_FLOW)]
pub struct Cli {
    /// Database file (default: <project>/.agents/coord.db); its daemon's socket sits beside it.
    #[arg(long, global = true, env = "COORD_DB", value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// Print one machine-readable JSON envelope instead of text.
    #[arg(long, global = true)]
    pub json: bool,
    /// Who you are: the default for --from, the agent for fetch/claim/update/done/..., and
    /// `show` marks the thread read for this agent.
    #[arg(long, global = true, env = "COORD_AGENT", value_name = "NAME")]
    pub agent: Option<String>,
    /// Do not start the daemon if it is not running (also COORD_NO_AUTOSTART=1).
    #[arg(long, global = true)]
    pub no_autostart: bool,
    #[command(subcommand)]
    pub command: Cmd,
}

const WORKER_FLOW: &str = "\
Worker flow:
  inbox fetch --agent W --status pending --json
  inbox claim --agent W --thread THR --lease-seconds 900 --json
  inbox update --agent W --thread THR --status in_progress --summary \"...\"
  inbox update --agent W --thread THR --status blocked --summary \"Need X\" --json   # note event_id
  inbox wait-reply --thread THR --after-event EVENT_ID --timeout-seconds 1800 --json
  inbox done --agent W --thread THR --summary \"...\" --body-file result.md";

#[derive(Subcommand)]
pub enum Cmd {
    /// Create the database and schema (and start the daemon) for this project.
    Init(InitArgs),
    /// Create a thread with its first message, or append a message to --thread.
    Send(SendArgs),
    /// List candidate threads assigned to an agent, without claiming them (never writes).
    Fetch(FetchArgs),
    /// Take the lease on a thread: exclusive ownership until it expires.
    Claim(LeaseArgs),
    /// Extend your lease on a thread.
    Renew(LeaseArgs),
    /// Report progress (in_progress) or a block (blocked) on a thread you hold.
    Update(UpdateArgs),
    /// Reply inside a thread (an answer to a blocked thread resumes it).
    Reply(ReplyArgs),
    /// Finish a thread you hold, with its result.
    Done(FinishArgs),
    /// Fail a thread you hold, saying why.
    Fail(FinishArgs),
    /// Cancel a thread (releases any lease).
    Cancel(CancelArgs),
    /// List threads with filters, most recently active first.
    List(ListArgs),
    /// Show one thread with its full history and artifacts.
    Show(ShowArgs),
    /// Block until matching activity appears (a server-side subscription, no polling).
    Watch(WatchArgs),
    /// Block until a reply-like message appears in a thread: the blocked worker's wait.
    WaitReply(WaitReplyArgs),
    /// Agent identities: register, list, show, heartbeat.
    #[command(subcommand)]
    Agent(AgentCmd),
    /// Your mail: messages addressed to you (--agent), newest first, with read/ack state.
    Mail(MailArgs),
    /// Mark a message in your mail read (unread -> read; acked stays acked).
    Read(MailMsgArgs),
    /// Acknowledge a message in your mail (only a recipient may).
    Ack(MailMsgArgs),
    /// Reserve a file scope (path or glob) for a task, exclusive unless --shared.
    Reserve(ReserveArgs),
    /// Release your reservation of a scope.
    Release(ReleaseArgs),
    /// List active reservations; --path FILE answers "who holds this file?".
    Reservations(ReservationsArgs),
    /// Coordination summary: active reservations, unacked messages, counts by state.
    Status(StatusArgs),
    /// Git integration: a pre-commit hook that enforces reservations.
    #[command(subcommand)]
    Hooks(HooksCmd),
    /// Deliver your queued messages (marks them delivered; a message is delivered once).
    Check(MailboxArgs),
    /// Count your queued messages: {"pending": N, "urgent": M}. Cheap; never delivers.
    Pending(MailboxArgs),
    /// Take back a message you sent that was not delivered yet.
    Withdraw(MailMsgArgs),
    /// Linked peer tasks: `send --to-peer` reaches the other side.
    #[command(subcommand)]
    Peer(PeerCmd),
    /// Agent-session integration: Claude Code hook handlers and their installation.
    #[command(subcommand)]
    Hook(HookCmd),
    /// Serve the Model Context Protocol on stdin/stdout for one agent session (--agent).
    ///
    /// Tools: check_inbox, inbox_status, send_message, fetch_work, claim, update, ask,
    /// wait_reply, reply, done, fail, reserve, release, list_agents, requests, respond
    /// (answer a permission, plan approval or shutdown request). Daemon errors come
    /// back as tool errors with {"code","message"}. Register it in an MCP client, e.g.
    /// .mcp.json: {"mcpServers":{"coordd":{"command":"inbox","args":["--agent","W","mcp"]}}}
    /// (`inbox hook install` writes that file).
    Mcp(McpArgs),
    /// Send one typed control message (any type; known types' payloads are checked).
    ///
    /// Example: inbox control --type mode_set_request --to backend --payload '{"mode":"plan"}'
    Control(ControlArgs),
    /// Requests (permission, shutdown, plan approval): open ones addressed to you by default.
    Requests(RequestsArgs),
    /// Answer a permission request: --allow or --deny, with a reason or a changed input.
    ///
    /// Example: inbox permit --request msg_06c... --deny --reason "no force pushes"
    Permit(PermitArgs),
    /// Approve (or --reject) a plan approval request, with feedback.
    ApprovePlan(ApprovePlanArgs),
    /// Tell the lead you went idle: available, interrupted or failed, and what you finished.
    Idle(IdleArgs),
    /// Ask an agent to shut down: its next Claude Code hook answers and stops the session.
    Shutdown(ShutdownArgs),
    /// Ask the lead to approve your plan (--wait for the answer).
    Plan(PlanArgs),
    /// Report a progress line for your session (lossy: never blocks, bounded history).
    ///
    /// Tools run by a session find the daemon in $COORD_PROGRESS (set by `hook install`).
    /// Example: inbox progress "12/40 tests passed" --tool-use-id toolu_01
    Progress(ProgressArgs),
    /// The permission policy: which tool calls need whose approval (Claude Code rule syntax).
    ///
    /// Example: inbox --agent lead policy lead lead && inbox --agent lead policy gate 'Bash(git push*)'
    #[command(subcommand)]
    Policy(PolicyCmd),
    /// Serve the live web dashboard from the daemon and print its URL.
    #[command(long_about = coord_cli::dashboard::ABOUT)]
    Dashboard(coord_cli::dashboard::DashboardArgs),
}

impl Cmd {
    /// The command's name in envelopes.
    pub fn name(&self) -> &'static str {
        match self {
            Cmd::Init(_) => "init",
            Cmd::Send(_) => "send",
            Cmd::Fetch(_) => "fetch",
            Cmd::Claim(_) => "claim",
            Cmd::Renew(_) => "renew",
            Cmd::Update(_) => "update",
            Cmd::Reply(_) => "reply",
            Cmd::Done(_) => "done",
            Cmd::Fail(_) => "fail",
            Cmd::Cancel(_) => "cancel",
            Cmd::List(_) => "list",
            Cmd::Show(_) => "show",
            Cmd::Watch(_) => "watch",
            Cmd::WaitReply(_) => "wait-reply",
            Cmd::Agent(AgentCmd::Register(_)) => "agent register",
            Cmd::Agent(AgentCmd::List(_)) => "agent list",
            Cmd::Agent(AgentCmd::Show) => "agent show",
            Cmd::Agent(AgentCmd::Heartbeat(_)) => "agent heartbeat",
            Cmd::Mail(_) => "mail",
            Cmd::Read(_) => "read",
            Cmd::Ack(_) => "ack",
            Cmd::Reserve(_) => "reserve",
            Cmd::Release(_) => "release",
            Cmd::Reservations(_) => "reservations",
            Cmd::Status(_) => "status",
            Cmd::Hooks(HooksCmd::InstallGit(_)) => "hooks install-git",
            Cmd::Hooks(HooksCmd::PreCommit) => "hooks pre-commit",
            Cmd::Check(_) => "check",
            Cmd::Pending(_) => "pending",
            Cmd::Withdraw(_) => "withdraw",
            Cmd::Peer(_) => "peer link",
            Cmd::Hook(HookCmd::Claude(_)) => "hook claude",
            Cmd::Hook(HookCmd::Install(_)) => "hook install",
            Cmd::Mcp(_) => "mcp",
            Cmd::Control(_) => "control",
            Cmd::Requests(_) => "requests",
            Cmd::Permit(_) => "permit",
            Cmd::ApprovePlan(_) => "approve-plan",
            Cmd::Idle(_) => "idle",
            Cmd::Shutdown(_) => "shutdown",
            Cmd::Plan(_) => "plan",
            Cmd::Progress(_) => "progress",
            Cmd::Policy(PolicyCmd::Show) => "policy show",
            Cmd::Policy(PolicyCmd::Gate(_)) => "policy gate",
            Cmd::Policy(PolicyCmd::Ungate(_)) => "policy ungate",
            Cmd::Policy(PolicyCmd::Lead(_)) => "policy lead",
            Cmd::Policy(PolicyCmd::Timeout(_)) => "policy timeout",
            Cmd::Policy(PolicyCmd::Check(_)) => "policy check",
            Cmd::Policy(PolicyCmd::Clear) => "policy clear",
            Cmd::Dashboard(_) => "dashboard",
        }
    }
}
