//! Command-line definitions of `orch`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use coord_proto::types::{Priority, TaskKind, TaskStatus};

/// The leader's control plane: runs, the task graph, dispatch into inbox threads, a git
/// worktree per attempt, reconcile, wait, retry, reassign and council review.
///
/// orch decides what work exists, what is ready, who gets it, and what happens after a
/// block, a failure or a retry. Workers never use orch: they see only inbox threads.
/// State lives in the project's coordd daemon (started on first use).
///
/// Exit codes: 0 ok, 10 nothing matched (no ready task, nothing blocked, a wait timed out),
/// 20 conflict, 30 invalid input or transition, 40 not found, 50 storage or internal.
/// With --json every command prints one envelope: {"ok":true,"command":...} or
/// {"ok":false,"command":...,"error":{"code":...,"message":...}}.
#[derive(Parser)]
#[command(name = "orch", version, about, long_about, after_help = LEADER_FLOW)]
pub struct Cli {
    /// Database file (default: <project>/.agents/coord.db); its daemon's socket sits beside it.
    #[arg(long, global = true, env = "COORD_DB", value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// Print one machine-readable JSON envelope instead of text.
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
  orch run create --goal \"Blog MVP\" --id R1 --auto-retry 1
  orch task add --run R1 --id T1 --title \"Schema\" --assign-to backend
  orch task add --run R1 --id T2 --title \"Post CRUD\" --depends-on T1 --assign-to backend
  orch dispatch --run R1 --all-ready --json      # one worktree and inbox thread per task
  orch wait --run R1 --json                      # blocks until something needs you
  orch answer --run R1 --task T2 --summary \"Use email/password\"
  orch status --run R1";

#[derive(Subcommand)]
pub enum Cmd {
    /// Create, list, show or cancel runs.
    #[command(subcommand)]
    Run(RunCmd),
    /// Add, list or show tasks.
    #[command(subcommand)]
    Task(TaskCmd),
    /// Add or remove a dependency between two tasks (cycles are refused).
    #[command(subcommand)]
    Dep(DepCmd),
    /// List ready tasks (all dependencies done), by priority then age.
    Ready(ReadyArgs),
    /// Hand ready tasks to workers: an attempt, an inbox thread, and a git worktree for code tasks.
    Dispatch(DispatchArgs),
    /// Re-derive task and run state from the inbox threads (idempotent repair).
    Reconcile(RunArg),
    /// Block until the next actionable event of the run (server-side subscription).
    Wait(WaitArgs),
    /// List blocked tasks with their questions.
    Blocked(RunArg),
    /// Answer a blocked task in its current thread (wakes the worker's wait-reply).
    Answer(AnswerArgs),
    /// Open a new attempt for a failed or cancelled task (new thread, fresh worktree).
    Retry(RetryArgs),
    /// Move a live task to another worker (cancels the current thread, links its history).
    Reassign(ReassignArgs),
    /// Cancel one task, or the whole run.
    Cancel(CancelArgs),
    /// Draw the run's task graph with the state of each task and the agent of each attempt
    /// (--watch: keep it live, as `orch top --run`).
    Status(StatusArgs),
    /// List or prune attempt worktrees.
    #[command(subcommand)]
    Worktree(WorktreeCmd),
    /// Council review: reviewers (three by default) brainstorm, then vote.
    #[command(subcommand)]
    Council(CouncilCmd),
    /// Serve the live web dashboard from the daemon and print its URL.
    #[command(long_about = coord_cli::dashboard::ABOUT)]
    Dashboard(coord_cli::dashboard::DashboardArgs),
    /// Live terminal view across all runs: agents and their threads, blocked questions,
    /// recent events; redrawn as events arrive. q quits.
    Top(TopArgs),
}

impl Cmd {
    pub fn name(&self) -> &'static str {
        match self {
            Cmd::Run(RunCmd::Create(_)) => "run create",
            Cmd::Run(RunCmd::List) => "run list",
            Cmd::Run(RunCmd::Show(_)) => "run show",
            Cmd::Run(RunCmd::Cancel(_)) => "run cancel",
            Cmd::Task(TaskCmd::Add(_)) => "task add",
            Cmd::Task(TaskCmd::List(_)) => "task list",
            Cmd::Task(TaskCmd::Show(_)) => "task show",
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
            Cmd::Worktree(WorktreeCmd::List(_)) => "worktree list",
            Cmd::Worktree(WorktreeCmd::Prune(_)) => "worktree prune",
            Cmd::Council(CouncilCmd::Start(_)) => "council start",
            Cmd::Council(CouncilCmd::Status(_)) => "council status",
            Cmd::Council(CouncilCmd::Report(_)) => "council report",
            Cmd::Dashboard(_) => "dashboard",
            Cmd::Top(_) => "top",
        }
    }
}

/// Flags of `orch top`.
#[derive(Args)]
pub struct TopArgs {
    /// Only this run (as `orch status --run R --watch`).
    #[arg(long, value_name = "RUN_ID")]
    pub run: Option<String>,
}

#[derive(Args)]
pub struct StatusArgs {
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    /// Stay open and redraw as events arrive (the terminal view of `orch top`).
    #[arg(long)]
    pub watch: bool,
}

#[derive(Args)]
pub struct RunArg {
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
}

