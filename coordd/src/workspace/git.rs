//! Git worktrees for code attempts, with git2. Every function here blocks (libgit2 does
//! disk I/O and `Repository` is not `Sync`): call them from `spawn_blocking`, never on the
//! writer thread or an executor thread. Each opens the repository itself.
//!
//! Layout: attempt N of task T in run R works in `<repo>/.agents/worktrees/R/T-aN` on the
//! new branch `orch/R/T/aN`, taken from the base revision. Run and task ids are restricted
//! to `[A-Za-z0-9._-]`, so both are always valid paths and ref names.

use std::path::{Path, PathBuf};

use coord_proto::ErrorCode;
use git2::{BranchType, Repository, StatusOptions, WorktreeAddOptions, WorktreePruneOptions};

use crate::error::{Error, Result};

/// A worktree created for an attempt.
pub type Created = crate::domain::orch::attempts::Worktree;

/// The state of an attempt's worktree, for pruning.
#[derive(Debug, Clone)]
pub struct State {
    pub exists: bool,
    /// Files with uncommitted changes (untracked files count; ignored ones do not).
    pub dirty: Vec<String>,
    /// Commits on the branch that are not in its base revision.
    pub ahead: usize,
    /// Every tip is contained in one of the branches it was checked against.
    pub merged: bool,
}

fn git_err(context: &str) -> impl FnOnce(git2::Error) -> Error + '_ {
    move |e| Error::invalid(format!("{context}: {}", e.message()))
}

pub fn branch_name(run: &str, task: &str, attempt: u32) -> String {
    format!("orch/{run}/{task}/a{attempt}")
}

fn worktree_name(run: &str, task: &str, attempt: u32) -> String {
    // Worktree names cannot contain '/'.
    format!("orch-{run}-{task}-a{attempt}")
}

/// The folder of `.agents/` that holds the task worktrees (0700, like `.agents/`).
pub const WORKTREES_DIR: &str = "worktrees";

pub fn worktree_path(workdir: &Path, run: &str, task: &str, attempt: u32) -> PathBuf {
    workdir.join(".agents").join(WORKTREES_DIR).join(run).join(format!("{task}-a{attempt}"))
}

fn open(repo: &Path) -> Result<Repository> {
    Repository::open(repo).map_err(git_err(&format!("cannot open git repository {}", repo.display())))
}

/// Files with uncommitted changes in a repository or worktree. The untracked session
/// files that dispatch itself writes (hooks, instructions) are not work.
pub(crate) fn dirty_files(repo: &Repository, include_untracked: bool) -> Result<Vec<String>> {
    let mut opts = StatusOptions::new();
    opts.include_untracked(include_untracked).include_ignored(false).recurse_untracked_dirs(false);
    let statuses = repo.statuses(Some(&mut opts)).map_err(git_err("cannot read git status"))?;
    Ok(statuses
        .iter()
        .filter(|s| !(s.status() == git2::Status::WT_NEW && s.path().is_ok_and(super::sessions::is_session_file)))
        .filter_map(|s| s.path().ok().map(str::to_string))
        .collect())
}

/// Check a repository and base before any worktree is made: with `strict`, refuse
/// uncommitted changes (to tracked files; the `.agents/` folder is untracked) and a base
/// that is not a commit.
pub fn check_base(repo_path: &Path, base: Option<&str>, strict: bool) -> Result<String> {
    let repo = open(repo_path)?;
    if repo.is_bare() {
        return Err(Error::invalid(format!(
            "{} is a bare repository; worktrees need a working tree",
            repo_path.display()
        )));
    }
    if strict {
        let dirty = dirty_files(&repo, false)?;
        if !dirty.is_empty() {
            return Err(Error::invalid(format!(
                "strict: {} has uncommitted changes ({}); commit or stash them first",
                repo_path.display(),
                dirty.iter().take(5).cloned().collect::<Vec<_>>().join(", ")
            )));
        }
    }
    let spec = base.unwrap_or("HEAD");
    let commit = repo
        .revparse_single(spec)
        .and_then(|o| o.peel_to_commit())
        .map_err(|e| Error::invalid(format!("base '{spec}' is not a commit: {}", e.message())))?;
    Ok(commit.id().to_string())
}

