//! The `orch` CLI: the leader's control plane. Every command is one JSON-RPC call (or one
//! subscription, for `wait`) to the project's coordd daemon, started on demand.

mod cli;
mod commands;
mod render;

use clap::Parser;
use coord_client::cli::{CliError, clap_exit, fail};

fn main() -> std::process::ExitCode {
    coord_client::cli::reset_sigpipe();
    let cli = match cli::Cli::try_parse() {
        Ok(c) => c,
        Err(e) => return clap_exit(e),
    };
    let (json, name) = (cli.json, cli.command.name());
    let rt = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => return fail(json, "orch", name, &CliError::Internal(e.to_string())),
    };
    match rt.block_on(commands::run(cli)) {
        Ok(code) => code,
        Err(e) => fail(json, "orch", name, &e),
    }
}
