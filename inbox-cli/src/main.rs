//! The `inbox` CLI: the worker-facing side of coordd. Every command is one JSON-RPC call
//! (or one subscription for the waits) to the project's daemon, started on demand.
//!
//! `main` parses the command line, builds the command's [`Ctx`], runs it (each command is
//! a file of `commands`, `hooks` or `mcp`) and turns how it ended into the exit status.

mod artifacts;
mod cli;
mod commands;
mod hooks;
mod mcp;
mod output;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};
use coord_cli::usage::clap_exit;
use coord_cli::{CliError, Command, Connection, Ctx};

use crate::commands::Cmd;

fn main() -> ExitCode {
    coord_cli::reset_sigpipe();
    let command = coord_cli::usage::group_commands(cli::Cli::command(), &Cmd::groups());
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
    // `inbox mcp` owns stdout (the protocol channel): its failures go to stderr as text.
    let json = cli.json && !matches!(cli.command, Cmd::Mcp(_));
    let ctx = Ctx::new(&matches, json, conn)
        .with_definition(cli::Cli::command())
        .with_agent(cli.agent.clone(), agent_on_command_line(&matches));
    let res = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt.block_on(cli.command.run(&ctx)),
        Err(e) => Err(CliError::Internal(e.to_string())),
    };
    // The one place where a command's outcome becomes the exit status (errors get theirs
    // from `CliError::exit`).
    match res {
        Ok(outcome) => outcome.exit().into(),
        Err(e) => coord_cli::fail(ctx.json, "inbox", &ctx.command, &e),
    }
}

/// Was --agent given on the command line (at any level), rather than through COORD_AGENT?
fn agent_on_command_line(m: &clap::ArgMatches) -> bool {
    m.value_source("agent") == Some(clap::parser::ValueSource::CommandLine)
        || m.subcommand().is_some_and(|(_, sub)| agent_on_command_line(sub))
}
