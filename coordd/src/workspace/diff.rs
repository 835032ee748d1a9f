//! A task's diff for review (git2, blocking): its branch's tip against where it left the
//! integration branch (their merge base) or against the integration tip, as files and
//! hunks with old and new line numbers. A file whose lines pass a byte bound is cut
//! (`truncated`), so one huge file cannot make a reply unbounded.

use std::path::Path;

use coord_proto::types::{DiffAgainst, DiffFile, DiffHunk, DiffLine};
use git2::{Delta, DiffFindOptions, DiffOptions, Oid, Patch};

use super::merge::{git_err, open, tip};
use crate::error::Result;

/// The commits compared and the changed files.
#[derive(Debug, Clone)]
pub struct Compared {
    pub from: String,
    pub to: String,
    pub files: Vec<DiffFile>,
}

/// Bytes a line costs in a reply beyond its text (its JSON fields).
const LINE_OVERHEAD: usize = 48;

fn status(d: Delta) -> &'static str {
    match d {
        Delta::Added | Delta::Untracked => "added",
        Delta::Deleted => "deleted",
        Delta::Renamed => "renamed",
        Delta::Copied => "copied",
        Delta::Typechange => "typechange",
        _ => "modified",
    }
}

/// Diff `branch` against `against` (the merge base with `integration`, or its tip); only
/// `path` when given; each file's hunks cut past `max_file_bytes`.
pub fn diff(
    repo_path: &Path,
    branch: &str,
    integration: &str,
    against: DiffAgainst,
    path: Option<&str>,
    max_file_bytes: usize,
) -> Result<Compared> {
    let repo = open(repo_path)?;
    let to = tip(&repo, branch)?;
    let other = tip(&repo, integration)?;
    let from: Oid = match against {
        DiffAgainst::Integration => other,
        DiffAgainst::Base => {
            repo.merge_base(to, other).map_err(git_err("no merge base with the integration branch"))?
        }
    };
    let tree = |oid: Oid| repo.find_commit(oid).and_then(|c| c.tree()).map_err(git_err("cannot read a tree"));
    let (old, new) = (tree(from)?, tree(to)?);
    let mut opts = DiffOptions::new();
    opts.context_lines(3);
    if let Some(p) = path {
        opts.pathspec(p).disable_pathspec_match(true);
    }
    let mut d = repo.diff_tree_to_tree(Some(&old), Some(&new), Some(&mut opts)).map_err(git_err("cannot diff"))?;
    d.find_similar(Some(DiffFindOptions::new().renames(true))).map_err(git_err("cannot find renames"))?;
    let mut files = Vec::new();
    for i in 0..d.deltas().len() {
        let Some(delta) = d.get_delta(i) else { continue };
        let name = |f: git2::DiffFile<'_>| f.path().map(|p| p.to_string_lossy().into_owned());
        let new_path = name(delta.new_file()).or_else(|| name(delta.old_file())).unwrap_or_default();
        let old_path = name(delta.old_file()).filter(|o| *o != new_path);
        let mut file = DiffFile {
            path: new_path,
            old_path,
            status: status(delta.status()).into(),
            additions: 0,
            deletions: 0,
            binary: delta.flags().is_binary(),
            hunks: vec![],
            truncated: false,
        };
        if let Some(patch) = Patch::from_diff(&d, i).map_err(git_err("cannot read a patch"))? {
            read_patch(&patch, &mut file, max_file_bytes)?;
        } else {
            file.binary = true;
        }
        files.push(file);
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(Compared { from: from.to_string(), to: to.to_string(), files })
}

fn read_patch(patch: &Patch<'_>, file: &mut DiffFile, max_bytes: usize) -> Result<()> {
    let (_, adds, dels) = patch.line_stats().map_err(git_err("cannot count lines"))?;
    (file.additions, file.deletions) = (adds as u32, dels as u32);
    let mut bytes = 0;
    for h in 0..patch.num_hunks() {
        let (hunk, n) = patch.hunk(h).map_err(git_err("cannot read a hunk"))?;
        let mut out = DiffHunk {
            header: String::from_utf8_lossy(hunk.header()).trim_end().to_string(),
            old_start: hunk.old_start(),
            old_lines: hunk.old_lines(),
            new_start: hunk.new_start(),
            new_lines: hunk.new_lines(),
            lines: Vec::with_capacity(n),
        };
        for l in 0..n {
            let line = patch.line_in_hunk(h, l).map_err(git_err("cannot read a line"))?;
            let origin = match line.origin() {
                '+' | '-' | ' ' => line.origin().to_string(),
                _ => continue, // "no newline at end of file" markers
            };
            let text = String::from_utf8_lossy(line.content()).trim_end_matches(['\n', '\r']).to_string();
            bytes += text.len() + LINE_OVERHEAD;
            if bytes > max_bytes {
                file.truncated = true;
                break;
            }
            out.lines.push(DiffLine { origin, old_line: line.old_lineno(), new_line: line.new_lineno(), text });
        }
        if !out.lines.is_empty() {
            file.hunks.push(out);
        }
        if file.truncated {
            break;
        }
    }
    Ok(())
}
