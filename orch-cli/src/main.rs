//! The `orch` CLI: the leader's control plane. Every command is one JSON-RPC call (or one
//! subscription, for `wait`) to the project's coordd daemon, started on demand.

mod args;
mod cli;
mod commands;
mod ctx;
mod demo;
mod demo_kit;
mod demo_launch;
mod render;
mod sessions;
mod top;
mod tree;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};
use coord_cli::CliError;
use coord_cli::usage::clap_exit;
use coord_proto::Exit;

use crate::ctx::{Ctx, Outcome};

fn main() -> ExitCode {
    coord_cli::reset_sigpipe();
    let command = coord_cli::usage::group_commands(cli::Cli::command(), cli::GROUPS);
    let cli = match command.clone().try_get_matches().and_then(|m| cli::Cli::from_arg_matches(&m)) {
        Ok(c) => c,
        Err(e) => return clap_exit(e, &command),
    };
    let ctx = Ctx::new(&cli);
    let res = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt.block_on(commands::run(&ctx, cli.command)),
        Err(e) => Err(CliError::Internal(e.to_string())),
    };
    // The one place where a command's outcome becomes the exit status (errors get theirs
    // from `CliError::exit`).
    match res {
        Ok(Outcome::Done) => Exit::Ok.into(),
        Ok(Outcome::NoMatch) => Exit::NoMatch.into(),
        Ok(Outcome::Conflict) => Exit::Conflict.into(),
        Err(e) => coord_cli::fail(ctx.json, "orch", ctx.command, &e),
    }
}
