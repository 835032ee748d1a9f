//! Command-line definitions of `inbox`: every command and flag of the inbox CLI contract.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use coord_proto::types::{AgentStatus, MailState, MessageKind, Priority, ThreadStatus};

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

/// Longest wait accepted (ten years); no timeout means wait forever.
const MAX_TIMEOUT: u64 = 315_360_000;

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
    /// wait_reply, reply, done, fail, reserve, release, list_agents. Daemon errors come
    /// back as tool errors with {"code","message"}. Register it in an MCP client, e.g.
    /// .mcp.json: {"mcpServers":{"coordd":{"command":"inbox","args":["--agent","W","mcp"]}}}
    /// (`inbox hook install` writes that file).
    Mcp(McpArgs),
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
        }
    }
}

/// Message content shared by send, update, reply, done and fail.
#[derive(Args)]
pub struct Content {
    /// One-line summary (required).
    #[arg(long)]
    pub summary: String,
    /// Message body.
    #[arg(long, conflicts_with = "body_file")]
    pub body: Option<String>,
    /// Read the body from a file (`-` for stdin).
    #[arg(long, value_name = "PATH")]
    pub body_file: Option<PathBuf>,
    /// Structured payload: a JSON object.
    #[arg(long, value_name = "JSON")]
    pub payload_json: Option<String>,
    #[command(flatten)]
    pub artifacts: ArtifactArgs,
}

/// Artifacts: the i-th --artifact-kind and --artifact-metadata-json go with the i-th
/// --artifact; a single one applies to every artifact.
#[derive(Args)]
pub struct ArtifactArgs {
    /// Attach a file or other reference (repeatable).
    #[arg(long = "artifact", value_name = "PATH")]
    pub paths: Vec<String>,
    /// Kind of the artifact, e.g. report, log, patch (default: file).
    #[arg(long = "artifact-kind", value_name = "KIND")]
    pub kinds: Vec<String>,
    /// Metadata of the artifact: a JSON object.
    #[arg(long = "artifact-metadata-json", value_name = "JSON")]
    pub metadata: Vec<String>,
}

#[derive(Args)]
pub struct SendArgs {
    /// Sender (default: --agent).
    #[arg(long)]
    pub from: Option<String>,
    /// Recipient agent, or `broadcast` (every registered agent).
    #[arg(long, required_unless_present_any = ["to_task", "to_peer"], conflicts_with_all = ["to_task", "to_peer"])]
    pub to: Option<String>,
    /// Send to a task: whoever runs it gets the message (kept until the task starts).
    #[arg(long, value_name = "TASK_ID", conflicts_with = "to_peer")]
    pub to_task: Option<String>,
    /// Send to the peer(s) linked to your task (--task, or $COORD_TASK).
    #[arg(long)]
    pub to_peer: bool,
    /// A queued message not delivered within this many seconds expires.
    #[arg(long, value_name = "SECONDS")]
    pub expires_in: Option<u64>,
    /// Subject of a new thread (default: the summary).
    #[arg(long)]
    pub subject: Option<String>,
    /// Append to this thread instead of creating one.
    #[arg(long, value_name = "THREAD_ID")]
    pub thread: Option<String>,
    /// Run id the thread belongs to.
    #[arg(long, value_name = "RUN_ID")]
    pub run: Option<String>,
    /// Task id the thread carries.
    #[arg(long, value_name = "TASK_ID")]
    pub task: Option<String>,
    /// Message kind (default: task for a new thread, progress otherwise).
    #[arg(long)]
    pub kind: Option<MessageKind>,
    /// Priority: low, normal, high or urgent (default: the thread's).
    #[arg(long)]
    pub priority: Option<Priority>,
    /// Mail category: HANDOFF, BLOCKED, DECISION or INFO (needs --task). HANDOFF and
    /// BLOCKED ask every recipient to ack. `--to broadcast` reaches every registered agent.
    #[arg(long, value_name = "CATEGORY")]
    pub category: Option<String>,
    /// Ask every recipient to ack the message (`inbox ack`).
    #[arg(long, conflicts_with = "no_ack")]
    pub requires_ack: bool,
    /// Do not ask for an ack, even for HANDOFF or BLOCKED.
    #[arg(long)]
    pub no_ack: bool,
    #[command(flatten)]
    pub content: Content,
}

