//! Command-line definitions of `orch`: the commands, their grouping in `--help`
//! ([`GROUPS`]) and the global flags; the flags of each command are in `args`.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

pub use crate::args::*;

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

/// The top-level help lists the commands by purpose. To put a command in a group, add its
/// name here; a command in no group is listed under "Other commands".
pub const GROUPS: &[(&str, &[&str])] = &[
    ("Runs", &["run", "status", "wait", "merge"]),
    ("Tasks", &["task", "dep", "ready", "dispatch", "blocked", "answer", "retry", "reassign", "cancel", "reconcile"]),
    ("Review and worktrees", &["council", "worktree"]),
    ("Watching", &["top", "dashboard"]),
    ("Getting started", &["demo", "completions", "man"]),
];

#[derive(Subcommand)]
pub enum Cmd {
    /// Create, list, show, finish or cancel runs.
    #[command(subcommand)]
    Run(RunCmd),
    /// Add, list, show, edit, assign or remove tasks.
    #[command(subcommand)]
    Task(TaskCmd),
    /// Add or remove a dependency between two tasks (cycles are refused).
    #[command(subcommand)]
    Dep(DepCmd),
    /// List ready tasks (dependencies done and merged), by priority then age.
    #[command(after_help = "Example:\n  orch ready --run R1")]
    Ready(ReadyArgs),
    /// Hand ready tasks to workers: an attempt, an inbox thread, and a git worktree for code tasks.
    #[command(
        after_help = "Example:\n  orch dispatch --run R1 --all-ready --json   # event_id: where `orch wait` starts"
    )]
    Dispatch(DispatchArgs),
    /// Re-derive task and run state from the inbox threads (idempotent repair).
    #[command(after_help = "Example:\n  orch reconcile --run R1")]
    Reconcile(RunArg),
    /// Block until the next actionable event of the run (server-side subscription).
    #[command(after_help = "Example:\n  orch wait --run R1 --after-event 42 --timeout-seconds 600 --json")]
    Wait(WaitArgs),
    /// List blocked tasks with their questions.
    #[command(after_help = "Example:\n  orch blocked --run R1")]
    Blocked(RunArg),
    /// Answer a blocked task in its current thread (wakes the worker's wait-reply).
    #[command(after_help = "Example:\n  orch answer --run R1 --task T2 --summary \"Use email/password\"")]
    Answer(AnswerArgs),
    /// Open a new attempt for a failed or cancelled task (new thread, fresh worktree).
    #[command(after_help = "Example:\n  orch retry --run R1 --task T2 --to backend-2")]
    Retry(RetryArgs),
    /// Move a live task to another worker (cancels the current thread, links its history).
    #[command(after_help = "Example:\n  orch reassign --run R1 --task T2 --to backend-2")]
    Reassign(ReassignArgs),
    /// Cancel one task, or the whole run.
    #[command(after_help = "Example:\n  orch cancel --run R1 --task T3 --reason \"out of scope\"")]
    Cancel(CancelArgs),
    /// Draw the run's task graph with the state of each task and the agent of each attempt
    /// (--watch: keep it live, as `orch top --run`).
    #[command(after_help = "Examples:\n  orch status --run R1\n  orch status --run R1 --watch")]
    Status(StatusArgs),
    /// Merge done code tasks into the run's integration branch (a conflict opens a
    /// resolution task, exit 20).
    #[command(
        after_help = "Examples:\n  orch merge --run R1              # every done task waiting to be merged\n  orch merge --run R1 --task T1"
    )]
    Merge(MergeArgs),
    /// List or prune attempt worktrees.
    #[command(subcommand)]
    Worktree(WorktreeCmd),
    /// Council review: reviewers (three by default) brainstorm, then vote.
    #[command(subcommand)]
    Council(CouncilCmd),
    /// Serve the live web dashboard from the daemon and print its URL.
    #[command(long_about = coord_cli::dashboard::ABOUT, after_help = "Examples:\n  orch dashboard\n  orch dashboard --port 8080 --open")]
    Dashboard(coord_cli::dashboard::DashboardArgs),
    /// Live terminal view across all runs: agents and their threads, blocked questions,
    /// recent events; redrawn as events arrive. q quits.
    #[command(after_help = "Examples:\n  orch top\n  orch top --run R1")]
    Top(TopArgs),
    /// Watch a leader and two workers take a run from plan to merged code, in a scratch
    /// git repository (the real `inbox` and `orch` commands, printed as they run).
    #[command(
        after_help = "Examples:\n  orch demo               # in a new temporary directory; says how to stop what it leaves running\n  orch demo --launch      # the same run, its workers started by coord-launch with a scripted worker"
    )]
    Demo(DemoArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    #[command(after_help = "Example:\n  orch completions zsh > ~/.zfunc/_orch")]
    Completions(CompletionsArgs),
    /// Print the manual page (roff).
    #[command(after_help = "Example:\n  orch man | man -l -")]
    Man,
}