/// The commit `base` (default HEAD) names, and the local branch it was taken from: HEAD's
/// branch, or `base` itself when it names a local branch (none for a detached HEAD, a
/// commit id, a tag...).
pub fn resolve_base<'r>(repo: &'r Repository, base: Option<&str>) -> Result<(git2::Commit<'r>, Option<String>)> {
    let spec = base.unwrap_or("HEAD");
    let commit = repo
        .revparse_single(spec)
        .and_then(|o| o.peel_to_commit())
        .map_err(|e| Error::invalid(format!("base '{spec}' is not a commit: {}", e.message())))?;
    let base_branch = match base.filter(|b| *b != "HEAD") {
        None => repo.head().ok().filter(|h| h.is_branch()).and_then(|h| h.shorthand().ok().map(str::to_string)),
        Some(b) => repo.find_branch(b, BranchType::Local).ok().map(|_| b.to_string()),
    };
    Ok((commit, base_branch))
}

/// Create the worktree of an attempt on a new branch from `base` (default HEAD).
pub fn create(repo_path: &Path, run: &str, task: &str, attempt: u32, base: Option<&str>) -> Result<Created> {
    let repo = open(repo_path)?;
    let workdir = repo
        .workdir()
        .ok_or_else(|| Error::invalid(format!("{} has no working tree", repo_path.display())))?
        .to_path_buf();
    let (commit, base_branch) = resolve_base(&repo, base)?;
    let branch_name = branch_name(run, task, attempt);
    let path = worktree_path(&workdir, run, task, attempt);
    if path.exists() {
        return Err(Error::app(
            ErrorCode::InvalidTransition,
            format!("{} already exists (left by an earlier dispatch?); move it away first", path.display()),
        ));
    }
    // A dispatch that crashed between making the worktree and recording the attempt can
    // leave the branch (and git's record of a worktree whose directory is gone). With no
    // work on it, it is ours to replace; with work, it is refused.
    if let Ok(wt) = repo.find_worktree(&worktree_name(run, task, attempt)) {
        let mut opts = WorktreePruneOptions::new();
        opts.working_tree(false);
        let _ = wt.prune(Some(&mut opts));
    }
    if let Ok(mut stale) = repo.find_branch(&branch_name, BranchType::Local) {
        let tip = stale.get().peel_to_commit().map_err(git_err("cannot read branch"))?.id();
        if tip != commit.id() {
            return Err(Error::app(
                ErrorCode::InvalidTransition,
                format!("branch {branch_name} already exists with commits of its own; rename or delete it first"),
            ));
        }
        stale.delete().map_err(git_err("cannot replace a stale branch"))?;
    }
    let parent = path.parent().expect("worktree path has a parent");
    // 0700, like `.agents/`: another user of the machine has no business in them.
    crate::private::create_dir(parent)
        .map_err(|e| Error::invalid(format!("cannot create {}: {e}", parent.display())))?;
    let branch = repo.branch(&branch_name, &commit, false).map_err(git_err("cannot create branch"))?;
    let mut opts = WorktreeAddOptions::new();
    opts.reference(Some(branch.get()));
    if let Err(e) = repo.worktree(&worktree_name(run, task, attempt), &path, Some(&opts)) {
        // Leave nothing half-made behind.
        let _ = repo.find_branch(&branch_name, BranchType::Local).and_then(|mut b| b.delete());
        return Err(Error::invalid(format!("cannot add worktree {}: {}", path.display(), e.message())));
    }
    Ok(Created { path, branch: branch_name, base_rev: commit.id().to_string(), base_branch })
}

