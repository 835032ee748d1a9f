//! Command-line definitions of `orch`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use coord_cli::usage::one_of;
use coord_proto::types::{Priority, TaskKind, TaskStatus};

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
    /// Draw the run's task graph with the state of each task.
    #[command(after_help = "Example:\n  orch status --run R1")]
    Status(RunArg),
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
    /// Watch a leader and two workers take a run from plan to merged code, in a scratch
    /// git repository (the real `inbox` and `orch` commands, printed as they run).
    #[command(
        after_help = "Example:\n  orch demo               # in a new temporary directory; says how to stop what it leaves running"
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
                | Cmd::Worktree(WorktreeCmd::List(_))
                | Cmd::Council(CouncilCmd::List(_) | CouncilCmd::Status(_) | CouncilCmd::Report(_))
        )
    }
}

#[derive(Args)]
pub struct RunArg {
    /// The run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
}

#[derive(Subcommand)]
pub enum RunCmd {
    /// Create a run.
    #[command(after_help = "Example:\n  orch run create --goal \"Blog MVP\" --id R1 --auto-merge --auto-retry 1")]
    Create(RunCreateArgs),
    /// List runs.
    #[command(after_help = "Example:\n  orch run list --json")]
    List,
    /// Show a run and its tasks.
    #[command(after_help = "Example:\n  orch run show --run R1")]
    Show(RunArg),
    /// Merge the run into its base branch: first every done task still waiting to be
    /// merged into the integration branch, then the integration branch (refused while a
    /// task runs or a merge is in conflict; nothing moves on a conflict).
    #[command(after_help = "Examples:\n  orch run finish --run R1\n  orch run finish --run R1 --into release")]
    Finish(RunFinishArgs),
    /// Cancel a run: its unfinished tasks and their threads.
    #[command(after_help = "Example:\n  orch run cancel --run R1 --reason \"goal changed\"")]
    Cancel(RunCancelArgs),
}

#[derive(Args)]
pub struct RunCreateArgs {
    /// What the run is for.
    #[arg(long)]
    pub goal: String,
    /// Run id (default: R<n>).
    #[arg(long)]
    pub id: Option<String>,
    /// The leader creating it (default: leader).
    #[arg(long, value_name = "AGENT")]
    pub created_by: Option<String>,
    /// Retry each failed task automatically up to N times.
    #[arg(long, value_name = "N")]
    pub auto_retry: Option<u32>,
    /// Merge each code task into the integration branch as soon as it is done (default:
    /// `orch merge`).
    #[arg(long)]
    pub auto_merge: bool,
}

#[derive(Args)]
pub struct RunFinishArgs {
    /// The run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    /// The branch to merge into (default: the branch the run started from).
    #[arg(long, value_name = "BRANCH")]
    pub into: Option<String>,
}

#[derive(Args)]
pub struct RunCancelArgs {
    /// The run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    /// Why (given to the workers whose threads are cancelled).
    #[arg(long)]
    pub reason: String,
}

#[derive(Subcommand)]
pub enum TaskCmd {
    /// Add a task to a run.
    #[command(
        after_help = "Example:\n  orch task add --run R1 --id T2 --title \"Post CRUD\" --depends-on T1 --assign-to backend --priority high"
    )]
    Add(TaskAddArgs),
    /// List a run's tasks.
    #[command(after_help = "Example:\n  orch task list --run R1 --status ready,blocked")]
    List(TaskListArgs),
    /// Show a task with its attempts.
    #[command(after_help = "Example:\n  orch task show --run R1 --task T2")]
    Show(TaskArg),
    /// Change a task: its text and kind before it is dispatched; its worker, priority,
    /// role and attempt limit until it is done.
    #[command(
        after_help = "Example:\n  orch task edit --run R1 --task T2 --title \"Post CRUD + tests\" --priority urgent"
    )]
    Edit(TaskEditArgs),
    /// Give a task to another worker for its next dispatch (a live attempt moves with
    /// `orch reassign`).
    #[command(after_help = "Example:\n  orch task assign --run R1 --task T2 --to backend-2")]
    Assign(TaskAssignArgs),
    /// Remove a task that was never dispatched (its dependents lose the dependency).
    #[command(after_help = "Example:\n  orch task remove --run R1 --task T9")]
    Remove(TaskArg),
}

#[derive(Args)]
pub struct TaskArg {
    /// The run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    /// The task.
    #[arg(long, value_name = "TASK_ID")]
    pub task: String,
}

