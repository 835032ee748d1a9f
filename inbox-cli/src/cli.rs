//! Command-line definitions of `inbox`: every command and flag of the inbox CLI contract.
//! The commands, their grouping in `--help` ([`GROUPS`]) and the global flags are declared
//! here; the flags of each command group in a file of its own: [`threads`] (the worker
//! protocol), [`waits`], [`search`], [`agents`] (agents, mail, reservations), [`control`]
//! (team control) and [`session`] (the session mailbox, hooks and the git guard, MCP,
//! completions).

mod agents;
mod control;
mod search;
mod session;
mod threads;
mod waits;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

pub use agents::*;
pub use control::*;
pub use search::*;
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
/// forbidden, stale lease or reservation), 30 invalid input, arguments (a missing --task
/// for reserve included), category or state transition, 40 not found (thread, message,
/// agent, reservation, no project here, unknown sender or
/// recipient), 50 storage, I/O or internal error (or no daemon).
/// With --json every command prints one envelope: {"ok":true,"command":...} or
/// {"ok":false,"command":...,"error":{"code":...,"message":...}} (usage errors too).
/// Global flags go before or after the command.
#[derive(Parser)]
#[command(name = "inbox", version, about, long_about, after_help = WORKER_FLOW)]
pub struct Cli {
    /// Database file (default: <project>/.agents/coord.db); its daemon's socket sits beside it.
    #[arg(long, global = true, env = "COORD_DB", value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// Print one machine-readable JSON envelope instead of text (nothing on stderr while
    /// waiting).
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
  inbox done --agent W --thread THR --summary \"...\" --body-file result.md

More: inbox <command> --help (each has an example); docs/ in the source tree.";

/// The top-level help lists the commands by purpose. To put a command in a group, add its
/// name here; a command in no group is listed under "Other commands".
pub const GROUPS: &[(&str, &[&str])] = &[
    (
        "Work (the worker protocol)",
        &["fetch", "claim", "renew", "update", "wait-reply", "done", "fail", "send", "reply", "cancel"],
    ),
    ("Threads and events", &["list", "show", "watch", "search", "status", "dashboard"]),
    ("Mail", &["mail", "read", "ack", "check", "pending", "withdraw"]),
    ("Agents", &["agent", "peer"]),
    ("Reservations", &["reserve", "release", "reservations"]),
    (
        "Team control (requests, answers, the permission policy)",
        &["control", "requests", "permit", "approve-plan", "idle", "shutdown", "plan", "progress", "policy"],
    ),
    ("Sessions and setup", &["init", "hook", "mcp", "completions", "man"]),
];

#[derive(Subcommand)]
pub enum Cmd {
    /// Create the database and schema (and start the daemon) for this project.
    #[command(
        after_help = "Examples:\n  inbox init                 # in the project's root; .agents/ is kept out of git\n  \
                      inbox init --require-credentials --lead lead   # lead: a registered agent"
    )]
    Init(InitArgs),
    /// Create a thread with its first message, or append a message to --thread.
    #[command(
        after_help = "Example:\n  inbox send --from lead --to backend --subject \"Post CRUD\" --summary \"Implement post CRUD\" --json"
    )]
    Send(SendArgs),
    /// List candidate threads assigned to an agent, without claiming them (never writes).
    #[command(after_help = "Example:\n  inbox fetch --agent backend --status pending --json")]
    Fetch(FetchArgs),
    /// Take the lease on a thread: exclusive ownership until it expires.
    #[command(after_help = "Example:\n  inbox claim --agent backend --thread thr_... --lease-seconds 900 --json")]
    Claim(LeaseArgs),
    /// Extend your lease on a thread.
    #[command(after_help = "Example:\n  inbox renew --agent backend --thread thr_... --lease-seconds 900")]
    Renew(LeaseArgs),
    /// Report progress (in_progress) or a block (blocked) on a thread you hold.
    #[command(
        after_help = "Example:\n  inbox update --agent backend --thread thr_... --status blocked --summary \"Need auth decision\" --json"
    )]
    Update(UpdateArgs),
    /// Reply inside a thread (an answer to a blocked thread resumes it).
    #[command(after_help = "Example:\n  inbox reply --from lead --thread thr_... --summary \"Use email/password\"")]
    Reply(ReplyArgs),
    /// Finish a thread you hold, with its result.
    #[command(
        after_help = "Example:\n  inbox done --agent backend --thread thr_... --summary \"Done\" --body-file result.md --artifact result.md"
    )]
    Done(FinishArgs),
    /// Fail a thread you hold, saying why.
    #[command(
        after_help = "Example:\n  inbox fail --agent backend --thread thr_... --summary \"Migrations do not apply\""
    )]
    Fail(FinishArgs),
    /// Cancel a thread (releases any lease).
    #[command(after_help = "Example:\n  inbox cancel --agent lead --thread thr_... --reason \"superseded\"")]
    Cancel(CancelArgs),
    /// List threads with filters, most recently active first.
    #[command(after_help = "Example:\n  inbox list --status blocked,in_progress --run R1")]
    List(ListArgs),
    /// Show one thread with its full history and artifacts.
    #[command(
        after_help = "Example:\n  inbox show --thread thr_... --agent backend   # also marks it read for backend"
    )]
    Show(ShowArgs),
    /// Block until matching activity appears (a server-side subscription, no polling).
    #[command(
        after_help = "Examples:\n  inbox watch --agent backend --timeout-seconds 600\n  inbox watch --run R1 --follow    # the run's threads, tasks and merges, with timestamps"
    )]
    Watch(WatchArgs),
    /// Block until a reply-like message appears in a thread: the blocked worker's wait.
    #[command(
        after_help = "Example:\n  inbox wait-reply --thread thr_... --after-event 51 --timeout-seconds 1800 --json"
    )]
    WaitReply(WaitReplyArgs),
    /// Ranked full-text search over message subjects, summaries and bodies.
    #[command(
        after_help = "Examples:\n  inbox search \"auth decision\"\n  inbox search migration --run R1 --kind question,answer --since 2026-11-01T00:00:00Z --json"
    )]
    Search(SearchArgs),
    /// Agent identities: register, list, show, heartbeat.
    #[command(subcommand)]
    Agent(AgentCmd),
    /// Your mail: messages addressed to you (--agent), newest first, with their state.
    #[command(after_help = "Example:\n  inbox mail --agent backend --state unread")]
    Mail(MailArgs),
    /// Mark a message in your mail read (unread -> read; acked stays acked).
    #[command(after_help = "Example:\n  inbox read --agent backend --message msg_...")]
    Read(MailMsgArgs),
    /// Acknowledge a message in your mail (only a recipient may).
    #[command(after_help = "Example:\n  inbox ack --agent backend --message msg_...")]
    Ack(MailMsgArgs),
    /// Reserve a file scope (path or glob) for a task, exclusive unless --shared.
    #[command(after_help = "Example:\n  inbox reserve --agent backend --scope \"src/db/**\" --task T1 --ttl 120")]
    Reserve(ReserveArgs),
    /// Release your reservation of a scope.
    #[command(after_help = "Example:\n  inbox release --agent backend --scope \"src/db/**\"")]
    Release(ReleaseArgs),
    /// List active reservations; --path FILE answers "who holds this file?".
    #[command(after_help = "Example:\n  inbox reservations --path src/db/schema.rs")]
    Reservations(ReservationsArgs),
    /// Coordination summary: active reservations, unacked messages, counts by state.
    #[command(after_help = "Example:\n  inbox status --task T1")]
    Status(StatusArgs),
    /// Deliver your queued messages (marks them delivered; a message is delivered once).
    #[command(after_help = "Example:\n  inbox check --agent backend --task T1")]
    Check(MailboxArgs),
    /// Count your queued messages (pending, and how many are urgent). Never delivers.
    #[command(after_help = "Example:\n  inbox pending --agent backend --json     # {\"pending\": 2, \"urgent\": 0}")]
    Pending(MailboxArgs),
    /// Take back a message you sent that was not delivered yet.
    #[command(after_help = "Example:\n  inbox withdraw --agent lead --message msg_...")]
    Withdraw(MailMsgArgs),
    /// Linked peer tasks: `send --to-peer` reaches the other side.
    #[command(subcommand)]
    Peer(PeerCmd),
    /// Hooks: Claude Code and Codex session hooks (install, doctor, claude) and the git guard (install-git,
    /// pre-commit).
    #[command(subcommand, alias = "hooks")]
    Hook(HookCmd),
    /// Serve the Model Context Protocol on stdin/stdout for one agent session (--agent).
    ///
    /// Tools: check_inbox, inbox_status, send_message, fetch_work, claim, update, ask,
    /// wait_reply, reply, done, fail, reserve, release, list_agents, search_messages,
    /// requests, respond (answer a permission, plan approval or shutdown request).
    /// Daemon errors come back as tool errors with {"code","message"}. Register it in an MCP
    /// client, e.g. .mcp.json: {"mcpServers":{"coordd":{"command":"inbox","args":["--agent","W","mcp"]}}}
    /// (`inbox hook install` writes that file).
    #[command(after_help = "Example:\n  inbox --agent backend mcp --task T1")]
    Mcp(McpArgs),
    /// Send one typed control message (any type; known types' payloads are checked).
    #[command(
        after_help = "Examples:\n  inbox --agent lead control --type mode_set_request --to backend --payload '{\"mode\":\"plan\"}'\n  inbox --agent w1 control --type permission_request --run R1 --payload '{\"request_id\":\"p1\",\"tool_name\":\"Bash\",\"input\":{\"command\":\"git push\"}}'"
    )]
    Control(ControlArgs),
    /// Requests (permission, shutdown, plan approval): open ones addressed to you by default.
    #[command(
        after_help = "Examples:\n  inbox --agent lead requests\n  inbox --agent lead requests --run R1 --all --json"
    )]
    Requests(RequestsArgs),
    /// Answer a permission request: --allow or --deny, with a reason or a changed input.
    #[command(
        after_help = "Examples:\n  inbox --agent lead permit --request msg_06c... --deny --reason \"no force pushes\"\n  inbox --agent lead permit --request msg_06c... --allow --updated-input '{\"command\":\"git push --dry-run\"}'"
    )]
    Permit(PermitArgs),
    /// Approve (or --reject) a plan approval request, with feedback.
    #[command(
        after_help = "Example:\n  inbox --agent lead approve-plan --request msg_06c... --reject --feedback \"tests first\""
    )]
    ApprovePlan(ApprovePlanArgs),
    /// Tell the lead you went idle: available, interrupted or failed, and what you finished.
    #[command(
        after_help = "Example:\n  inbox --agent w1 idle --task T1 --completed-status resolved --summary \"schema merged\""
    )]
    Idle(IdleArgs),
    /// Ask an agent to shut down: its next Claude Code hook answers and stops the session.
    /// The request carries the run and task of the thread the agent holds (or --run,
    /// --task) and stops only that task's session; it expires after --expires-in seconds
    /// (default 300). Once approved, the task's thread is blocked ("worker stopped"), its
    /// lease released, and you get an idle notification with reason shutdown.
    #[command(
        after_help = "Example:\n  inbox --agent lead shutdown --to w1 --reason \"run finished\" --wait --timeout-seconds 120"
    )]
    Shutdown(ShutdownArgs),
    /// Ask the lead to approve your plan (--wait for the answer).
    #[command(after_help = "Example:\n  inbox --agent w1 plan --plan-file plan.md --run R1 --task T1 --wait")]
    Plan(PlanArgs),
    /// Report a progress line for your session (lossy: never blocks, bounded history).
    ///
    /// Tools run by a session find the daemon in $COORD_PROGRESS (set by `hook install`).
    #[command(after_help = "Example:\n  inbox progress \"12/40 tests passed\" --tool-use-id toolu_01")]
    Progress(ProgressArgs),
    /// The permission policy: which tool calls need whose approval (Claude Code rule syntax).
    #[command(
        subcommand,
        after_help = "Example:\n  inbox --agent lead policy lead lead && inbox --agent lead policy gate 'Bash(git push*)'"
    )]
    Policy(PolicyCmd),
    /// Serve the live web dashboard from the daemon and print its URL.
    #[command(
        long_about = coord_cli::dashboard::ABOUT,
        after_help = "Examples:\n  inbox dashboard --open\n  inbox dashboard --port 8080\n  inbox dashboard --stop"
    )]
    Dashboard(coord_cli::dashboard::DashboardArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    #[command(after_help = "Example:\n  inbox completions bash > ~/.local/share/bash-completion/completions/inbox")]
    Completions(CompletionsArgs),
    /// Print the manual page (roff).
    #[command(after_help = "Example:\n  inbox man | man -l -")]
    Man,
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
            Cmd::Search(_) => "search",
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
            Cmd::Check(_) => "check",
            Cmd::Pending(_) => "pending",
            Cmd::Withdraw(_) => "withdraw",
            Cmd::Peer(_) => "peer link",
            Cmd::Hook(HookCmd::Claude(_)) => "hook claude",
            Cmd::Hook(HookCmd::Install(_)) => "hook install",
            Cmd::Hook(HookCmd::Doctor(_)) => "hook doctor",
            Cmd::Hook(HookCmd::InstallGit(_)) => "hook install-git",
            Cmd::Hook(HookCmd::PreCommit) => "hook pre-commit",
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
            Cmd::Completions(_) => "completions",
            Cmd::Man => "man",
        }
    }

    /// Commands that only read: outside a project they say so (exit 40) instead of
    /// creating `.agents/` there. Writes and `init` create the project.
    pub fn is_read_only(&self) -> bool {
        matches!(
            self,
            Cmd::Fetch(_)
                | Cmd::List(_)
                | Cmd::Show(_)
                | Cmd::Watch(_)
                | Cmd::WaitReply(_)
                | Cmd::Search(_)
                | Cmd::Agent(AgentCmd::List(_) | AgentCmd::Show)
                | Cmd::Mail(_)
                | Cmd::Reservations(_)
                | Cmd::Status(_)
                | Cmd::Pending(_)
                | Cmd::Requests(_)
                | Cmd::Policy(PolicyCmd::Show | PolicyCmd::Check(_))
        )
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn every_command_has_an_example_and_every_flag_a_description() {
        let missing = coord_cli::usage::missing_help(&super::Cli::command());
        assert!(missing.is_empty(), "{}", missing.join("\n"));
    }
}