#[derive(Args)]
pub struct InitArgs {
    /// Require registration: sends from or to unregistered agents fail (unknown_sender,
    /// unknown_recipient). Stored in the database.
    #[arg(long, conflicts_with = "no_strict_agents")]
    pub strict_agents: bool,
    /// Accept unregistered agents again (they are recorded when first seen).
    #[arg(long)]
    pub no_strict_agents: bool,
}

#[derive(Subcommand)]
pub enum AgentCmd {
    /// Register an agent id (fails if it exists, unless --force-update).
    Register(RegisterArgs),
    /// List agents, sorted by id.
    List(AgentListArgs),
    /// Show one agent (--agent ID).
    Show,
    /// Say the agent (--agent ID) is alive, optionally with a new status.
    Heartbeat(HeartbeatArgs),
}

#[derive(Args)]
pub struct RegisterArgs {
    /// The agent id: lowercase letters and digits in hyphen-joined groups, 3 to 48 long.
    #[arg(long, value_name = "ID")]
    pub name: String,
    /// The agent's role, e.g. ui, backend, reviewer.
    #[arg(long)]
    pub role: String,
    /// A display name (default: the id).
    #[arg(long, value_name = "TEXT")]
    pub display: Option<String>,
    /// Update the display name and role of an existing agent (never renames).
    #[arg(long)]
    pub force_update: bool,
}

#[derive(Args)]
pub struct AgentListArgs {
    #[arg(long)]
    pub role: Option<String>,
    #[arg(long)]
    pub status: Option<AgentStatus>,
    /// Include agents that were seen but never registered.
    #[arg(long)]
    pub all: bool,
}

#[derive(Args)]
pub struct HeartbeatArgs {
    /// idle, busy, waiting or offline.
    #[arg(long)]
    pub status: Option<AgentStatus>,
}

#[derive(Args)]
pub struct MailArgs {
    /// Only mail in this state: unread, read or acked.
    #[arg(long)]
    pub state: Option<MailState>,
    /// Only mail about this task.
    #[arg(long, value_name = "TASK_ID")]
    pub task: Option<String>,
    /// At most this many (default 50, at most 500).
    #[arg(long)]
    pub limit: Option<u32>,
}

#[derive(Args)]
pub struct MailMsgArgs {
    #[arg(long, value_name = "MESSAGE_ID")]
    pub message: String,
}

#[derive(Args)]
pub struct ReserveArgs {
    /// A path or glob relative to the project root (`*`, `?`, `[..]`, `**`); a directory
    /// name covers everything below it.
    #[arg(long, value_name = "GLOB")]
    pub scope: String,
    /// The task the reservation serves (required).
    #[arg(long, value_name = "TASK_ID")]
    pub task: Option<String>,
    /// Minutes until it expires: 5 to 1440 (default 120).
    #[arg(long, value_name = "MINUTES")]
    pub ttl: Option<u32>,
    /// Shared: coexists with other shared reservations, never with an exclusive one.
    #[arg(long)]
    pub shared: bool,
    /// Take over overlapping reservations that have expired (bumps the generation).
    #[arg(long)]
    pub takeover_stale: bool,
}

#[derive(Args)]
pub struct ReleaseArgs {
    #[arg(long, value_name = "GLOB")]
    pub scope: String,
}

#[derive(Args)]
pub struct ReservationsArgs {
    #[arg(long, value_name = "TASK_ID")]
    pub task: Option<String>,
    /// Only reservations covering this file.
    #[arg(long, value_name = "FILE")]
    pub path: Option<String>,
    /// Include released and expired reservations (the history).
    #[arg(long)]
    pub all: bool,
    #[arg(long)]
    pub limit: Option<u32>,
}

#[derive(Args)]
pub struct StatusArgs {
    #[arg(long, value_name = "TASK_ID")]
    pub task: Option<String>,
}

