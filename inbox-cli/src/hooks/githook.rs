//! The git guard: `inbox hook install-git` writes a pre-commit hook, and the hook runs
//! `inbox hook pre-commit`, which refuses a commit whose staged files lie under another
//! agent's active exclusive reservation. The committing agent is `$COORD_AGENT`.

use std::path::{Path, PathBuf};
use std::process::Command;

use coord_cli::CliError;
use coord_proto::ErrorCode;
use coord_proto::api::AgentsApiClient;
use coord_proto::types::CheckPathsParams;
use serde_json::json;

use crate::cli::InstallGitArgs;
use crate::ctx::{Ctx, Outcome, Res};

/// Marks a hook as ours, so re-installing replaces it instead of chaining it.
const MARKER: &str = "coordd-reservation-guard";

fn git(repo: &Path, args: &[&str]) -> Result<Vec<u8>, CliError> {
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
fn quote(p: &Path) -> String {
    let s = slashes(&p.display().to_string());
    // Only a string with a NUL byte cannot be quoted, and no path holds one.
    shlex::try_quote(&s).map(|q| q.into_owned()).unwrap_or(s)
}

/// `/` separators on Windows (a `\\` is an escape in sh), the path as it is elsewhere.
fn slashes(s: &str) -> String {
    if cfg!(windows) { s.replace('\\', "/") } else { s.to_string() }
}

fn write_err(path: &Path, e: std::io::Error) -> CliError {
    CliError::App(ErrorCode::IoWriteFailed, format!("cannot write {}: {e}", path.display()))
}

/// Install the hook into `--repo` (default: the current directory).
pub fn install(ctx: &Ctx, a: InstallGitArgs) -> Res {
    let db = &ctx.connect_options().paths.db;
    let repo = match a.repo {
        Some(r) => r,
        None => std::env::current_dir().map_err(|e| CliError::Internal(e.to_string()))?,
    };
    let hooks = String::from_utf8_lossy(&git(&repo, &["rev-parse", "--git-path", "hooks"])?).trim().to_string();
    let hooks = if Path::new(&hooks).is_absolute() { PathBuf::from(hooks) } else { repo.join(hooks) };
    std::fs::create_dir_all(&hooks).map_err(|e| write_err(&hooks, e))?;
    let hook = hooks.join("pre-commit");
    let mut chained = None;
    if let Ok(existing) = std::fs::read_to_string(&hook)
        && !existing.contains(MARKER)
    {
        let local = hooks.join("pre-commit.local");
        if local.exists() {
            return Err(CliError::App(
                ErrorCode::IoWriteFailed,
                format!("{} exists and is not ours, and {} is taken too", hook.display(), local.display()),
            ));
        }
        std::fs::rename(&hook, &local).map_err(|e| write_err(&local, e))?;
        chained = Some(local);
    }
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("inbox"));
    let script = format!(
        "#!/bin/sh\n\
         # {MARKER}: installed by `inbox hook install-git`.\n\
         # Refuses a commit touching files under another agent's active exclusive reservation.\n\
         # The committing agent is $COORD_AGENT. A previous hook runs first as pre-commit.local.\n\
         hook_dir=$(dirname \"$0\")\n\
         if [ -x \"$hook_dir/pre-commit.local\" ]; then\n    \"$hook_dir/pre-commit.local\" \"$@\" || exit $?\nfi\n\
         inbox={}\n\
         [ -x \"$inbox\" ] || inbox=inbox\n\
         COORD_DB=\"${{COORD_DB:-{}}}\" exec \"$inbox\" hook pre-commit\n",
        quote(&exe),
        slashes(&db.display().to_string()).replace('"', "\\\"").replace('$', "\\$").replace('`', "\\`"),
    );
    std::fs::write(&hook, script).map_err(|e| write_err(&hook, e))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).map_err(|e| write_err(&hook, e))?;
    }
    ctx.print(&json!({"hook": hook, "chained": chained, "db": db}), || {
        println!("installed the reservation guard at {}", hook.display());
        if let Some(l) = &chained {
            println!("  the previous hook runs first, from {}", l.display());
        }
    });
    Ok(Outcome::Done)
}

/// The hook's check. Fails open (allows the commit, with a warning) when the daemon
/// cannot be reached, so a broken daemon never blocks a human's commit.
pub async fn pre_commit(ctx: &Ctx) -> Res {
    let cwd = std::env::current_dir().map_err(|e| CliError::Internal(e.to_string()))?;
    let staged = git(&cwd, &["diff", "--cached", "--name-only", "-z", "--no-renames"])?;
    let paths: Vec<String> =
        staged.split(|b| *b == 0).filter(|p| !p.is_empty()).map(|p| String::from_utf8_lossy(p).into_owned()).collect();
    if paths.is_empty() {
        return Ok(Outcome::Done);
    }
    let check = CheckPathsParams { agent: ctx.agent.clone(), paths };
    let checked: Result<_, CliError> = async { Ok(ctx.client().await?.reservation_check(check).await?) }.await;
    let r = match checked {
        Ok(r) => r,
        Err(e) => {
            eprintln!("inbox pre-commit: cannot check reservations ({e}); allowing the commit");
            return Ok(Outcome::Done);
        }
    };
    if r.conflicts.is_empty() {
        return Ok(Outcome::Done);
    }
    eprintln!("commit refused: staged files lie under another agent's exclusive reservation");
    for c in &r.conflicts {
        let res = &c.reservation;
        eprintln!(
            "  {} is reserved by {} (scope '{}', task {}, until {})",
            c.path, res.agent_id, res.scope, res.task_id, res.expires_at
        );
    }
    match &ctx.agent {
        Some(a) => {
            eprintln!("you are {a} (COORD_AGENT); ask the holder to release, or wait for the reservation to end")
        }
        None => eprintln!("COORD_AGENT is not set, so every holder counts as another agent"),
    }
    Ok(Outcome::Refused)
}
