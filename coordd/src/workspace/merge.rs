//! Stacked tasks in git (git2, blocking): a run's integration branch, merging a task's
//! branch into it, and merging it into the run's base branch.
//!
//! Nothing here loses a commit: a branch only ever moves forward, to a descendant of its
//! tip (a fast-forward, or a merge commit whose parents are both tips), and only if it did
//! not move meanwhile (compare-and-swap on the reference). Merges into the integration
//! branch are computed in memory (no working tree is touched), so it must not be checked
//! out anywhere. Merging into a base branch that is checked out updates that working tree
//! with a safe checkout, which refuses to overwrite local changes.

use std::path::Path;

use git2::build::CheckoutBuilder;
use git2::{BranchType, Oid, Repository};

use crate::error::{Error, Result};

/// The integration branch of a run.
pub fn integration_branch(run: &str) -> String {
    format!("orch/{run}/integration")
}

pub(super) fn git_err(context: &str) -> impl FnOnce(git2::Error) -> Error + '_ {
    move |e| Error::invalid(format!("{context}: {}", e.message()))
}

pub(super) fn open(repo: &Path) -> Result<Repository> {
    Repository::open(repo).map_err(git_err(&format!("cannot open git repository {}", repo.display())))
}

pub(super) fn tip(repo: &Repository, branch: &str) -> Result<Oid> {
    let b = repo
        .find_branch(branch, BranchType::Local)
        .map_err(|e| Error::invalid(format!("branch {branch} not found: {}", e.message())))?;
    Ok(b.get().peel_to_commit().map_err(git_err("cannot read branch"))?.id())
}

/// Where a run starts: its integration branch, made at `base` (default HEAD) unless it
/// exists already (then it is kept as is: it may hold merged work). Returns the base
/// branch (the branch `base` names, or HEAD's), the revision the integration branch starts
/// from, and its name.
pub fn ensure_integration(repo_path: &Path, run: &str, base: Option<&str>) -> Result<(Option<String>, String, String)> {
    let repo = open(repo_path)?;
    let name = integration_branch(run);
    let (commit, base_branch) = super::git::resolve_base(&repo, base)?;
    let start = match repo.find_branch(&name, BranchType::Local) {
        Ok(b) => b.get().peel_to_commit().map_err(git_err("cannot read the integration branch"))?.id(),
        Err(_) => {
            repo.branch(&name, &commit, false).map_err(git_err("cannot create the integration branch"))?;
            commit.id()
        }
    };
    Ok((base_branch, start.to_string(), name))
}

/// What merging one branch into another did.
#[derive(Debug, Clone)]
pub enum Merged {
    /// The target now holds the source: its new tip, commits brought, fast-forward or not.
    Done { commit: String, commits: usize, fast_forward: bool },
    /// Conflicting paths; nothing changed.
    Conflict { at: String, files: Vec<String> },
}

/// Is `branch` checked out in the repository's main working tree or one of its worktrees?
fn checked_out_in(repo: &Repository, branch: &str) -> Result<Option<Repository>> {
    let full = format!("refs/heads/{branch}");
    let head_is =
        |r: &Repository| r.head().ok().and_then(|h| h.name().ok().map(str::to_string)).as_deref() == Some(&full);
    if !repo.is_bare() && head_is(repo) {
        return Ok(Some(open(repo.workdir().unwrap_or(repo.path()))?));
    }
    let names = repo.worktrees().map_err(git_err("cannot list worktrees"))?;
    for name in names.iter().filter_map(|n| n.ok().flatten()) {
        if let Ok(wt) = repo.find_worktree(name)
            && let Ok(r) = Repository::open_from_worktree(&wt)
            && head_is(&r)
        {
            return Ok(Some(r));
        }
    }
    Ok(None)
}

/// Merge `source` into the branch `target` (both local branches). `message` is the merge
/// commit's. Moves `target` with a compare-and-swap; when `target` is checked out, updates
/// that working tree safely (and refuses if it cannot).
pub fn merge_branch(repo_path: &Path, source: &str, target: &str, message: &str) -> Result<Merged> {
    let repo = open(repo_path)?;
    let (src, dst) = (tip(&repo, source)?, tip(&repo, target)?);
    let merged = merge_in_memory(&repo, src, dst, message)?;
    if let Merged::Done { commit, commits, fast_forward } = &merged
        && *commits > 0
    {
        let new = Oid::from_str(commit).map_err(git_err("bad commit id"))?;
        move_branch(&repo, target, (dst, new), &format!("orch: merge {source} into {target}"))?;
        return Ok(Merged::Done { commit: commit.clone(), commits: *commits, fast_forward: *fast_forward });
    }
    Ok(merged)
}

