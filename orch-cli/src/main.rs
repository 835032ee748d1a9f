//! The `orch` CLI: the leader's control plane. Every command is one JSON-RPC call (or one
//! subscription, for `wait`) to the project's coordd daemon, started on demand.
//!
//! `main` parses the command line, builds the command's [`Ctx`], runs it (each command is
//! a file of `commands`) and turns how it ended into the exit status.

mod attention;
mod cli;
mod commands;
mod mcp;
mod render;
mod render_queue;
mod sessions;
mod tree;
mod usage;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};
use coord_cli::usage::clap_exit;
use coord_cli::{CliError, Command, Connection, Ctx};

fn main() -> ExitCode {
    coord_cli::reset_sigpipe();
    let command = coord_cli::usage::group_commands(cli::Cli::command(), &commands::Cmd::groups());
    let matches = match command.clone().try_get_matches() {
        Ok(m) => m,
        Err(e) => return clap_exit(e, &command),
    };
    let cli = match cli::Cli::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => return clap_exit(e, &command),
    };
    let conn = Connection::new(cli.db.as_deref(), cli.no_autostart)
        .read_only(cli.command.read_only())
        .announce_start(!cli.json);
    let ctx = Ctx::new(&matches, cli.json, conn).with_definition(cli::Cli::command());
    let res = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt.block_on(cli.command.run(&ctx)),
        Err(e) => Err(CliError::Internal(e.to_string())),
    };
    // The one place where a command's outcome becomes the exit status (errors get theirs
    // from `CliError::exit`).
    match res {
        Ok(outcome) => outcome.exit().into(),
        Err(e) => coord_cli::fail(ctx.json, "orch", &ctx.command, &e),
    }
}