#[derive(Args)]
pub struct TaskAddArgs {
    /// The run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    /// Task id, unique within the run (letters, digits, '.', '_', '-').
    #[arg(long)]
    pub id: String,
    /// What to do, in a line.
    #[arg(long)]
    pub title: String,
    /// The details (text; see --body-file for a file).
    #[arg(long, conflicts_with = "body_file")]
    pub body: Option<String>,
    /// Read the body from a file (`-` for stdin).
    #[arg(long, value_name = "PATH")]
    pub body_file: Option<PathBuf>,
    /// Acceptance criteria, passed to the worker.
    #[arg(long)]
    pub acceptance: Option<String>,
    /// Tasks this one depends on, comma-separated.
    #[arg(long, value_delimiter = ',', value_name = "T0,T2")]
    pub depends_on: Vec<String>,
    /// The worker to dispatch to by default.
    #[arg(long, value_name = "AGENT")]
    pub assign_to: Option<String>,
    /// Role hint for launchers.
    #[arg(long)]
    pub role: Option<String>,
    /// Priority in the ready queue (default normal).
    #[arg(long, value_parser = one_of(Priority::ALL))]
    pub priority: Option<Priority>,
    /// code (default: gets a git worktree) or thread (an inbox thread only).
    #[arg(long, value_parser = one_of(TaskKind::ALL))]
    pub kind: Option<TaskKind>,
    /// Attempts allowed, retries included (default 3).
    #[arg(long, value_name = "N")]
    pub max_attempts: Option<u32>,
}

#[derive(Args)]
pub struct TaskEditArgs {
    /// The run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    /// The task.
    #[arg(long, value_name = "TASK_ID")]
    pub task: String,
    /// A new title (before dispatch).
    #[arg(long)]
    pub title: Option<String>,
    /// A new body (before dispatch).
    #[arg(long, conflicts_with = "body_file")]
    pub body: Option<String>,
    /// Read the new body from a file (`-` for stdin).
    #[arg(long, value_name = "PATH")]
    pub body_file: Option<PathBuf>,
    /// New acceptance criteria (before dispatch).
    #[arg(long)]
    pub acceptance: Option<String>,
    /// A new priority.
    #[arg(long, value_parser = one_of(Priority::ALL))]
    pub priority: Option<Priority>,
    /// The worker for its next dispatch.
    #[arg(long, value_name = "AGENT")]
    pub assign_to: Option<String>,
    /// A new role hint.
    #[arg(long)]
    pub role: Option<String>,
    /// A new kind (before dispatch).
    #[arg(long, value_parser = one_of(TaskKind::ALL))]
    pub kind: Option<TaskKind>,
    /// A new attempt limit (at least the attempts used).
    #[arg(long, value_name = "N")]
    pub max_attempts: Option<u32>,
}

#[derive(Args)]
pub struct TaskAssignArgs {
    /// The run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    /// The task.
    #[arg(long, value_name = "TASK_ID")]
    pub task: String,
    /// The worker.
    #[arg(long, value_name = "AGENT")]
    pub to: String,
}

#[derive(Args)]
pub struct TaskListArgs {
    /// The run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    /// Only these statuses, comma-separated.
    #[arg(long, value_delimiter = ',', value_parser = one_of(TaskStatus::ALL))]
    pub status: Vec<TaskStatus>,
}

#[derive(Subcommand)]
pub enum DepCmd {
    /// TASK now depends on ON.
    #[command(after_help = "Example:\n  orch dep add --run R1 --task T3 --on T2")]
    Add(DepArgs),
    /// TASK no longer depends on ON.
    #[command(after_help = "Example:\n  orch dep remove --run R1 --task T3 --on T2")]
    Remove(DepArgs),
}

#[derive(Args)]
pub struct DepArgs {
    /// The run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    /// The dependent task.
    #[arg(long, value_name = "TASK_ID")]
    pub task: String,
    /// The task it depends on.
    #[arg(long, value_name = "TASK_ID")]
    pub on: String,
}

#[derive(Args)]
pub struct ReadyArgs {
    /// The run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    /// At most this many (default 50).
    #[arg(long)]
    pub limit: Option<u32>,
}

#[derive(Args)]
pub struct DispatchArgs {
    /// The run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    /// Dispatch this ready task.
    #[arg(long, value_name = "TASK_ID", conflicts_with = "all_ready", required_unless_present = "all_ready")]
    pub task: Option<String>,
    /// Dispatch every ready task.
    #[arg(long)]
    pub all_ready: bool,
    /// Worker for the dispatched tasks (default: each task's --assign-to).
    #[arg(long, value_name = "AGENT")]
    pub to: Option<String>,
    /// The git repository for code tasks (default: the git root around the current directory).
    #[arg(long, value_name = "PATH")]
    pub repo: Option<PathBuf>,
    /// Where the run's integration branch starts, on its first code dispatch (default
    /// HEAD); later tasks branch from the integration branch.
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,
    /// Also refuse when the repository has uncommitted changes to tracked files (a base
    /// that is not a commit is always refused).
    #[arg(long)]
    pub strict: bool,
    /// Give code tasks no worktree.
    #[arg(long)]
    pub no_worktree: bool,
}