#[derive(Subcommand)]
pub enum HooksCmd {
    /// Install a pre-commit hook refusing commits that touch files under another agent's
    /// active exclusive reservation. The committing agent is $COORD_AGENT. An existing
    /// hook is kept as pre-commit.local and still runs first.
    InstallGit(InstallGitArgs),
    /// What the installed hook runs: check the staged files against reservations.
    PreCommit,
}

#[derive(Args)]
pub struct MailboxArgs {
    /// A task's mailbox (also $COORD_TASK). With --agent, both; an agent's mailbox also
    /// holds the mail of the tasks it is running.
    #[arg(long, value_name = "TASK_ID", env = "COORD_TASK")]
    pub task: Option<String>,
}

#[derive(Subcommand)]
pub enum PeerCmd {
    /// Link two tasks as peers: --task A --task B.
    Link(PeerLinkArgs),
}

#[derive(Args)]
pub struct PeerLinkArgs {
    #[arg(long = "task", value_name = "TASK_ID", num_args = 1, required = true)]
    pub tasks: Vec<String>,
}

#[derive(Subcommand)]
pub enum HookCmd {
    /// Claude Code hook handler: reads the hook's JSON on stdin, prints the hook's JSON
    /// answer. Fails open: with no daemon it prints nothing and exits 0.
    Claude(HookClaudeArgs),
    /// Write Claude Code hooks (.claude/settings.json, merged) and an inbox addendum in
    /// CLAUDE.md and AGENTS.md.
    Install(HookInstallArgs),
}

#[derive(Args)]
pub struct McpArgs {
    /// The session's task (also $COORD_TASK): its mail is checked with yours, reservations
    /// are made for it, and send_message to_peer reaches its linked peers.
    #[arg(long, value_name = "TASK_ID", env = "COORD_TASK")]
    pub task: Option<String>,
    /// The longest one wait_reply call waits, and its default. Keep it under your MCP
    /// client's request timeout; the agent re-arms with the cursor it returns.
    #[arg(long, value_name = "SECONDS", default_value_t = crate::mcp::DEFAULT_WAIT_SECONDS,
          value_parser = clap::value_parser!(u64).range(1..=MAX_TIMEOUT))]
    pub wait_seconds: u64,
}

