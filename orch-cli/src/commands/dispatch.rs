//! `orch dispatch`: hand ready tasks to workers.

use super::prelude::*;
use std::path::{Path, PathBuf};

/// Hand ready tasks to workers: an attempt, an inbox thread, and a git worktree for code tasks.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  orch dispatch --run R1 --all-ready --json   # event_id: where `orch wait` starts")]
pub struct Args {
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

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let repo = match self.repo {
            Some(r) => Some(absolute(r)?),
            None => repo_here(),
        };
        let run = self.run.clone();
        let p = DispatchParams {
            run_id: self.run,
            task_id: self.task,
            all_ready: self.all_ready,
            to: self.to,
            repo,
            base: self.base,
            strict: self.strict,
            no_worktree: self.no_worktree,
        };
        let v = ctx.client().await?.dispatch(p).await?;
        ctx.print(&v, || {
            render::dispatches(&v.dispatches);
            if !v.dispatches.is_empty() {
                println!("wait for what needs you: orch wait --run {run} --after-event {}", v.event_id);
            }
        });
        Ok(Outcome::found(&v.dispatches))
    }
}

/// The repository code tasks get their worktrees from when none is named: the git root
/// around the current directory (`orch dispatch`'s, and the lead's in `orch mcp`).
pub(crate) fn repo_here() -> Option<String> {
    std::env::current_dir().ok().and_then(|d| git_root(&d)).map(|r| r.display().to_string())
}

/// The git root around `dir`: the nearest ancestor holding `.git`.
fn git_root(dir: &Path) -> Option<PathBuf> {
    dir.ancestors().find(|d| d.join(".git").exists()).map(Path::to_path_buf)
}

fn absolute(p: PathBuf) -> Result<String, CliError> {
    let cwd = std::env::current_dir().map_err(|e| CliError::Internal(e.to_string()))?;
    let p = if p.is_absolute() { p } else { cwd.join(p) };
    let p = std::fs::canonicalize(&p).map_err(|e| CliError::Invalid(format!("--repo {}: {e}", p.display())))?;
    Ok(p.display().to_string())
}
