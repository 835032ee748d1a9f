//! What every command handler gets: the command's name and output mode, who is asking
//! (`--agent`), and the daemon connection, opened on first use. A handler checks its
//! arguments and builds its params first, then asks for the client, so a usage error never
//! connects or starts a daemon. [`Outcome`] is how a command that did not fail ended;
//! `main` turns it into the exit status.

use coord_cli::{CliError, Connection, envelope, to_value};
use coord_client::{Client, ConnectOptions};

use crate::cli::{Cli, Cmd};

/// How a command that did not fail ended.
pub enum Outcome {
    /// It did what was asked.
    Done,
    /// Nothing matched: no work to fetch, a wait that timed out, nothing watched.
    NoMatch,
    /// The git guard refused the commit: staged files lie in another agent's reservation.
    Refused,
}

/// What a handler returns.
pub type Res = Result<Outcome, CliError>;

/// The context of one command.
pub struct Ctx {
    /// The command's name in envelopes and error messages (`agent register`, ...).
    pub command: &'static str,
    /// Print one JSON envelope instead of text.
    pub json: bool,
    /// Who you are: `--agent`, else `COORD_AGENT`.
    pub agent: Option<String>,
    /// `--agent` was given on the command line, not only through `COORD_AGENT`.
    agent_explicit: bool,
    conn: Connection,
}

impl Ctx {
    /// `agent_explicit`: --agent was given on the command line (see [`Ctx::explicit_agent`]).
    pub fn new(cli: &Cli, agent_explicit: bool) -> Ctx {
        Ctx {
            command: cli.command.name(),
            // `inbox mcp` owns stdout (the protocol channel): its failures go to stderr as text.
            json: cli.json && !matches!(cli.command, Cmd::Mcp(_)),
            agent: cli.agent.clone(),
            agent_explicit,
            conn: Connection::new(cli.db.as_deref(), cli.no_autostart)
                .read_only(cli.command.is_read_only())
                .announce_start(!cli.json),
        }
    }

    /// The daemon client, connected (and the daemon started if allowed) on the first call.
    pub async fn client(&self) -> Result<&Client, CliError> {
        self.conn.client().await
    }

    /// Where the daemon is, for the commands that connect their own way (the hooks, MCP)
    /// or only need the database path.
    pub fn connect_options(&self) -> &ConnectOptions {
        self.conn.options()
    }

    /// The agent, which the command requires. The message does not name the command: the
    /// error's line (`inbox done: ...`) and envelope already do.
    pub fn agent(&self) -> Result<String, CliError> {
        self.agent
            .clone()
            .ok_or_else(|| CliError::Invalid("--agent is required: pass --agent NAME (or set COORD_AGENT)".into()))
    }

    /// `explicit` (e.g. `--from`), else the agent.
    pub fn agent_or(&self, explicit: Option<String>, flag: &str) -> Result<String, CliError> {
        match explicit {
            Some(a) => Ok(a),
            None => self
                .agent
                .clone()
                .ok_or_else(|| CliError::Invalid(format!("--{flag} is required (or pass --agent NAME)"))),
        }
    }

    /// The --agent given on this command line, ignoring COORD_AGENT (for filters).
    pub fn explicit_agent(&self) -> Option<String> {
        self.agent.clone().filter(|_| self.agent_explicit)
    }

    /// Print `v` as the command's envelope with --json, else run the text output.
    pub fn print<T: serde::Serialize>(&self, v: &T, text: impl FnOnce()) {
        if self.json {
            envelope(self.command, to_value(v));
        } else {
            text();
        }
    }
}
