//! The `inbox` command line: its global flags and its help; the commands are listed in
//! `commands`, each in a file of its own with its flags.

use std::path::PathBuf;

use clap::Parser;

use crate::commands::Cmd;

/// Durable coordination bus for agents: threads, messages, leases, artifacts and waits.
///
/// Workers fetch work, claim a thread (a lease), report progress, ask when blocked, wait
/// for the reply, and finish with done or fail. All state lives in the project's coordd
/// daemon (started on first use) and its SQLite database, `<project>/.agents/coord.db`.
///
/// Agents also register identities, exchange categorised mail with read/ack, and reserve
/// file scopes (see `inbox agent --help`, `inbox reserve --help`, docs/agents.md).
///
/// Exit codes: 0 ok, 10 nothing matched (fetch found no work, a wait timed out),
/// 20 conflict (lease or reservation held by another, duplicate agent, ack or release
/// forbidden, stale lease or reservation), 30 invalid input, arguments (a missing --task
/// for reserve included), category or state transition, 40 not found (thread, message,
/// agent, reservation, no project here, unknown sender or
/// recipient), 50 storage, I/O or internal error (or no daemon).
/// With --json every command prints one envelope: {"ok":true,"command":...} or
/// {"ok":false,"command":...,"error":{"code":...,"message":...}} (usage errors too).
/// Global flags go before or after the command.
#[derive(Parser)]
#[command(name = "inbox", version, about, long_about, after_help = WORKER_FLOW)]
pub struct Cli {
    /// Database file (default: <project>/.agents/coord.db); its daemon's socket sits beside it.
    #[arg(long, global = true, env = "COORD_DB", value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// Print one machine-readable JSON envelope instead of text (nothing on stderr while
    /// waiting).
    #[arg(long, global = true)]
    pub json: bool,
    /// Who you are: the default for --from, the agent for fetch/claim/update/done/..., and
    /// `show` marks the thread read for this agent.
    #[arg(long, global = true, env = "COORD_AGENT", value_name = "NAME")]
    pub agent: Option<String>,
    /// Do not start the daemon if it is not running (also COORD_NO_AUTOSTART=1).
    #[arg(long, global = true)]
    pub no_autostart: bool,
    #[command(subcommand)]
    pub command: Cmd,
}

const WORKER_FLOW: &str = "\
Worker flow:
  inbox fetch --agent W --status pending --json
  inbox claim --agent W --thread THR --lease-seconds 900 --json
  inbox update --agent W --thread THR --status in_progress --summary \"...\"
  inbox update --agent W --thread THR --status blocked --summary \"Need X\" --json   # note event_id
  inbox wait-reply --thread THR --after-event EVENT_ID --timeout-seconds 1800 --json
  inbox done --agent W --thread THR --summary \"...\" --body-file result.md

More: inbox <command> --help (each has an example); docs/ in the source tree.";

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn every_command_has_an_example_and_every_flag_a_description() {
        let missing = coord_cli::usage::missing_help(&super::Cli::command());
        assert!(missing.is_empty(), "{}", missing.join("\n"));
    }
}
