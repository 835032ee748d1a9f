//! The git guard: `inbox hook install-git` writes a pre-commit hook, and the hook runs
//! `inbox hook pre-commit`, which refuses a commit whose staged files lie under another
//! agent's active exclusive reservation. The committing agent is `$COORD_AGENT`.

use std::path::Path;
use std::process::Command;

use coord_cli::CliError;
use coord_proto::ErrorCode;

/// Marks a hook as ours, so re-installing replaces it instead of chaining it.
pub(super) const MARKER: &str = "coordd-reservation-guard";

pub(super) fn git(repo: &Path, args: &[&str]) -> Result<Vec<u8>, CliError> {
    let out = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .output()
        .map_err(|e| CliError::App(ErrorCode::IoReadFailed, format!("cannot run git: {e}")))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(CliError::App(
            ErrorCode::InvalidArgs,
            format!("git {} failed in {}: {}", args.join(" "), repo.display(), err.trim()),
        ));
    }
    Ok(out.stdout)
}

/// `p` as one shell word (with `/` separators on Windows, where Git for Windows runs the
/// hook with its own sh).
pub(super) fn quote(p: &Path) -> String {
    let s = slashes(&p.display().to_string());
    // Only a string with a NUL byte cannot be quoted, and no path holds one.
    shlex::try_quote(&s).map(|q| q.into_owned()).unwrap_or(s)
}

/// `/` separators on Windows (a `\\` is an escape in sh), the path as it is elsewhere.
pub(super) fn slashes(s: &str) -> String {
    if cfg!(windows) { s.replace('\\', "/") } else { s.to_string() }
}

pub(super) fn write_err(path: &Path, e: std::io::Error) -> CliError {
    CliError::App(ErrorCode::IoWriteFailed, format!("cannot write {}: {e}", path.display()))
}
