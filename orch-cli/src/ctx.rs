//! What every `orch` command gets: its name and output mode, and the daemon connection,
//! opened on first use (after the command has checked its arguments). [`Outcome`] is how a
//! command that did not fail ended; `main` turns it into the exit status.

use coord_cli::{CliError, Connection, envelope, to_value};
use coord_client::Client;

use crate::cli::Cli;

/// How a command that did not fail ended.
pub enum Outcome {
    /// It did what was asked.
    Done,
    /// Nothing matched: an empty list, a wait that timed out.
    NoMatch,
    /// A merge conflicted (its resolution task was opened).
    Conflict,
}

/// What a command returns.
pub type Res = Result<Outcome, CliError>;

/// The context of one command.
pub struct Ctx {
    /// The command's name in envelopes and error messages (`run create`, ...).
    pub command: &'static str,
    /// Print one JSON envelope instead of text.
    pub json: bool,
    conn: Connection,
}

impl Ctx {
    pub fn new(cli: &Cli) -> Ctx {
        Ctx {
            command: cli.command.name(),
            json: cli.json,
            conn: Connection::new(cli.db.as_deref(), cli.no_autostart)
                .read_only(cli.command.is_read_only())
                .announce_start(!cli.json),
        }
    }

    /// The daemon client, connected (and the daemon started if allowed) on the first call.
    pub async fn client(&self) -> Result<&Client, CliError> {
        self.conn.client().await
    }

    /// How this command reaches the daemon (for a command that makes connections of its own).
    pub fn connect_options(&self) -> &coord_client::ConnectOptions {
        self.conn.options()
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
