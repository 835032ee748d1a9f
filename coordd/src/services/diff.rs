//! `orch.diff`: which attempt and branch on a read, the diff with git2 off the executor
//! (`workspace::diff`), then bounded like every reply: each file's hunks cut past the
//! reply's budget, files paged by bytes (`after` continues), and the attempt's review
//! comments on the first page.

use std::path::PathBuf;

use coord_proto::types::*;

use super::blocking;
use crate::bound;
use crate::core::Core;
use crate::domain::orch::review;
use crate::error::Result;
use crate::workspace::diff as git;

/// `orch.diff`.
pub async fn diff(core: &Core, p: DiffParams) -> Result<TaskDiff> {
    let q = p.clone();
    let (run, attempt, comments) = core.read(move |tx, _| review::diff_target(tx, &q)).await?;
    let against = p.against.unwrap_or(DiffAgainst::Base);
    let (repo, branch, integration) = (
        PathBuf::from(run.repo.clone().unwrap_or_default()),
        attempt.branch.clone().unwrap_or_default(),
        run.integration_branch.clone().unwrap_or_default(),
    );
    let (b, path) = (branch.clone(), p.path.clone());
    // One file alone may take half a reply; the rest is for its neighbours and comments.
    let per_file = bound::items_budget() / 2;
    let compared = blocking(move || git::diff(&repo, &b, &integration, against, path.as_deref(), per_file)).await?;
    let files = match &p.after {
        Some(after) => compared.files.into_iter().filter(|f| f.path.as_str() > after.as_str()).collect(),
        None => compared.files,
    };
    let comments = if p.after.is_none() {
        bound::page_within(comments, bound::items_budget() / 4, |c: &ReviewComment| c.comment_id.clone()).items
    } else {
        Vec::new()
    };
    let page = bound::page_within(files, bound::budget_beside(&comments), |f: &DiffFile| f.path.clone());
    Ok(TaskDiff {
        run_id: p.run_id,
        task_id: p.task_id,
        attempt: attempt.attempt,
        branch,
        against,
        from: compared.from,
        to: compared.to,
        files: page.items,
        comments,
        truncated: page.truncated,
        next_after: page.next_after,
    })
}
