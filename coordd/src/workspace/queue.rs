//! The merge queue's git work (git2, blocking): a candidate built in memory on the
//! integration tip, the run's scratch worktree checked out at it for the verifier, and
//! the integration branch moved to exactly the verified commit with a compare-and-swap.
//!
//! The scratch worktree is `<repo>/.agents/merge-queue/<run>/worktree` (made on the
//! branch `orch/<run>/verify`, then detached at each candidate in turn). It is reused from one candidate to the next, reset with a forced checkout that also removes
//! untracked files but keeps ignored ones, so build caches (`target/`, `node_modules/`)
//! survive between verifications.

use std::path::{Path, PathBuf};

use git2::build::CheckoutBuilder;
use git2::{Oid, Repository, WorktreeAddOptions};

use super::merge::{Merged, git_err, merge_in_memory, move_branch, open, tip};
use crate::error::{Error, Result};

/// A candidate's merge result, built on the integration tip.
#[derive(Debug, Clone, PartialEq)]
pub enum Built {
    /// `commit` is the merge result on `tip` (`tip` itself when the branch is in it).
    Commit { tip: String, commit: String, commits: usize, fast_forward: bool },
    /// Merging conflicts in these files.
    Conflict { tip: String, files: Vec<String> },
}

/// Build the merge of `branch` into `integration`'s tip in memory; nothing moves.
pub fn build(repo_path: &Path, branch: &str, integration: &str, message: &str) -> Result<Built> {
    let repo = open(repo_path)?;
    let (src, dst) = (tip(&repo, branch)?, tip(&repo, integration)?);
    Ok(match merge_in_memory(&repo, src, dst, message)? {
        Merged::Done { commit, commits, fast_forward } => {
            Built::Commit { tip: dst.to_string(), commit, commits, fast_forward }
        }
        Merged::Conflict { at, files } => Built::Conflict { tip: at, files },
    })
}

/// Where the run's verifier works.
pub fn scratch_path(workdir: &Path, run: &str) -> PathBuf {
    workdir.join(".agents").join("merge-queue").join(run).join("worktree")
}

/// Where a verify run's output goes.
pub fn log_path(workdir: &Path, run: &str, task: &str, attempt: u32, verification: u32) -> PathBuf {
    workdir
        .join(".agents")
        .join("merge-queue")
        .join(run)
        .join("logs")
        .join(format!("{task}-a{attempt}-v{verification}.log"))
}

/// The repository's working directory.
pub fn workdir(repo_path: &Path) -> Result<PathBuf> {
    let repo = open(repo_path)?;
    repo.workdir()
        .map(Path::to_path_buf)
        .ok_or_else(|| Error::invalid(format!("{} has no working tree", repo_path.display())))
}

/// Check the run's scratch worktree out at `commit`: made on first use, afterwards reset
/// (tracked files forced to the commit, untracked ones removed, ignored ones kept).
pub fn checkout(repo_path: &Path, run: &str, commit: &str) -> Result<PathBuf> {
    let repo = open(repo_path)?;
    let workdir = repo.workdir().ok_or_else(|| Error::invalid("the repository has no working tree"))?.to_path_buf();
    let path = scratch_path(&workdir, run);
    let oid = Oid::from_str(commit).map_err(git_err("bad commit id"))?;
    let target = repo.find_commit(oid).map_err(git_err("cannot read the candidate"))?;
    let wt = match Repository::open(&path) {
        Ok(wt) => wt,
        Err(_) => add_scratch(&repo, run, &path, &target)?,
    };
    wt.set_head_detached(oid).map_err(git_err("cannot point the scratch worktree at the candidate"))?;
    let mut co = CheckoutBuilder::new();
    co.force().remove_untracked(true).remove_ignored(false);
    wt.checkout_head(Some(&mut co)).map_err(git_err("cannot check the candidate out"))?;
    Ok(path)
}

/// Make the scratch worktree at `path` (after clearing what a lost one left), on the
/// branch `orch/<run>/verify` at `at`; its HEAD is detached right after.
fn add_scratch(repo: &Repository, run: &str, path: &Path, at: &git2::Commit<'_>) -> Result<Repository> {
    let (branch, name) = (format!("orch/{run}/verify"), format!("orch-{run}-verify"));
    if let Ok(stale) = repo.find_worktree(&name) {
        let mut opts = git2::WorktreePruneOptions::new();
        opts.valid(true).working_tree(true);
        let _ = stale.prune(Some(&mut opts));
    }
    let parent = path.parent().expect("scratch path has a parent");
    std::fs::create_dir_all(parent).map_err(|e| Error::invalid(format!("cannot create {}: {e}", parent.display())))?;
    if path.exists() {
        std::fs::remove_dir_all(path).map_err(|e| Error::invalid(format!("cannot clear {}: {e}", path.display())))?;
    }
    let reference = repo.branch(&branch, at, true).map_err(git_err("cannot make the verify branch"))?;
    let mut opts = WorktreeAddOptions::new();
    opts.reference(Some(reference.get()));
    let added = repo.worktree(&name, path, Some(&opts)).map_err(git_err("cannot add the scratch worktree"))?;
    Repository::open_from_worktree(&added).map_err(git_err("cannot open the scratch worktree"))
}

/// Where the integration branch is after an attempt to move it.
#[derive(Debug, Clone, PartialEq)]
pub enum Moved {
    /// It moved from the verified tip to the verified commit.
    To(String),
    /// It was no longer at the verified tip (it is here now): nothing moved.
    Elsewhere(String),
}

/// Move `integration` from `from` (the tip the candidate was verified on) to exactly
/// `to` (the verified commit), only if it is still at `from`.
pub fn advance(repo_path: &Path, integration: &str, from: &str, to: &str) -> Result<Moved> {
    let repo = open(repo_path)?;
    let now = tip(&repo, integration)?;
    let (from, to) =
        (Oid::from_str(from).map_err(git_err("bad commit id"))?, Oid::from_str(to).map_err(git_err("bad commit id"))?);
    if now != from {
        return Ok(Moved::Elsewhere(now.to_string()));
    }
    if from != to {
        move_branch(&repo, integration, (from, to), "orch: merge queue: the verified merge")?;
    }
    Ok(Moved::To(to.to_string()))
}

/// How many commits `commit` brings over `tip`.
pub fn ahead(repo_path: &Path, commit: &str, tip: &str) -> Result<usize> {
    let repo = open(repo_path)?;
    let (c, t) = (
        Oid::from_str(commit).map_err(git_err("bad commit id"))?,
        Oid::from_str(tip).map_err(git_err("bad commit id"))?,
    );
    Ok(repo.graph_ahead_behind(c, t).map_err(git_err("cannot compare"))?.0)
}
