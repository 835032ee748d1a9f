//! `inbox hook install-git`: install a git pre-commit hook refusing commits that touch
//! files under another agent's active exclusive reservation.

use super::githook::*;
use super::*;

/// Install a git pre-commit hook refusing commits that touch files under another
/// agent's active exclusive reservation. The committing agent is $COORD_AGENT. An
/// existing hook is kept as pre-commit.local and still runs first.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  inbox hook install-git --repo .")]
pub struct Args {
    /// The repository (default: the current directory).
    #[arg(long, value_name = "PATH")]
    pub repo: Option<PathBuf>,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let a = self;
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
}