#[derive(Args)]
pub struct HookClaudeArgs {
    /// post-tool-use, stop, user-prompt-submit or session-start.
    pub event: HookEvent,
    /// The session's task (also $COORD_TASK).
    #[arg(long, value_name = "TASK_ID", env = "COORD_TASK")]
    pub task: Option<String>,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HookEvent {
    PostToolUse,
    Stop,
    UserPromptSubmit,
    SessionStart,
}

#[derive(Args)]
pub struct HookInstallArgs {
    /// The worktree to write into (default: the current directory).
    #[arg(long, value_name = "PATH")]
    pub dir: Option<PathBuf>,
    /// The task the session works on.
    #[arg(long, value_name = "TASK_ID")]
    pub task: Option<String>,
}

#[derive(Args)]
pub struct InstallGitArgs {
    /// The repository (default: the current directory).
    #[arg(long, value_name = "PATH")]
    pub repo: Option<PathBuf>,
}

#[derive(Args)]
pub struct FetchArgs {
    /// Statuses to include, comma-separated (default: pending).
    #[arg(long, value_delimiter = ',')]
    pub status: Vec<ThreadStatus>,
    /// At most this many threads (default 50).
    #[arg(long)]
    pub limit: Option<u32>,
    /// Only threads with messages to you that you have not read.
    #[arg(long)]
    pub unread: bool,
}

#[derive(Args)]
pub struct LeaseArgs {
    /// The thread.
    #[arg(long, value_name = "THREAD_ID")]
    pub thread: String,
    /// Lease duration in seconds (default 900).
    #[arg(long)]
    pub lease_seconds: Option<u64>,
    /// With renew: refuse unless this is the current lease's token.
    #[arg(long)]
    pub lease_token: Option<String>,
}

#[derive(Args)]
pub struct UpdateArgs {
    #[arg(long, value_name = "THREAD_ID")]
    pub thread: String,
    /// in_progress (default) or blocked.
    #[arg(long)]
    pub status: Option<ThreadStatus>,
    /// Refuse unless this is the current lease's token (fences off stale processes).
    #[arg(long)]
    pub lease_token: Option<String>,
    #[command(flatten)]
    pub content: Content,
}

#[derive(Args)]
pub struct ReplyArgs {
    /// Sender (default: --agent).
    #[arg(long)]
    pub from: Option<String>,
    /// Recipient (default: the thread's assignee, or its creator when the assignee replies).
    #[arg(long)]
    pub to: Option<String>,
    #[arg(long, value_name = "THREAD_ID")]
    pub thread: String,
    /// answer (default), question, progress or control.
    #[arg(long)]
    pub kind: Option<MessageKind>,
    #[command(flatten)]
    pub content: Content,
}

#[derive(Args)]
pub struct FinishArgs {
    #[arg(long, value_name = "THREAD_ID")]
    pub thread: String,
    /// Refuse unless this is the current lease's token.
    #[arg(long)]
    pub lease_token: Option<String>,
    #[command(flatten)]
    pub content: Content,
}

#[derive(Args)]
pub struct CancelArgs {
    #[arg(long, value_name = "THREAD_ID")]
    pub thread: String,
    /// Why the thread is cancelled.
    #[arg(long)]
    pub reason: String,
    #[command(flatten)]
    pub artifacts: ArtifactArgs,
}

#[derive(Args)]
pub struct ListArgs {
    /// Statuses to include, comma-separated (default: all).
    #[arg(long, value_delimiter = ',')]
    pub status: Vec<ThreadStatus>,
    #[arg(long)]
    pub created_by: Option<String>,
    #[arg(long)]
    pub assigned_to: Option<String>,
    #[arg(long, value_name = "RUN_ID")]
    pub run: Option<String>,
    #[arg(long, value_name = "TASK_ID")]
    pub task: Option<String>,
    /// At most this many threads (default 50).
    #[arg(long)]
    pub limit: Option<u32>,
}

#[derive(Args)]
pub struct ShowArgs {
    #[arg(long, value_name = "THREAD_ID")]
    pub thread: String,
}

#[derive(Args)]
pub struct WatchArgs {
    /// Only threads whose status after the event is one of these, comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub status: Vec<ThreadStatus>,
    /// Only this thread.
    #[arg(long, value_name = "THREAD_ID")]
    pub thread: Option<String>,
    /// Only this run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: Option<String>,
    /// Start after this event id (default: now). Events already stored after it are
    /// delivered first.
    #[arg(long)]
    pub after_event: Option<i64>,
    /// Start after the event that recorded this message.
    #[arg(long, value_name = "MESSAGE_ID")]
    pub after_message: Option<String>,
    /// Give up after this many seconds (exit 10 when nothing came).
    #[arg(long, value_parser = clap::value_parser!(u64).range(0..=MAX_TIMEOUT))]
    pub timeout_seconds: Option<u64>,
    /// Keep printing events (one line each) instead of returning after the first.
    #[arg(long)]
    pub follow: bool,
    /// With --follow: stop after this many events.
    #[arg(long, requires = "follow")]
    pub count: Option<u64>,
}

#[derive(Args)]
pub struct WaitReplyArgs {
    #[arg(long, value_name = "THREAD_ID")]
    pub thread: String,
    /// Wait for a message after this one.
    #[arg(long, value_name = "MESSAGE_ID")]
    pub after_message: Option<String>,
    /// Wait for a message after this event id (use the event_id your update returned).
    #[arg(long)]
    pub after_event: Option<i64>,
    /// Message kinds that count as a reply, comma- or |-separated (default: answer,control,result).
    #[arg(long, value_delimiter = ',', value_parser = parse_kinds)]
    pub kinds: Vec<Vec<MessageKind>>,
    /// Give up after this many seconds (exit 10).
    #[arg(long, value_parser = clap::value_parser!(u64).range(0..=MAX_TIMEOUT))]
    pub timeout_seconds: Option<u64>,
}

fn parse_kinds(s: &str) -> Result<Vec<MessageKind>, String> {
    s.split('|').filter(|k| !k.is_empty()).map(str::parse).collect()
}
