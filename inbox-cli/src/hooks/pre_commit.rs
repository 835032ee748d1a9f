//! `inbox hook pre-commit`: what the installed git hook runs.

use super::githook::*;
use super::*;

/// What the installed git hook runs: check the staged files against reservations.
#[derive(clap::Args)]
#[command(after_help = "Example (what .git/hooks/pre-commit runs):\n  COORD_AGENT=backend inbox hook pre-commit")]
pub struct Args {}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let cwd = std::env::current_dir().map_err(|e| CliError::Internal(e.to_string()))?;
        let staged = git(&cwd, &["diff", "--cached", "--name-only", "-z", "--no-renames"])?;
        let paths: Vec<String> = staged
            .split(|b| *b == 0)
            .filter(|p| !p.is_empty())
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .collect();
        if paths.is_empty() {
            return Ok(Outcome::Done);
        }
        let check = CheckPathsParams { agent: ctx.agent.clone(), paths, offset: None };
        let checked: Result<_, CliError> = async {
            let client = ctx.client().await?;
            Ok(coord_client::pages::all(check, |p| client.reservation_check(p)).await?)
        }
        .await;
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
        Ok(Outcome::Conflict)
    }
}
