//! `coord-launch`: the launch bridge. It follows a run's dispatches and starts one worker
//! session per dispatched attempt (Claude Code, Codex, or any command), watches it, and
//! stops it on cancel, reassign or shutdown. It speaks only the public protocol, through
//! `coord-client`; what it records about sessions goes through `launch.*`.

mod bridge;
mod client;
mod codex_log;
mod config;
mod credentials;
mod lifecycle;
mod process;
mod rpc;
mod sandbox;
mod say;
mod session;
mod shutdown;
mod tmux;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use coord_client::ConnectOptions;
use coord_proto::LaunchExit;

use bridge::{Bridge, Finish, Options, Outcome};
use config::{ClientKind, Layer};

const EXAMPLES: &str = "\
Examples:
  coord-launch --run R1 --command './work.sh'            # any program, per attempt
  coord-launch --run R1 --client claude --dispatch        # Claude Code; dispatch ready tasks too
  coord-launch --run R1 --client codex --max-sessions 3 --until-done
  coord-launch --run R1 --tmux                            # watch: tmux attach -t coord-R1

Each session runs in the attempt's worktree (a scratch directory under .agents/launch/ for
thread-only tasks) with COORD_SESSION, COORD_AGENT, COORD_RUN, COORD_TASK, COORD_THREAD,
COORD_DB and COORD_WORKTREE set (and, for --command, the prompt in COORD_PROMPT), and its
output in .agents/launch/<run>/logs/<task>-a<attempt>.log. The bridge prints a line per
session start, end and merge and the run's end (also in .agents/launch/<run>/bridge.log).
Per-agent clients and models: .agents/launch.toml (see docs/orch.md, \"Running workers\").";

/// The launch bridge: start, watch and stop the worker sessions of a run.
#[derive(Parser, Debug)]
#[command(name = "coord-launch", version, after_help = after_help())]
struct Args {
    /// The run to follow.
    #[arg(long, required_unless_present = "codex_log")]
    run: Option<String>,
    /// Which client runs sessions (default: `command` when --command is given, else what
    /// .agents/launch.toml says, else `claude`).
    #[arg(long, value_parser = ["claude", "codex", "command"])]
    client: Option<String>,
    /// The shell command of the `command` client (run with `sh -c` in the session's
    /// directory).
    #[arg(long)]
    command: Option<String>,
    /// The model claude or codex use.
    #[arg(long)]
    model: Option<String>,
    /// Also dispatch ready tasks as they become ready.
    #[arg(long)]
    dispatch: bool,
    /// At most this many sessions at once.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=1000))]
    max_sessions: u32,
    /// Exit when the run finishes: 0 done, 1 failed, 2 cancelled.
    #[arg(long)]
    until_done: bool,
    /// Run each session in a window of the tmux session `coord-<run>`.
    #[arg(long)]
    tmux: bool,
    /// Stop a session after this many minutes (its attempt fails); fractions allowed (0.5: 30 s).
    #[arg(long, value_parser = |s: &str| s.parse::<f64>().map_err(|e| e.to_string()).and_then(config::minutes))]
    wall_clock_minutes: Option<f64>,
    /// Seconds between SIGTERM and SIGKILL when stopping a session.
    #[arg(long, default_value_t = 10)]
    grace_seconds: u64,
    /// Seconds a worker has to answer a shutdown request before its session is stopped.
    #[arg(long, default_value_t = 60)]
    shutdown_grace_seconds: u64,
    /// The database (default: the project around the current directory).
    #[arg(long, env = "COORD_DB")]
    db: Option<PathBuf>,
    /// Run each Claude Code session's shell in Claude Code's sandbox: it cannot read
    /// .agents/ (the database, the dashboard's token, the logs) but reaches the daemon's
    /// socket (needs bubblewrap and socat; claude sessions only).
    #[arg(long)]
    sandbox: bool,
    /// Print nothing but warnings and errors (the lines still go to the bridge log).
    #[arg(long)]
    quiet: bool,
    /// Filter a Codex session's `--json` events on stdin into readable log lines (what
    /// the bridge runs for each Codex session).
    #[arg(long, hide = true)]
    codex_log: bool,
}

/// The examples, then the exit statuses from their one table ([`LaunchExit`]).
fn after_help() -> String {
    let codes: Vec<String> = LaunchExit::ALL.iter().map(|e| format!("  {:<3} {}", e.code(), e.meaning())).collect();
    format!("{EXAMPLES}\n\nExit status:\n{}", codes.join("\n"))
}

/// The one place an outcome becomes an exit status.
fn exit_of(r: anyhow::Result<Outcome>) -> LaunchExit {
    let finish = |f| match f {
        Finish::Done => LaunchExit::Done,
        Finish::Failed => LaunchExit::RunFailed,
        Finish::Cancelled => LaunchExit::RunCancelled,
    };
    match r {
        Ok(Outcome::Finished(f) | Outcome::Stopped(Some(f))) => finish(f),
        Ok(Outcome::Stopped(None)) => LaunchExit::Stopped,
        Err(e) => {
            eprintln!("coord-launch: {e:#}");
            LaunchExit::CannotGoOn
        }
    }
}

fn main() -> ExitCode {
    let args = match Args::try_parse() {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { LaunchExit::Invalid } else { LaunchExit::Done }.into();
        }
    };
    if args.codex_log {
        return match codex_log::run() {
            Ok(()) => LaunchExit::Done.into(),
            Err(e) => exit_of(Err(e.into())).into(),
        };
    }
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime");
    exit_of(rt.block_on(run(args))).into()
}

