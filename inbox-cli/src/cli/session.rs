//! The flags of the session mailbox (check, pending, withdraw, peer link), the hooks
//! (`hook claude`, `hook install`, and the git guard's `hook install-git`, `hook
//! pre-commit`), the MCP server (`mcp`) and `completions`.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::waits::MAX_TIMEOUT;

/// The longest `wait_reply` of `inbox mcp` waits by default: under the 60 s many MCP
/// clients allow a call.
pub const DEFAULT_WAIT_SECONDS: u64 = 45;

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
    #[command(after_help = "Example:\n  inbox peer link --task T-back --task T-front")]
    Link(PeerLinkArgs),
}

#[derive(Args)]
pub struct PeerLinkArgs {
    /// A task to link; give exactly two.
    #[arg(long = "task", value_name = "TASK_ID", num_args = 1, required = true)]
    pub tasks: Vec<String>,
}

#[derive(Subcommand)]
pub enum HookCmd {
    /// Claude Code hook handler: reads the hook's JSON on stdin, prints the hook's JSON
    /// answer. Fails open: with no daemon it prints nothing and exits 0.
    #[command(
        after_help = "Example (what the installed hooks run):\n  inbox --agent backend hook claude post-tool-use --task T1 < hook.json"
    )]
    Claude(HookClaudeArgs),
    /// Write the session hooks and the coordd MCP server for Claude Code
    /// (.claude/settings.local.json, .mcp.json, CLAUDE.md) and/or Codex (.codex/config.toml,
    /// .codex/hooks.json), and an inbox note for AGENTS.md, all kept out of git.
    ///
    /// A file the repository tracks is never modified: the note then goes to CLAUDE.local.md
    /// and AGENTS.override.md. What is written is listed in .git/info/exclude. Codex loads
    /// .codex/ only in a trusted project: see `inbox hook doctor`.
    #[command(
        after_help = "Examples:\n  inbox --agent backend hook install --task T1 --approve-mcp\n  inbox --agent backend hook install --client codex\n  inbox --agent backend hook install --client codex --trust-global"
    )]
    Install(HookInstallArgs),
    /// Check a worktree's session files, and tell when Codex would skip them (an untrusted
    /// project or untrusted hooks: Codex skips them silently) or its sandbox would keep the
    /// model's shell commands from the daemon.
    #[command(after_help = "Examples:\n  inbox hook doctor\n  inbox hook doctor --dir ../wt-1 --json")]
    Doctor(HookDoctorArgs),
    /// Install a git pre-commit hook refusing commits that touch files under another
    /// agent's active exclusive reservation. The committing agent is $COORD_AGENT. An
    /// existing hook is kept as pre-commit.local and still runs first.
    #[command(after_help = "Example:\n  inbox hook install-git --repo .")]
    InstallGit(InstallGitArgs),
    /// What the installed git hook runs: check the staged files against reservations.
    #[command(after_help = "Example (what .git/hooks/pre-commit runs):\n  COORD_AGENT=backend inbox hook pre-commit")]
    PreCommit,
}

#[derive(Args)]
pub struct InstallGitArgs {
    /// The repository (default: the current directory).
    #[arg(long, value_name = "PATH")]
    pub repo: Option<PathBuf>,
}

#[derive(Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

#[derive(Args)]
pub struct HookClaudeArgs {
    /// The Claude Code hook event being answered.
    #[arg(value_enum)]
    pub event: HookEvent,
    /// The session's task (also $COORD_TASK).
    #[arg(long, value_name = "TASK_ID", env = "COORD_TASK")]
    pub task: Option<String>,
    /// The session's run (also $COORD_RUN): its creator is the lead told when the session
    /// goes idle, and permission requests carry it.
    #[arg(long, value_name = "RUN_ID", env = "COORD_RUN")]
    pub run: Option<String>,
    /// pre-tool-use and permission-request: seconds to wait for the approver (default: the
    /// policy's timeout, 120 s unless set).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=coord_proto::types::MAX_PERMISSION_TIMEOUT))]
    pub timeout_seconds: Option<u64>,
    /// The session has the coordd MCP server: reminders name its check_inbox tool first.
    #[arg(long)]
    pub mcp: bool,
    /// The agent client running the hook: codex's model is told to use the MCP tools (its
    /// sandboxed shell cannot reach the daemon), and it is stopped through Stop, not
    /// `continue: false`.
    #[arg(long, value_enum, default_value_t = AgentClient::Claude)]
    pub client: AgentClient,
}

/// An agent CLI coordd installs session files for.
#[derive(Clone, Copy, PartialEq, Eq, Debug, clap::ValueEnum)]
pub enum AgentClient {
    Claude,
    Codex,
}

/// `--client` of `hook install`.
#[derive(Clone, Copy, PartialEq, Eq, Debug, clap::ValueEnum)]
pub enum ClientChoice {
    Claude,
    Codex,
    All,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HookEvent {
    PostToolUse,
    Stop,
    UserPromptSubmit,
    SessionStart,
    /// Gate the tool call by the permission policy: ask the approver, allow or deny.
    PreToolUse,
    /// Claude Code is about to show a permission prompt: let the approver answer instead.
    PermissionRequest,
}

#[derive(Args)]
pub struct HookInstallArgs {
    /// The worktree to write into (default: the current directory).
    #[arg(long, value_name = "PATH")]
    pub dir: Option<PathBuf>,
    /// The task the session works on.
    #[arg(long, value_name = "TASK_ID")]
    pub task: Option<String>,
    /// The run the task belongs to (its creator leads the session).
    #[arg(long, value_name = "RUN_ID")]
    pub run: Option<String>,
    /// Also approve the coordd MCP server in .claude/settings.local.json, so Claude Code
    /// starts it without asking (orch's worktrees get this; here it is your choice).
    #[arg(long)]
    pub approve_mcp: bool,
    /// The agent clients to install for (default: every client found on PATH or already
    /// configured in the worktree; Claude Code when there is none).
    #[arg(long, value_enum, value_name = "CLIENT")]
    pub client: Option<ClientChoice>,
    /// Codex: also trust the worktree in your global Codex config ($CODEX_HOME/config.toml,
    /// else ~/.codex/config.toml), so plain `codex` loads .codex/. What is added is shown
    /// before it is written. Not needed for sessions coord-launch starts.
    #[arg(long)]
    pub trust_global: bool,
}

#[derive(Args)]
pub struct HookDoctorArgs {
    /// The worktree to check (default: the current directory).
    #[arg(long, value_name = "PATH")]
    pub dir: Option<PathBuf>,
}

#[derive(Args)]
pub struct McpArgs {
    /// The session's task (also $COORD_TASK): its mail is checked with yours, reservations
    /// are made for it, and send_message to_peer reaches its linked peers.
    #[arg(long, value_name = "TASK_ID", env = "COORD_TASK")]
    pub task: Option<String>,
    /// The longest one wait_reply call waits, and its default. Keep it under your MCP
    /// client's request timeout; the agent re-arms with the cursor it returns.
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_WAIT_SECONDS,
          value_parser = clap::value_parser!(u64).range(1..=MAX_TIMEOUT))]
    pub wait_seconds: u64,
}
