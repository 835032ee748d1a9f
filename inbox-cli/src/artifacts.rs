//! Where an artifact lives. A worker names a file relative to where it works (`hello.txt`
//! in its worktree), which means nothing once that worktree is pruned. Before an artifact
//! is sent, a path inside a git checkout becomes relative to the repository's top, and its
//! metadata records the checkout's `branch` and HEAD `commit`, so the lead can open it with
//! `git show COMMIT:PATH` (or on the branch) long after the worktree is gone.
//!
//! A path outside any git checkout, or one git cannot resolve, is sent as given. Metadata
//! the caller set (`branch`, `commit`) is never overwritten.

use std::path::{Path, PathBuf};
use std::process::Command;

use coord_proto::types::ArtifactInput;
use serde_json::{Map, Value};

/// The checkout a path lies in: its top directory, HEAD's branch (`HEAD` when detached)
/// and commit.
struct Checkout {
    top: PathBuf,
    branch: String,
    commit: String,
}

/// `a` with its path made relative to its repository and the checkout's branch and commit
/// in its metadata, when it lies in a git checkout (see the module docs). `cwd` is where
/// a relative path starts from.
pub fn locate(mut a: ArtifactInput, cwd: &Path) -> ArtifactInput {
    let given = Path::new(&a.path);
    let abs = if given.is_absolute() { given.to_path_buf() } else { cwd.join(given) };
    // The file's directory if it exists, else the nearest existing ancestor (an artifact
    // may name a file not written yet, or one already removed).
    let Some(dir) = abs.parent().and_then(|d| d.ancestors().find(|p| p.is_dir())) else {
        return a;
    };
    let Some(checkout) = checkout(dir) else {
        return a;
    };
    let real = std::fs::canonicalize(&abs)
        .or_else(|_| std::fs::canonicalize(dir).map(|d| d.join(abs.strip_prefix(dir).unwrap_or(&abs))))
        .unwrap_or(abs.clone());
    let Ok(rel) = real.strip_prefix(&checkout.top) else {
        return a;
    };
    a.path = rel.to_string_lossy().replace('\\', "/");
    let mut meta = match a.metadata_json.take() {
        Some(Value::Object(m)) => m,
        Some(other) => {
            // Not an object: leave it for the daemon to refuse, with its own message.
            a.metadata_json = Some(other);
            return a;
        }
        None => Map::new(),
    };
    meta.entry("branch").or_insert(Value::String(checkout.branch));
    meta.entry("commit").or_insert(Value::String(checkout.commit));
    a.metadata_json = Some(Value::Object(meta));
    a
}

/// Every artifact of a message located from the current directory.
pub fn locate_all(artifacts: Vec<ArtifactInput>) -> Vec<ArtifactInput> {
    let Ok(cwd) = std::env::current_dir() else {
        return artifacts;
    };
    artifacts.into_iter().map(|a| locate(a, &cwd)).collect()
}

/// The git checkout `dir` lies in, if git knows one with a commit.
fn checkout(dir: &Path) -> Option<Checkout> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["rev-parse", "--show-toplevel", "HEAD", "--abbrev-ref", "HEAD"])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    let mut lines = text.lines();
    let top = std::fs::canonicalize(lines.next()?).ok()?;
    let commit = lines.next()?.to_string();
    let branch = lines.next()?.to_string();
    Some(Checkout { top, branch, commit })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"])
            .args(args)
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    }

    fn input(path: &str) -> ArtifactInput {
        ArtifactInput { path: path.into(), kind: None, metadata_json: None }
    }

    #[test]
    fn a_file_in_a_checkout_is_named_from_its_top_with_branch_and_commit() {
        let d = tempfile::tempdir().unwrap();
        git(d.path(), &["init", "-q"]);
        std::fs::create_dir(d.path().join("src")).unwrap();
        std::fs::write(d.path().join("src/a.txt"), "a").unwrap();
        git(d.path(), &["add", "-A"]);
        git(d.path(), &["commit", "-qm", "a"]);
        let a = locate(input("a.txt"), &d.path().join("src"));
        assert_eq!(a.path, "src/a.txt");
        let meta = a.metadata_json.unwrap();
        assert_eq!(meta["branch"], "main");
        assert_eq!(meta["commit"].as_str().unwrap().len(), 40, "{meta}");
    }

    #[test]
    fn a_file_outside_any_checkout_and_the_callers_metadata_stay_as_given() {
        let d = tempfile::tempdir().unwrap();
        let a = locate(input("notes/x.md"), d.path());
        assert_eq!((a.path.as_str(), a.metadata_json), ("notes/x.md", None));
        git(d.path(), &["init", "-q"]);
        git(d.path(), &["commit", "-q", "--allow-empty", "-m", "x"]);
        let mut given = input("x.md");
        given.metadata_json = Some(serde_json::json!({"branch": "mine"}));
        let a = locate(given, d.path());
        assert_eq!(a.metadata_json.unwrap()["branch"], "mine");
    }
}
