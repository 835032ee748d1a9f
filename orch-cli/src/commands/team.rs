//! `orch team`: an agent leads, in one command. It is `coord-launch --lead CLIENT --goal …`
//! (docs/orch.md, "Letting an agent lead"), run in this process's place (exec on Unix), so
//! its lines, its exit status and Ctrl-C are the bridge's own; the rest of coord-launch's
//! flags (the workers' client, `--live`, budgets) follow `--`.

use std::process::Command as Process;

use super::demo::kit::{bins_first, sibling};
use super::prelude::*;

/// An agent leads a run from a goal to merged work: coord-launch runs the lead session with
/// `orch mcp`, and starts a worker for each task it dispatches.
#[derive(clap::Args)]
#[command(after_help = "Examples:
  orch team --goal 'Add a login page'                  # Claude Code leads; workers per .agents/launch.toml
  orch team --goal 'Add a login page' --lead codex     # Codex leads
  orch team --run R1                                   # lead a run that exists
  orch team --goal 'Ship it' -- --live --max-cost-usd 20   # more coord-launch flags after --

It runs coord-launch --lead (see coord-launch --help); its exit status is coord-launch's:
0 once the run is done.")]
pub struct Args {
    /// What the team is to achieve (needed unless --run names an existing run).
    #[arg(long, required_unless_present = "run")]
    pub goal: Option<String>,
    /// Who leads: claude, codex, or command (a shell command of yours, --lead-command).
    #[arg(long, value_name = "CLIENT", default_value = "claude", value_parser = ["claude", "codex", "command"])]
    pub lead: String,
    /// The run to lead (created with this id from --goal when it does not exist).
    #[arg(long, value_name = "RUN_ID")]
    pub run: Option<String>,
    /// The lead agent's name (default: lead).
    #[arg(long, value_name = "AGENT")]
    pub lead_agent: Option<String>,
    /// The shell command of a `command` lead (its turns on stdin, docs/launch.md).
    #[arg(long, value_name = "COMMAND")]
    pub lead_command: Option<String>,
    /// The lead's model (claude or codex).
    #[arg(long, value_name = "MODEL")]
    pub lead_model: Option<String>,
    /// More coord-launch flags, after `--`.
    #[arg(last = true, value_name = "LAUNCH_ARGS")]
    pub launch_args: Vec<String>,
}

impl Args {
    /// coord-launch's arguments: the lead mode, the project's database, then the rest.
    fn launch_args(&self, db: &std::path::Path) -> Vec<String> {
        let mut a = vec!["--lead".to_string(), self.lead.clone(), "--db".to_string(), db.display().to_string()];
        let flags = [
            ("--goal", &self.goal),
            ("--run", &self.run),
            ("--lead-agent", &self.lead_agent),
            ("--lead-command", &self.lead_command),
            ("--lead-model", &self.lead_model),
        ];
        for (flag, v) in flags {
            if let Some(v) = v {
                // One argument, `--flag=VALUE`: a value starting with `-` stays a value.
                a.push(format!("{flag}={v}"));
            }
        }
        a.extend(self.launch_args.iter().cloned());
        a
    }
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        if ctx.json {
            return Err(CliError::Invalid(
                "orch team prints coord-launch's lines as the team works; --json is not for it \
                 (follow the run with orch status --run RUN --json)"
                    .into(),
            ));
        }
        let launch = sibling("coord-launch");
        let mut p = Process::new(&launch);
        p.args(self.launch_args(&ctx.connect_options().paths.db));
        bins_first(&mut p, &launch)?;
        let cannot = |e: std::io::Error| CliError::Internal(format!("cannot start {}: {e}", launch.display()));
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt as _;
            Err(cannot(p.exec()))
        }
        #[cfg(not(unix))]
        {
            let status = p.status().map_err(cannot)?;
            std::process::exit(status.code().unwrap_or(1));
        }
    }
}