/// Inspect an attempt's worktree and branch. Work counts wherever it is: on the branch, or
/// on the worktree's own HEAD (a detached HEAD or another branch checked out there); it is
/// merged when one of `merged_into` (the attempt's base branch, and for a run with an
/// integration branch also the run's base branch) contains it. What cannot be inspected is
/// reported as such, never as clean.
pub fn inspect(repo_path: &Path, path: &Path, branch: &str, base_rev: &str, merged_into: &[String]) -> Result<State> {
    let repo = open(repo_path)?;
    let exists = path.is_dir();
    let base = git2::Oid::from_str(base_rev).map_err(git_err("bad base revision"))?;
    let mut tips = Vec::new();
    let mut dirty = Vec::new();
    if exists {
        let wt = Repository::open(path)
            .map_err(|e| Error::invalid(format!("cannot open worktree {}: {}", path.display(), e.message())))?;
        dirty = dirty_files(&wt, true)?;
        if let Ok(head) = wt.head().and_then(|h| h.peel_to_commit()) {
            tips.push(head.id());
        }
    }
    if let Ok(b) = repo.find_branch(branch, BranchType::Local) {
        tips.push(b.get().peel_to_commit().map_err(git_err("cannot read branch"))?.id());
    }
    let mut base_tips = Vec::new();
    for b in merged_into.iter().filter_map(|b| repo.find_branch(b, BranchType::Local).ok()) {
        base_tips.push(b.get().peel_to_commit().map_err(git_err("cannot read base branch"))?.id());
    }
    let mut ahead = 0;
    let mut merged = true;
    for tip in tips {
        let (n, _) = repo.graph_ahead_behind(tip, base).map_err(git_err("cannot compare with base"))?;
        ahead = ahead.max(n);
        let in_base = base_tips.iter().any(|&bt| bt == tip || repo.graph_descendant_of(bt, tip).unwrap_or(false));
        merged &= n == 0 || in_base;
    }
    Ok(State { exists, dirty, ahead, merged })
}

/// Remove an attempt's worktree (directory and git's record of it) and, if asked, its
/// branch.
pub fn remove(repo_path: &Path, run: &str, task: &str, attempt: u32, path: &Path, delete_branch: bool) -> Result<()> {
    let repo = open(repo_path)?;
    match repo.find_worktree(&worktree_name(run, task, attempt)) {
        Ok(wt) => {
            let mut opts = WorktreePruneOptions::new();
            opts.valid(true).working_tree(true).locked(false);
            wt.prune(Some(&mut opts)).map_err(git_err("cannot prune worktree"))?;
        }
        Err(_) if path.exists() => {
            std::fs::remove_dir_all(path)
                .map_err(|e| Error::invalid(format!("cannot remove {}: {e}", path.display())))?;
        }
        Err(_) => {}
    }
    if path.exists() {
        std::fs::remove_dir_all(path).map_err(|e| Error::invalid(format!("cannot remove {}: {e}", path.display())))?;
    }
    if delete_branch && let Ok(mut b) = repo.find_branch(&branch_name(run, task, attempt), BranchType::Local) {
        b.delete().map_err(git_err("cannot delete branch"))?;
    }
    Ok(())
}

/// Delete `branch` if `into` contains its tip (so no commit is lost); whether it did. A
/// branch that is already gone, or a missing `into`, deletes nothing.
pub fn remove_merged_branch(repo_path: &Path, branch: &str, into: &str) -> Result<bool> {
    let repo = open(repo_path)?;
    let (Ok(mut b), Ok(target)) =
        (repo.find_branch(branch, BranchType::Local), repo.find_branch(into, BranchType::Local))
    else {
        return Ok(false);
    };
    let tip = b.get().peel_to_commit().map_err(git_err("cannot read branch"))?.id();
    let into_tip = target.get().peel_to_commit().map_err(git_err("cannot read base branch"))?.id();
    if tip != into_tip && !repo.graph_descendant_of(into_tip, tip).map_err(git_err("cannot compare branches"))? {
        return Ok(false);
    }
    b.delete().map_err(git_err("cannot delete branch"))?;
    Ok(true)
}