#[derive(Subcommand)]
pub enum RunCmd {
    /// Create a run.
    Create(RunCreateArgs),
    /// List runs.
    List,
    /// Show a run and its tasks.
    Show(RunArg),
    /// Cancel a run: its unfinished tasks and their threads.
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
    #[arg(long)]
    pub created_by: Option<String>,
    /// Retry each failed task automatically up to N times.
    #[arg(long, value_name = "N")]
    pub auto_retry: Option<u32>,
}

#[derive(Args)]
pub struct RunCancelArgs {
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    #[arg(long)]
    pub reason: String,
}

#[derive(Subcommand)]
pub enum TaskCmd {
    /// Add a task to a run.
    Add(TaskAddArgs),
    /// List a run's tasks.
    List(TaskListArgs),
    /// Show a task with its attempts.
    Show(TaskArg),
}

#[derive(Args)]
pub struct TaskArg {
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    #[arg(long, value_name = "TASK_ID")]
    pub task: String,
}

#[derive(Args)]
pub struct TaskAddArgs {
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    /// Task id, unique within the run (letters, digits, '.', '_', '-').
    #[arg(long)]
    pub id: String,
    #[arg(long)]
    pub title: String,
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
    #[arg(long)]
    pub priority: Option<Priority>,
    /// code (default: gets a git worktree) or thread (an inbox thread only).
    #[arg(long)]
    pub kind: Option<TaskKind>,
    /// Attempts allowed, retries included (default 3).
    #[arg(long, value_name = "N")]
    pub max_attempts: Option<u32>,
}

#[derive(Args)]
pub struct TaskListArgs {
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    /// Only these statuses, comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub status: Vec<TaskStatus>,
}

#[derive(Subcommand)]
pub enum DepCmd {
    /// TASK now depends on ON.
    Add(DepArgs),
    /// TASK no longer depends on ON.
    Remove(DepArgs),
}

#[derive(Args)]
pub struct DepArgs {
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    #[arg(long, value_name = "TASK_ID")]
    pub task: String,
    #[arg(long, value_name = "TASK_ID")]
    pub on: String,
}

#[derive(Args)]
pub struct ReadyArgs {
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    /// At most this many (default 50).
    #[arg(long)]
    pub limit: Option<u32>,
}

#[derive(Args)]
pub struct DispatchArgs {
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
    /// Base revision for worktrees (default HEAD).
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
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    /// Return the first actionable event after this event id (default: now).
    #[arg(long)]
    pub after_event: Option<i64>,
    /// Give up after this many seconds (exit 10; at most ten years).
    #[arg(long, value_parser = clap::value_parser!(u64).range(0..=315_360_000))]
    pub timeout_seconds: Option<u64>,
}

#[derive(Args)]
pub struct AnswerArgs {
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    #[arg(long, value_name = "TASK_ID")]
    pub task: String,
    #[arg(long)]
    pub summary: String,
    #[arg(long, conflicts_with = "body_file")]
    pub body: Option<String>,
    #[arg(long, value_name = "PATH")]
    pub body_file: Option<PathBuf>,
    /// Who answers (default: the run's creator).
    #[arg(long)]
    pub from: Option<String>,
}

#[derive(Args)]
pub struct RetryArgs {
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    #[arg(long, value_name = "TASK_ID")]
    pub task: String,
    /// Another worker (default: the previous attempt's).
    #[arg(long, value_name = "AGENT")]
    pub to: Option<String>,
}

#[derive(Args)]
pub struct ReassignArgs {
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    #[arg(long, value_name = "TASK_ID")]
    pub task: String,
    #[arg(long, value_name = "AGENT")]
    pub to: String,
}

#[derive(Args)]
pub struct CancelArgs {
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    /// Only this task (default: the whole run).
    #[arg(long, value_name = "TASK_ID")]
    pub task: Option<String>,
    #[arg(long)]
    pub reason: String,
}

#[derive(Subcommand)]
pub enum WorktreeCmd {
    /// List attempt worktrees made on this host.
    List(WorktreeArgs),
    /// Remove worktrees of finished attempts (made on this host) whose work is merged or empty; says what it kept and why.
    Prune(WorktreePruneArgs),
}

#[derive(Args)]
pub struct WorktreeArgs {
    #[arg(long, value_name = "RUN_ID")]
    pub run: Option<String>,
}

#[derive(Args)]
pub struct WorktreePruneArgs {
    #[arg(long, value_name = "RUN_ID")]
    pub run: Option<String>,
    /// Also remove worktrees with unmerged commits or uncommitted changes (never live ones).
    #[arg(long)]
    pub force: bool,
}

#[derive(Subcommand)]
pub enum CouncilCmd {
    /// Start a council: brainstorm threads for each reviewer.
    Start(CouncilStartArgs),
    /// The council's phase and who has answered.
    Status(CouncilArgs),
    /// Groups, tallies, verdicts and who proposed what.
    Report(CouncilArgs),
}

#[derive(Args)]
pub struct CouncilStartArgs {
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    #[arg(long)]
    pub topic: String,
    #[arg(long, value_name = "PATH")]
    pub body_file: Option<PathBuf>,
    /// Reviewers, comma-separated (default: reviewer-1,reviewer-2,reviewer-3).
    #[arg(long, value_delimiter = ',')]
    pub reviewers: Vec<String>,
}

#[derive(Args)]
pub struct CouncilArgs {
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    #[arg(long, value_name = "COUNCIL_ID")]
    pub council: String,
}
