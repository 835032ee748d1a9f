//! The `inbox` CLI: the worker-facing side of coordd. Every command is one JSON-RPC call
//! (or one subscription for the waits) to the project's daemon, started on demand.

mod cli;
mod commands;
mod output;

use clap::Parser;

fn main() -> std::process::ExitCode {
    coord_client::cli::reset_sigpipe();
    let cli = match cli::Cli::try_parse() {
        Ok(c) => c,
        Err(e) => return output::clap_exit(e),
    };
    let rt = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => return output::fail(cli.json, "inbox", &output::CliError::Internal(e.to_string())),
    };
    let json = cli.json;
    let name = cli.command.name();
    match rt.block_on(commands::run(cli)) {
        Ok(code) => code,
        Err(e) => output::fail(json, name, &e),
    }
}
