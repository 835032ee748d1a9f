//! The flags of `orch`'s commands (the commands themselves are in `cli`).

use std::path::PathBuf;

use clap::{Args, Subcommand};
use coord_cli::usage::one_of;
use coord_proto::types::{Priority, TaskKind, TaskStatus};

/// Flags of `orch top`.
#[derive(Args)]
pub struct TopArgs {
    /// Only this run (as `orch status --run R --watch`).
    #[arg(long, value_name = "RUN_ID")]
    pub run: Option<String>,
}

/// Flags of `orch status`.
#[derive(Args)]
pub struct StatusArgs {
    /// The run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    /// Stay open and redraw as events arrive (the terminal view of `orch top`).
    #[arg(long)]
    pub watch: bool,
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
    /// List attempt worktrees made on this host.
    #[command(after_help = "Example:\n  orch worktree list --run R1")]
    List(WorktreeArgs),
    /// Remove worktrees of finished attempts (made on this host) whose work is merged or
    /// empty; says what it kept and why.
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
    /// Let the launch bridge `coord-launch` start the workers' sessions, each running a small
    /// built-in script (the `command` client): no API key needed.
    #[arg(long)]
    pub launch: bool,
}

#[derive(Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}
