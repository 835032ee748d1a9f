//! `inbox hook`: the session hooks of Claude Code, Codex, Gemini CLI and opencode
//! (`install`, `doctor`, and `claude`, the handler the installed hooks run, adapted to each
//! client by `client_shape`) and the git guard (`install-git`,
//! `pre-commit`). One file per command; `claude_hook` and `permission_hook` answer the
//! hook events, `codex_setup` the Codex side of install and doctor, `githook` the guard.

mod claude;
mod claude_hook;
mod client_shape;
mod codex_setup;
mod doctor;
mod githook;
mod install;
mod install_git;
mod permission_hook;
mod pre_commit;

use std::path::{Path, PathBuf};

use coord_cli::{CliError, Command, Ctx, Outcome, Res};
use coord_proto::ErrorCode;
use coord_proto::api::{AgentsApiClient, MailApiClient};
use coord_proto::types::*;
use serde_json::json;

coord_cli::subcommands! {
    /// The subcommands of `inbox hook`.
    pub enum Hook {
        Claude(claude::Args),
        Install(install::Args),
        Doctor(doctor::Args),
        InstallGit(install_git::Args),
        PreCommit(pre_commit::Args),
    }
}

/// What `hook claude` is given: the event, and the session it runs for.
#[derive(clap::Args)]
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
    /// `continue: false`; gemini's and opencode's tool names are read as Claude Code's, and
    /// gemini's permission decisions answered in its shape.
    #[arg(long, value_enum, default_value_t = AgentClient::Claude)]
    pub client: AgentClient,
}

/// An agent CLI coordd installs session files for.
#[derive(Clone, Copy, PartialEq, Eq, Debug, clap::ValueEnum)]
pub enum AgentClient {
    Claude,
    Codex,
    /// Gemini CLI: its tool names are mapped to Claude Code's, and a permission decision is
    /// answered in its shape (`decision`/`reason`).
    Gemini,
    /// opencode, through coordd's plugin: its tool names are mapped to Claude Code's.
    Opencode,
}

/// `--client` of `hook install`.
#[derive(Clone, Copy, PartialEq, Eq, Debug, clap::ValueEnum)]
pub enum ClientChoice {
    Claude,
    Codex,
    Gemini,
    Opencode,
    All,
}

/// The Claude Code hook events `hook claude` answers.
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
