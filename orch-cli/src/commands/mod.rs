//! Every `orch` command, one file each holding its clap `Args` and its `run` (a command
//! with subcommands is a folder: `run/`, `task/`, `dep/`, `worktree/`, `council/`). The
//! list below is the one place a command is registered, under its heading in the
//! top-level help; whether it only reads is declared beside it (`Command::read_only`), and
//! its name is clap's.

mod answer;
mod blocked;
mod cancel;
mod council;
mod dashboard;
mod demo;
mod dep;
mod diff;
mod dispatch;
mod hook;
mod merge;
mod merge_queue;
mod ready;
mod reassign;
mod reconcile;
mod retry;
mod review;
mod run;
mod status;
mod task;
mod team;
mod top;
mod wait;
mod worktree;

pub(crate) use dispatch::repo_here;

/// What every command file uses.
mod prelude {
    pub(crate) use coord_cli::{CliError, Command, Ctx, Outcome, Res, body};
    pub(crate) use coord_proto::api::{ControlApiClient, OrchApiClient, OrchQueueApiClient, ViewApiClient};
    pub(crate) use coord_proto::types::*;

    pub(crate) use super::TaskArg;
    pub(crate) use crate::render;
}

coord_cli::subcommands! {
    /// The commands of `orch`, by heading.
    pub enum Cmd {
        "Runs" => {
            /// Create, list, show, finish or cancel runs.
            #[command(subcommand)]
            Run(run::Cmd),
            Status(status::Args),
            Wait(wait::Args),
            Merge(merge::Args),
            MergeQueue(merge_queue::Args),
        }
        "Tasks" => {
            /// Add, list, show, edit, assign or remove tasks.
            #[command(subcommand)]
            Task(task::Cmd),
            /// Add or remove a dependency between two tasks (cycles are refused).
            #[command(subcommand)]
            Dep(dep::Cmd),
            Ready(ready::Args),
            Dispatch(dispatch::Args),
            Blocked(blocked::Args),
            Answer(answer::Args),
            Retry(retry::Args),
            Reassign(reassign::Args),
            Cancel(cancel::Args),
            Reconcile(reconcile::Args),
        }
        "Review and worktrees" => {
            Diff(diff::Args),
            /// Comment on a task's diff, approve it, or request changes from its worker.
            #[command(subcommand)]
            Review(review::Cmd),
            /// Council review: reviewers (three by default) brainstorm, then vote.
            #[command(subcommand)]
            Council(council::Cmd),
            /// List or prune attempt worktrees.
            #[command(subcommand)]
            Worktree(worktree::Cmd),
        }
        "Watching" => {
            Top(top::Args),
            Dashboard(dashboard::Args),
        }
        "Agents" => {
            Mcp(crate::mcp::Args),
            Hook(hook::Args),
            Team(team::Args),
        }
        "Getting started" => {
            Demo(demo::Args),
            #[command(after_help = "Example:\n  orch completions zsh > ~/.zfunc/_orch")]
            Completions(coord_cli::usage::Completions),
            #[command(after_help = "Example:\n  orch man | man -l -")]
            Man(coord_cli::usage::Man),
        }
    }
}

/// A task of a run: `--run` and `--task`.
#[derive(clap::Args)]
pub struct TaskArg {
    /// The run.
    #[arg(long, value_name = "RUN_ID")]
    pub run: String,
    /// The task.
    #[arg(long, value_name = "TASK_ID")]
    pub task: String,
}

impl From<TaskArg> for coord_proto::types::TaskRef {
    fn from(a: TaskArg) -> Self {
        coord_proto::types::TaskRef { run_id: a.run, task_id: a.task }
    }
}
