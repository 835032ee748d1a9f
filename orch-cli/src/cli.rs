//! The `orch` command line: its global flags and its help; the commands are listed in
//! `commands`, each in a file of its own with its flags.

use std::path::PathBuf;

use clap::Parser;

use crate::commands::Cmd;

/// The leader's control plane: runs, the task graph, dispatch into inbox threads, a git
/// worktree per attempt, reconcile, wait, retry, reassign and council review.
///
/// orch decides what work exists, what is ready, who gets it, and what happens after a
/// block, a failure or a retry. Workers never use orch: they see only inbox threads.
/// State lives in the project's coordd daemon (started on first use).
///
/// Code tasks work in git worktrees branched from the run's integration branch
/// (orch/<run>/integration); done tasks are merged there (`orch merge`, or --auto-merge),
/// their dependents start from it, and `orch run finish` merges the run into its base
/// branch.
///
/// Exit codes: 0 ok, 10 nothing matched (no ready task, nothing blocked, a wait timed out),
/// 20 conflict (a merge conflict included), 30 invalid input, arguments or transition, 40
/// not found (no project here included), 50 storage or internal (or no daemon).
/// With --json every command prints one envelope: {"ok":true,"command":...} or
/// {"ok":false,"command":...,"error":{"code":...,"message":...}} (usage errors too).
/// Global flags go before or after the command.
#[derive(Parser)]
#[command(name = "orch", version, about, long_about, after_help = LEADER_FLOW)]
pub struct Cli {
    /// Database file (default: <project>/.agents/coord.db); its daemon's socket sits beside it.
    #[arg(long, global = true, env = "COORD_DB", value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// Print one machine-readable JSON envelope instead of text (nothing on stderr while
    /// waiting).
    #[arg(long, global = true)]
    pub json: bool,
    /// Do not start the daemon if it is not running (also COORD_NO_AUTOSTART=1).
    #[arg(long, global = true)]
    pub no_autostart: bool,
    #[command(subcommand)]
    pub command: Cmd,
}

const LEADER_FLOW: &str = "\
Leader flow:
  orch run create --goal \"Blog MVP\" --id R1 --auto-retry 1 --auto-merge
  orch task add --run R1 --id T1 --title \"Schema\" --assign-to backend
  orch task add --run R1 --id T2 --title \"Post CRUD\" --depends-on T1 --assign-to backend
  orch dispatch --run R1 --all-ready --json      # one worktree and inbox thread per task; note event_id
  orch wait --run R1 --after-event EVENT_ID      # blocks until something needs you
  orch answer --run R1 --task T2 --summary \"Use email/password\"
  orch status --run R1
  orch run finish --run R1                       # merge the run into its base branch

See it work: orch demo. More: orch <command> --help (each has an example).";

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn every_command_has_an_example_and_every_flag_a_description() {
        let missing = coord_cli::usage::missing_help(&super::Cli::command());
        assert!(missing.is_empty(), "{}", missing.join("\n"));
    }
}