#[derive(Args)]
pub struct WaitArgs {
    /// The run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    /// Return the first actionable event after this event id (default: now). Use the
    /// event_id `dispatch --json` returned.
    #[arg(long)]
    pub after_event: Option<i64>,
    /// Give up after this many seconds (exit 10; at most ten years).
    #[arg(long, value_parser = clap::value_parser!(u64).range(0..=315_360_000))]
    pub timeout_seconds: Option<u64>,
}

#[derive(Args)]
pub struct AnswerArgs {
    /// The run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    /// The blocked task.
    #[arg(long, value_name = "TASK_ID")]
    pub task: String,
    /// The answer, in a line.
    #[arg(long)]
    pub summary: String,
    /// The answer's details (text; see --body-file for a file).
    #[arg(long, conflicts_with = "body_file")]
    pub body: Option<String>,
    /// Read the details from a file (`-` for stdin).
    #[arg(long, value_name = "PATH")]
    pub body_file: Option<PathBuf>,
    /// Who answers (default: the run's creator).
    #[arg(long, value_name = "AGENT")]
    pub from: Option<String>,
}

#[derive(Args)]
pub struct RetryArgs {
    /// The run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    /// The failed or cancelled task.
    #[arg(long, value_name = "TASK_ID")]
    pub task: String,
    /// Another worker (default: the previous attempt's).
    #[arg(long, value_name = "AGENT")]
    pub to: Option<String>,
}

#[derive(Args)]
pub struct ReassignArgs {
    /// The run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    /// The live task.
    #[arg(long, value_name = "TASK_ID")]
    pub task: String,
    /// The new worker.
    #[arg(long, value_name = "AGENT")]
    pub to: String,
}

#[derive(Args)]
pub struct CancelArgs {
    /// The run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    /// Only this task (default: the whole run).
    #[arg(long, value_name = "TASK_ID")]
    pub task: Option<String>,
    /// Why (given to the workers whose threads are cancelled).
    #[arg(long)]
    pub reason: String,
}

#[derive(Args)]
pub struct MergeArgs {
    /// The run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    /// Only this task (default: every done task waiting to be merged).
    #[arg(long, value_name = "TASK_ID")]
    pub task: Option<String>,
}

#[derive(Subcommand)]
pub enum WorktreeCmd {
    /// List attempt worktrees.
    #[command(after_help = "Example:\n  orch worktree list --run R1")]
    List(WorktreeArgs),
    /// Remove worktrees of finished attempts whose work is merged or empty; says what it kept and why.
    #[command(after_help = "Example:\n  orch worktree prune --run R1")]
    Prune(WorktreePruneArgs),
}

#[derive(Args)]
pub struct WorktreeArgs {
    /// Only this run's (default: every run's).
    #[arg(long, value_name = "RUN_ID")]
    pub run: Option<String>,
}

#[derive(Args)]
pub struct WorktreePruneArgs {
    /// Only this run's (default: every run's).
    #[arg(long, value_name = "RUN_ID")]
    pub run: Option<String>,
    /// Also remove worktrees with unmerged commits or uncommitted changes (never live ones).
    #[arg(long)]
    pub force: bool,
}

#[derive(Subcommand)]
pub enum CouncilCmd {
    /// Start a council: brainstorm threads for each reviewer.
    #[command(
        after_help = "Example:\n  orch council start --run R1 --topic \"Review the auth design\" --body-file design.md"
    )]
    Start(CouncilStartArgs),
    /// A run's councils, with their phase.
    #[command(after_help = "Example:\n  orch council list --run R1")]
    List(RunArg),
    /// The council's phase and who has answered.
    #[command(after_help = "Example:\n  orch council status --run R1 --council C1")]
    Status(CouncilArgs),
    /// Groups, tallies, verdicts and who proposed what.
    #[command(after_help = "Example:\n  orch council report --run R1 --council C1")]
    Report(CouncilArgs),
}

#[derive(Args)]
pub struct CouncilStartArgs {
    /// The run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    /// What to review, in a line.
    #[arg(long)]
    pub topic: String,
    /// The material to review, from a file (`-` for stdin).
    #[arg(long, value_name = "PATH")]
    pub body_file: Option<PathBuf>,
    /// Reviewers, comma-separated (default: reviewer-1,reviewer-2,reviewer-3).
    #[arg(long, value_delimiter = ',')]
    pub reviewers: Vec<String>,
}

#[derive(Args)]
pub struct CouncilArgs {
    /// The run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    /// The council.
    #[arg(long, value_name = "COUNCIL_ID")]
    pub council: String,
}

#[derive(Args)]
pub struct DemoArgs {
    /// Where to make the demo's git repository (default: a new temporary directory).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Stop the demo's daemon at the end (default: leave it running, to look around).
    #[arg(long)]
    pub stop: bool,
}

#[derive(Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
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
