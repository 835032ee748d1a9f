//! `coord-launch`: the launch bridge. It follows a run's dispatches and starts one worker
//! session per dispatched attempt (Claude Code, Codex, or any command), watches it, and
//! stops it on cancel, reassign or shutdown. It speaks only the public protocol, through
//! `coord-client`; what it records about sessions goes through `launch.*`.

mod bridge;
mod budget;
mod claude_log;
mod client;
mod codex_log;
mod config;
mod feed;
mod gate;
mod lifecycle;
mod limits;
mod parked;
mod process;
mod rpc;
mod say;
mod session;
mod shutdown;
mod single;
mod tmux;
mod verifier;

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
  coord-launch --run R1 --command './work.sh' --dispatch --until-done --merge-queue
  coord-launch --run R1 --client claude --live            # answers and mail reach the running session
  coord-launch --run R1 --dispatch --max-cost-usd 20      # start nothing more once $20 are spent

Each session runs in the attempt's worktree (a scratch directory under .agents/launch/ for
thread-only tasks) with COORD_SESSION, COORD_AGENT, COORD_RUN, COORD_TASK, COORD_THREAD,
COORD_DB and COORD_WORKTREE set (and, for --command, the prompt in COORD_PROMPT), and its
output in .agents/launch/<run>/logs/<task>-a<attempt>.log. The bridge prints a line per
session start, end and merge and the run's end (also in .agents/launch/<run>/bridge.log).
Per-agent clients and models: .agents/launch.toml (see docs/orch.md, \"Running workers\").
--merge-queue also runs the run's verifier (orch merge-queue --run <run> --until-done; its
output in .agents/merge-queue/<run>/verifier.log).";

/// The launch bridge: start, watch and stop the worker sessions of a run.
#[derive(Parser, Debug)]
#[command(name = "coord-launch", version, after_help = after_help())]
struct Args {
    /// The run to follow.
    #[arg(long, required_unless_present_any = ["codex_log", "claude_log"])]
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
    /// Also run the run's merge queue verifier (`orch merge-queue --run RUN --until-done`):
    /// each done task is verified with the run's verify command before it merges. With
    /// --until-done, the bridge exits once it has merged what is queued.
    #[arg(long)]
    merge_queue: bool,
    /// Run each session in a window of the tmux session `coord-<run>`.
    #[arg(long)]
    tmux: bool,
    /// Stop a session after this many minutes (its attempt fails); fractions allowed (0.5: 30 s).
    #[arg(long, value_parser = |s: &str| s.parse::<f64>().map_err(|e| e.to_string()).and_then(config::minutes))]
    wall_clock_minutes: Option<f64>,
    /// Live sessions (command and claude clients): the session's input stays open, and
    /// what is committed for its worker (answers, mail, shutdown requests) is written into
    /// it as new turns; the command client reads them as JSON lines (docs/launch.md).
    #[arg(long)]
    live: bool,
    /// The run's budget in dollars (`launch.budgetSet`): once the run's sessions cost this
    /// much, no session is started or dispatched any more.
    #[arg(long, value_parser = limits::dollars)]
    max_cost_usd: Option<f64>,
    /// The run's budget in tokens (input, output, cache reads and writes).
    #[arg(long, value_parser = clap::value_parser!(i64).range(1..))]
    max_tokens: Option<i64>,
    /// At the run's budget, also stop the running sessions (their attempts fail) instead
    /// of letting them finish.
    #[arg(long)]
    hard: bool,
    /// Seconds between SIGTERM and SIGKILL when stopping a session.
    #[arg(long, default_value_t = 10)]
    grace_seconds: u64,
    /// Seconds a worker has to answer a shutdown request before its session is stopped.
    #[arg(long, default_value_t = 60)]
    shutdown_grace_seconds: u64,
    /// The database (default: the project around the current directory).
    #[arg(long, env = "COORD_DB")]
    db: Option<PathBuf>,
    /// This host's name: code tasks are launched only by the bridge on the host whose daemon
    /// made their worktree (default: the kernel's host name, as coordd's). One bridge per run
    /// and host: a second one is refused (exit 5).
    #[arg(long, env = "COORD_HOST")]
    host: Option<String>,
    /// Print nothing but warnings and errors (the lines still go to the bridge log).
    #[arg(long)]
    quiet: bool,
    /// Filter a Codex session's `--json` events on stdin into readable log lines (what
    /// the bridge runs for each Codex session).
    #[arg(long, hide = true)]
    codex_log: bool,
    /// Filter a live Claude Code session's stream-json output on stdin into readable log
    /// lines, keeping the raw lines in this file.
    #[arg(long, hide = true, value_name = "RAW")]
    claude_log: Option<PathBuf>,
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
            if e.is::<single::Taken>() { LaunchExit::AlreadyRunning } else { LaunchExit::CannotGoOn }
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
    if let Some(raw) = &args.claude_log {
        return match claude_log::run(raw) {
            Ok(()) => LaunchExit::Done.into(),
            Err(e) => exit_of(Err(e.into())).into(),
        };
    }
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
        live: a.live.then_some(true),
        ..Layer::default()
    };
    let me = std::env::current_exe().ok();
    let inbox = me
        .as_ref()
        .and_then(|e| e.parent().map(|d| d.join("inbox")))
        .filter(|p| p.is_file())
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "inbox".into());
    let run_id = a.run.unwrap_or_default();
    let host = a.host.map(|h| h.trim().to_string()).filter(|h| !h.is_empty()).unwrap_or_else(host_name);
    let _one_per_host = single::take(&agents_dir.join("launch").join(&run_id), &run_id, &host)?;
    let verifier = if a.merge_queue { Some(verifier::Verifier::start(&run_id, &db, &agents_dir)?) } else { None };
    let o = Options {
        run_id,
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
        host,
        limits: limits::RunLimits { max_cost_usd: a.max_cost_usd, max_tokens: a.max_tokens },
        hard: a.hard,
        connect,
    };
    let ended = bridged(o).await;
    // The run is done: the verifier merges what is queued and ends by itself.
    if let Some(v) = verifier {
        match &ended {
            Ok(Outcome::Finished(Finish::Done)) => v.finish().await,
            _ => v.stop().await,
        };
    }
    ended
}

async fn bridged(o: Options) -> anyhow::Result<Outcome> {
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

/// This host's name, as coordd computes it without `COORD_HOST` (which `--host` reads):
/// the kernel's host name.
fn host_name() -> String {
    let from_kernel = || std::fs::read_to_string("/proc/sys/kernel/hostname").ok();
    [from_kernel(), std::env::var("HOSTNAME").ok()]
        .into_iter()
        .flatten()
        .map(|s| s.trim().to_string())
        .find(|s| !s.is_empty())
        .unwrap_or_else(|| "localhost".into())
}
