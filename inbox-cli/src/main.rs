//! The `inbox` CLI: the worker-facing side of coordd. Every command is one JSON-RPC call
//! (or one subscription for the waits) to the project's daemon, started on demand.

mod agents;
mod cli;
mod commands;
mod githook;
mod mcp;
mod output;
mod session;

use clap::{CommandFactory, FromArgMatches};

fn main() -> std::process::ExitCode {
    coord_client::cli::reset_sigpipe();
    let matches = match cli::Cli::command().try_get_matches() {
        Ok(m) => m,
        Err(e) => return output::clap_exit(e),
    };
    let cli = match cli::Cli::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => return output::clap_exit(e),
    };
    let agent_explicit = agent_on_command_line(&matches);
    let rt = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => return output::fail(cli.json, "inbox", &output::CliError::Internal(e.to_string())),
    };
    // `inbox mcp` owns stdout (the protocol channel): its failures go to stderr as text.
    let json = cli.json && !matches!(cli.command, cli::Cmd::Mcp(_));
    let name = cli.command.name();
    match rt.block_on(commands::run(cli, agent_explicit)) {
        Ok(code) => code,
        Err(e) => output::fail(json, name, &e),
    }
}

/// Was --agent given on the command line (at any level), rather than through COORD_AGENT?
fn agent_on_command_line(m: &clap::ArgMatches) -> bool {
    m.value_source("agent") == Some(clap::parser::ValueSource::CommandLine)
        || m.subcommand().is_some_and(|(_, sub)| agent_on_command_line(sub))
}
