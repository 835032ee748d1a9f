//! The `orch` CLI: the leader-facing control plane (runs, task graph, dispatch, worktrees,
//! retries, council review). Not built yet: this binary only says so.

use clap::Parser;

/// Leader-side orchestration for coordd: NOT IMPLEMENTED YET.
///
/// `orch` will own runs, the task graph, dispatch into inbox threads, a git worktree per
/// attempt, reconcile, wait, retry and council review. This release ships only this
/// placeholder so that the binary name is reserved; every command exits with code 30.
/// Use `inbox` (worker and leader inspection commands) in the meantime.
#[derive(Parser)]
#[command(name = "orch", version, about, long_about)]
struct Cli {
    /// Any orch command (none is implemented yet).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<String>,
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let what = if cli.args.is_empty() { "orch".to_string() } else { format!("orch {}", cli.args.join(" ")) };
    eprintln!("{what}: not implemented yet; orch is a placeholder in this release (see `orch --help`)");
    std::process::ExitCode::from(30)
}
