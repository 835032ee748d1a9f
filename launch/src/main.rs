//! `coord-launch`: the launch bridge. It follows a run's dispatches and starts one worker
//! session per dispatched attempt (Claude Code, Codex, or any command), watches it, and
//! stops it on cancel, reassign or shutdown. It speaks only the public protocol, through
//! `coord-client`; what it records about sessions goes through `launch.*`.

mod bridge;
mod client;
mod config;
mod process;
mod rpc;
mod session;
mod tmux;
mod verifier;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use coord_client::ConnectOptions;

use bridge::{Bridge, Finish, Options};
use config::{ClientKind, Layer};

const EXAMPLES: &str = "\
Examples:
  coord-launch --run R1 --command './work.sh'            # any program, per attempt
  coord-launch --run R1 --client claude --dispatch        # Claude Code; dispatch ready tasks too
  coord-launch --run R1 --client codex --max-sessions 3 --until-done
  coord-launch --run R1 --tmux                            # watch: tmux attach -t coord-R1
  coord-launch --run R1 --command './work.sh' --dispatch --until-done --merge-queue

Each session runs in the attempt's worktree (a scratch directory under .agents/launch/ for
thread-only tasks) with COORD_AGENT, COORD_RUN, COORD_TASK, COORD_THREAD, COORD_DB and
COORD_WORKTREE set, and its output in .agents/launch/<run>/logs/<task>-a<attempt>.log.
Per-agent clients and models: .agents/launch.toml (see docs/orch.md, \"Running workers\").
--merge-queue also runs the run's verifier (orch merge-queue --run <run> --until-done; its
output in .agents/merge-queue/<run>/verifier.log).

Exit status: 0 the run finished done (--until-done) ; 1 it ended failed ; 2 it was
cancelled ; 3 the bridge could not go on (daemon unreachable, bad config) ; 30 bad arguments.";

/// The launch bridge: start, watch and stop the worker sessions of a run.
#[derive(Parser, Debug)]
#[command(name = "coord-launch", version, after_help = EXAMPLES)]
struct Args {
    /// The run to follow.
    #[arg(long)]
    run: String,
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
    /// Seconds between SIGTERM and SIGKILL when stopping a session.
    #[arg(long, default_value_t = 10)]
    grace_seconds: u64,
    /// Seconds a worker has to answer a shutdown request before its session is stopped.
    #[arg(long, default_value_t = 60)]
    shutdown_grace_seconds: u64,
    /// The database (default: the project around the current directory).
    #[arg(long, env = "COORD_DB")]
    db: Option<PathBuf>,
}

fn main() -> ExitCode {
    let args = match Args::try_parse() {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 30 } else { 0 });
        }
    };
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime");
    match rt.block_on(run(args)) {
        Ok(Some(Finish::Done)) | Ok(None) => ExitCode::SUCCESS,
        Ok(Some(Finish::Failed)) => ExitCode::from(1),
        Ok(Some(Finish::Cancelled)) => ExitCode::from(2),
        Err(e) => {
            eprintln!("coord-launch: {e:#}");
            ExitCode::from(3)
        }
    }
}

async fn run(a: Args) -> anyhow::Result<Option<Finish>> {
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
        ..Layer::default()
    };
    let inbox = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(|d| d.join("inbox")))
        .filter(|p| p.is_file())
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "inbox".into());
    let verifier = if a.merge_queue { Some(verifier::Verifier::start(&a.run, &db, &agents_dir)?) } else { None };
    let o = Options {
        run_id: a.run,
        db,
        agents_dir,
        dispatch: a.dispatch,
        max_sessions: a.max_sessions as usize,
        until_done: a.until_done,
        tmux: a.tmux,
        flags,
        config,
        grace: Duration::from_secs(a.grace_seconds),
        shutdown_grace: Duration::from_secs(a.shutdown_grace_seconds),
        inbox,
        host: host_name(),
        connect,
    };
    let ended = bridged(o).await;
    // The run is done: the verifier merges what is queued and ends by itself.
    if let Some(v) = verifier {
        match ended {
            Ok(Some(Finish::Done)) => v.finish().await,
            _ => v.stop().await,
        };
    }
    ended
}

async fn bridged(o: Options) -> anyhow::Result<Option<Finish>> {
    let bridge = Bridge::new(o).await?;
    let stop = async {
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
        Ok::<_, std::io::Error>(())
    };
    tokio::select! {
        r = bridge.run() => Ok(r?),
        // Sessions keep running; a bridge started again re-attaches to them.
        _ = stop => {
            eprintln!("coord-launch: stopping; running sessions go on and are re-attached by the next coord-launch");
            Ok(None)
        }
    }
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