async fn run(a: Args) -> anyhow::Result<Outcome> {
    let connect = ConnectOptions::for_cwd(a.db.as_deref());
    let db = connect.paths.db.clone();
    let agents_dir = db.parent().map(PathBuf::from).unwrap_or_else(|| PathBuf::from(".agents"));
    let config = config::File::load(&agents_dir.join(config::FILE))?;
    let client: Option<ClientKind> = a.client.as_deref().map(|c| c.parse()).transpose().map_err(anyhow::Error::msg)?;
    let flags = Layer {
        client,
        command: a.command,
        model: a.model,
        wall_clock_minutes: a.wall_clock_minutes,
        sandbox: a.sandbox.then_some(true),
        ..Layer::default()
    };
    let me = std::env::current_exe().ok();
    let inbox = me
        .as_ref()
        .and_then(|e| e.parent().map(|d| d.join("inbox")))
        .filter(|p| p.is_file())
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "inbox".into());
    let o = Options {
        run_id: a.run.unwrap_or_default(),
        db,
        agents_dir,
        dispatch: a.dispatch,
        max_sessions: a.max_sessions as usize,
        until_done: a.until_done,
        tmux: a.tmux,
        quiet: a.quiet,
        flags,
        config,
        grace: Duration::from_secs(a.grace_seconds),
        shutdown_grace: Duration::from_secs(a.shutdown_grace_seconds),
        inbox,
        me: me.map_or_else(|| "coord-launch".into(), |p| p.display().to_string()),
        host: host_name(),
        connect,
    };
    // Sessions keep running after a stop; a bridge started again re-attaches to them.
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    let mut int = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())?;
    let stop = async move {
        tokio::select! {
            _ = int.recv() => {}
            _ = term.recv() => {}
        }
    };
    Ok(Bridge::new(o).await?.run(stop).await?)
}

/// This host's name, as coordd computes it: `COORD_HOST`, else the kernel's host name.
fn host_name() -> String {
    let from_env = std::env::var("COORD_HOST").ok();
    let from_kernel = || std::fs::read_to_string("/proc/sys/kernel/hostname").ok();
    [from_env, from_kernel(), std::env::var("HOSTNAME").ok()]
        .into_iter()
        .flatten()
        .map(|s| s.trim().to_string())
        .find(|s| !s.is_empty())
        .unwrap_or_else(|| "localhost".into())
}