impl Cmd {
    pub fn name(&self) -> &'static str {
        match self {
            Cmd::Run(RunCmd::Create(_)) => "run create",
            Cmd::Run(RunCmd::List) => "run list",
            Cmd::Run(RunCmd::Show(_)) => "run show",
            Cmd::Run(RunCmd::Finish(_)) => "run finish",
            Cmd::Run(RunCmd::Cancel(_)) => "run cancel",
            Cmd::Task(TaskCmd::Add(_)) => "task add",
            Cmd::Task(TaskCmd::List(_)) => "task list",
            Cmd::Task(TaskCmd::Show(_)) => "task show",
            Cmd::Task(TaskCmd::Edit(_)) => "task edit",
            Cmd::Task(TaskCmd::Assign(_)) => "task assign",
            Cmd::Task(TaskCmd::Remove(_)) => "task remove",
            Cmd::Dep(DepCmd::Add(_)) => "dep add",
            Cmd::Dep(DepCmd::Remove(_)) => "dep remove",
            Cmd::Ready(_) => "ready",
            Cmd::Dispatch(_) => "dispatch",
            Cmd::Reconcile(_) => "reconcile",
            Cmd::Wait(_) => "wait",
            Cmd::Blocked(_) => "blocked",
            Cmd::Answer(_) => "answer",
            Cmd::Retry(_) => "retry",
            Cmd::Reassign(_) => "reassign",
            Cmd::Cancel(_) => "cancel",
            Cmd::Status(_) => "status",
            Cmd::Merge(_) => "merge",
            Cmd::Worktree(WorktreeCmd::List(_)) => "worktree list",
            Cmd::Worktree(WorktreeCmd::Prune(_)) => "worktree prune",
            Cmd::Council(CouncilCmd::Start(_)) => "council start",
            Cmd::Council(CouncilCmd::List(_)) => "council list",
            Cmd::Council(CouncilCmd::Status(_)) => "council status",
            Cmd::Council(CouncilCmd::Report(_)) => "council report",
            Cmd::Dashboard(_) => "dashboard",
            Cmd::Top(_) => "top",
            Cmd::Demo(_) => "demo",
            Cmd::Completions(_) => "completions",
            Cmd::Man => "man",
        }
    }

    /// Commands that only read: outside a project they say so (exit 40) instead of
    /// creating one.
    pub fn is_read_only(&self) -> bool {
        matches!(
            self,
            Cmd::Run(RunCmd::List | RunCmd::Show(_))
                | Cmd::Task(TaskCmd::List(_) | TaskCmd::Show(_))
                | Cmd::Ready(_)
                | Cmd::Wait(_)
                | Cmd::Blocked(_)
                | Cmd::Status(_)
                | Cmd::Top(_)
                | Cmd::Worktree(WorktreeCmd::List(_))
                | Cmd::Council(CouncilCmd::List(_) | CouncilCmd::Status(_) | CouncilCmd::Report(_))
        )
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn every_command_has_an_example_and_every_flag_a_description() {
        let missing = coord_cli::usage::missing_help(&super::Cli::command());
        assert!(missing.is_empty(), "{}", missing.join("\n"));
    }
}