/// The merge of commit `src` into `dst`, made in memory: `dst` itself when it holds `src`
/// already (`commits` 0), `src` for a fast-forward, else a new merge commit (written to the
/// object database, referenced by nothing) with `message`; or the conflicting paths.
pub(super) fn merge_in_memory(repo: &Repository, src: Oid, dst: Oid, message: &str) -> Result<Merged> {
    let (commits, _) = repo.graph_ahead_behind(src, dst).map_err(git_err("cannot compare the branches"))?;
    if src == dst || repo.graph_descendant_of(dst, src).map_err(git_err("cannot compare the branches"))? {
        return Ok(Merged::Done { commit: dst.to_string(), commits: 0, fast_forward: true });
    }
    let fast_forward = repo.graph_descendant_of(src, dst).map_err(git_err("cannot compare the branches"))?;
    if fast_forward {
        return Ok(Merged::Done { commit: src.to_string(), commits, fast_forward });
    }
    let (ours, theirs) = (
        repo.find_commit(dst).map_err(git_err("cannot read"))?,
        repo.find_commit(src).map_err(git_err("cannot read"))?,
    );
    let mut index = repo.merge_commits(&ours, &theirs, None).map_err(git_err("cannot merge"))?;
    if index.has_conflicts() {
        let mut files: Vec<String> = index
            .conflicts()
            .map_err(git_err("cannot read the conflicts"))?
            .flatten()
            .filter_map(|c| c.our.or(c.their).or(c.ancestor))
            .map(|e| String::from_utf8_lossy(&e.path).into_owned())
            .collect();
        files.sort();
        files.dedup();
        return Ok(Merged::Conflict { at: dst.to_string(), files });
    }
    let tree_id = index.write_tree_to(repo).map_err(git_err("cannot write the merged tree"))?;
    let tree = repo.find_tree(tree_id).map_err(git_err("cannot read the merged tree"))?;
    let sig = repo
        .signature()
        .or_else(|_| git2::Signature::now("orch", "orch@coordd.local"))
        .map_err(git_err("cannot make a signature"))?;
    let new =
        repo.commit(None, &sig, &sig, message, &tree, &[&ours, &theirs]).map_err(git_err("cannot commit the merge"))?;
    Ok(Merged::Done { commit: new.to_string(), commits, fast_forward })
}

/// Move `target` from `dst` to `new` (a descendant), with a compare-and-swap: it fails
/// when the branch is no longer at `dst`. When `target` is checked out, its working tree
/// follows with a safe checkout first (refused over local changes).
pub(super) fn move_branch(repo: &Repository, target: &str, (dst, new): (Oid, Oid), log: &str) -> Result<()> {
    if let Some(wt) = checked_out_in(repo, target)? {
        // The target is someone's working tree: bring its files along, refusing to
        // overwrite local changes, before the branch moves.
        let tree = wt.find_commit(new).and_then(|c| c.tree()).map_err(git_err("cannot read the merged tree"))?;
        let mut co = CheckoutBuilder::new();
        co.safe();
        wt.checkout_tree(tree.as_object(), Some(&mut co)).map_err(|e| {
            Error::invalid(format!(
                "{target} is checked out in {} and its files could not be updated ({}); commit or stash your changes there first",
                wt.workdir().unwrap_or(wt.path()).display(),
                e.message()
            ))
        })?;
    }
    repo.reference_matching(&format!("refs/heads/{target}"), new, true, dst, log)
        .map_err(|e| Error::invalid(format!("{target} moved while merging ({}); try again", e.message())))?;
    Ok(())
}

/// Files with uncommitted changes (untracked included, session files and ignored ones not)
/// in a worktree, if it still exists.
pub fn uncommitted(worktree: &Path) -> Vec<String> {
    let Ok(repo) = Repository::open(worktree) else { return Vec::new() };
    super::git::dirty_files(&repo, true).unwrap_or_default()
}

/// Is `branch`'s tip contained in `target`?
pub fn contains(repo_path: &Path, target: &str, branch: &str) -> Result<bool> {
    let repo = open(repo_path)?;
    let (b, t) = (tip(&repo, branch)?, tip(&repo, target)?);
    Ok(b == t || repo.graph_descendant_of(t, b).map_err(git_err("cannot compare the branches"))?)
}
