//! `coord-launch`: the launch bridge. It follows a run's dispatches and starts one worker
//! session per dispatched attempt (Claude Code, Codex, or any command), watches it, and
//! stops it on cancel, reassign or shutdown. It speaks only the public protocol, through
//! `coord-client`; what it records about sessions goes through `launch.*`.

mod bridge;
mod budget;
mod claude_log;
mod client;
mod clients;
mod codex_live;
mod codex_log;
mod command_log;
mod config;
mod credentials;
mod feed;
mod gate;
mod gemini_gate;
mod gemini_live;
mod lead;
mod lead_attention;
mod lead_prompt;
mod lifecycle;
mod limits;
mod live_io;
mod live_tail;
mod opencode_http;
mod opencode_live;
mod parked;
mod process;
mod reuse;
mod rpc;
mod sandbox;
mod say;
mod session;
mod shutdown;
mod single;
mod tmux;
mod transcript;
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
  coord-launch --run R1 --client opencode --model mock/mock-model   # opencode, one-shot
  coord-launch --run R1 --client gemini --model gemini-2.5-flash    # Gemini CLI, one-shot
  coord-launch --run R1 --tmux                            # watch: tmux attach -t coord-R1
  coord-launch --run R1 --command './work.sh' --dispatch --until-done --merge-queue
  coord-launch --run R1 --client claude --live            # answers and mail reach the running session
  coord-launch --run R1 --client codex --live             # the same through `codex app-server`
  coord-launch --run R1 --client gemini --live            # the same through `gemini --acp`
  coord-launch --run R1 --client claude --reuse-sessions --dispatch  # an agent's next task: a new turn, same session
  coord-launch --run R1 --dispatch --max-cost-usd 20      # start nothing more once $20 are spent
  coord-launch --lead claude --goal 'Add a login page'    # an agent leads: plans, dispatches, merges

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
    #[arg(long, required_unless_present_any = ["codex_log", "claude_log", "codex_live", "live_log", "gemini_live", "opencode_live", "command_log", "client_log", "lead"])]
    run: Option<String>,
    /// An agent leads the run (docs/orch.md, "Letting an agent lead"): the run is created
    /// from --goal (or --run taken), the lead session started in the main checkout with
    /// `orch mcp`, its own credentials and the project's lead role, its workers started for
    /// its dispatches; it is restarted if it ends before the run, and the bridge exits when
    /// the run is over.
    #[arg(long, value_parser = ["claude", "codex", "command"], value_name = "CLIENT")]
    lead: Option<String>,
    /// The run's goal, with --lead (needed unless --run names an existing run).
    #[arg(long, requires = "lead")]
    goal: Option<String>,
    /// The lead agent's name, with --lead.
    #[arg(long, requires = "lead", default_value = "lead")]
    lead_agent: String,
    /// The shell command of a `command` lead (its turns on stdin, as docs/launch.md says).
    #[arg(long, requires = "lead")]
    lead_command: Option<String>,
    /// The model of a claude or codex lead.
    #[arg(long, requires = "lead")]
    lead_model: Option<String>,
    /// Which client runs sessions (default: `command` when --command is given, else what
    /// .agents/launch.toml says, else `claude`). With --live, opencode runs `opencode
    /// serve` and gemini `gemini --acp`, each under a driver.
    #[arg(long, value_parser = ["claude", "codex", "command", "opencode", "gemini"])]
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
    /// Live sessions: the session's input stays open, and what is committed for its worker
    /// (answers, mail, shutdown requests) is written into it as new turns; the command
    /// client reads them as JSON lines, Codex runs as `codex app-server`
    /// (docs/live-sessions.md).
    #[arg(long)]
    live: bool,
    /// Reuse live sessions (implies --live): when an agent's attempt is done and its next
    /// task is ready where the session can work (a thread task, or the next task on the
    /// same worktree), the running session gets it as a new turn instead of a new process
    /// starting from nothing (`reuse_sessions = true` in .agents/launch.toml).
    #[arg(long)]
    reuse_sessions: bool,
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
    /// Seconds an ended session's output gets to reach its log before its end is recorded
    /// with the log's last lines (a process its stop could not reach may hold it open).
    #[arg(long, default_value_t = 10)]
    output_wait_seconds: u64,
    /// The database (default: the project around the current directory).
    #[arg(long, env = "COORD_DB")]
    db: Option<PathBuf>,
    /// Run each claude or codex session's shell in its client's sandbox: it cannot read
    /// .agents/ (the database, the dashboard's token, the logs) but reaches the daemon's
    /// socket (needs bubblewrap; Claude Code also socat; not for command sessions).
    #[arg(long)]
    sandbox: bool,
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
    /// (With RAW: also keep the events as they are in that file.)
    #[arg(long, hide = true, num_args = 0..=1, value_name = "RAW")]
    codex_log: Option<Option<PathBuf>>,
    /// Filter a live Claude Code session's stream-json output on stdin into readable log
    /// lines, keeping the raw lines in this file.
    #[arg(long, hide = true, value_name = "RAW")]
    claude_log: Option<PathBuf>,
    /// Filter a live `command` session's output on stdin into readable log lines (its
    /// `text`, `tool`, `result`, `error` and `usage` JSON lines), keeping the raw lines in
    /// this file.
    #[arg(long, hide = true, value_name = "RAW")]
    command_log: Option<PathBuf>,
    /// Drive a live Codex session: run the `codex app-server` command after `--`, write
    /// the feed's turns on stdin into its thread, keep its raw output in this file and
    /// write readable log lines (what the bridge runs for each live Codex session).
    #[arg(long, hide = true, value_name = "RAW", requires = "codex_command")]
    codex_live: Option<PathBuf>,
    /// Drive a live opencode session: run the `opencode serve` command after `--`, write the
    /// feed's turns on stdin into one of its sessions, keep its events in this file and write
    /// readable log lines (what the bridge runs for each live opencode session).
    #[arg(long, hide = true, value_name = "RAW", requires = "codex_command", conflicts_with = "codex_live")]
    opencode_live: Option<PathBuf>,
    /// With --codex-live, --opencode-live or --gemini-live: the `codex app-server`,
    /// `opencode serve` or `gemini --acp` command.
    #[arg(last = true, hide = true)]
    codex_command: Vec<String>,
    /// Filter a live driver's output (--codex-live, --opencode-live, --gemini-live) on stdin into the log,
    /// recording the usage lines it writes (what the bridge runs for each live session
    /// behind a driver).
    #[arg(long, hide = true)]
    live_log: bool,
    /// Drive a live Gemini CLI session: run the `gemini --acp` command after `--`, write
    /// the feed's turns on stdin into its session as prompts, keep its raw output in this
    /// file and write readable log lines (what the bridge runs for each live Gemini session).
    #[arg(long, hide = true, value_name = "RAW", requires_all = ["codex_command", "gemini_inbox"])]
    gemini_live: Option<PathBuf>,
    /// With --gemini-live: the `inbox` that runs the permission gate.
    #[arg(long, hide = true, value_name = "INBOX")]
    gemini_inbox: Option<String>,
    /// Filter an opencode or Gemini CLI session's JSON stream on stdin into readable log
    /// lines, recording its usage.
    #[arg(long, hide = true, value_name = "CLIENT")]
    client_log: Option<String>,
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
    if let Some(raw) = &args.command_log {
        return match command_log::run(raw) {
            Ok(()) => LaunchExit::Done.into(),
            Err(e) => exit_of(Err(e.into())).into(),
        };
    }
    if let Some(kind) = &args.client_log {
        return match clients::log(kind) {
            Ok(()) => LaunchExit::Done.into(),
            Err(e) => exit_of(Err(e.into())).into(),
        };
    }
    if args.live_log {
        return match live_io::log() {
            Ok(()) => LaunchExit::Done.into(),
            Err(e) => exit_of(Err(e.into())).into(),
        };
    }
    type Driver = fn(&std::path::Path, &[String]) -> std::io::Result<i32>;
    let driver: Option<(&str, &PathBuf, Driver)> = match (&args.codex_live, &args.opencode_live) {
        (Some(raw), _) => Some(("--codex-live", raw, codex_live::run)),
        (_, Some(raw)) => Some(("--opencode-live", raw, opencode_live::run)),
        _ => None,
    };
    if let Some((flag, raw, run)) = driver {
        // The session's own status (the client's), not one of the bridge's.
        return match run(raw, &args.codex_command) {
            Ok(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
            Err(e) => {
                eprintln!("coord-launch {flag}: {e}");
                ExitCode::from(1)
            }
        };
    }
    if let (Some(raw), Some(inbox)) = (&args.gemini_live, &args.gemini_inbox) {
        // The session's own status (Gemini's), not one of the bridge's.
        return match gemini_live::run(raw, inbox, &args.codex_command) {
            Ok(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
            Err(e) => {
                eprintln!("coord-launch --gemini-live: {e}");
                ExitCode::from(1)
            }
        };
    }
    if let Some(raw) = &args.codex_log {
        return match codex_log::run(raw.as_deref()) {
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
        live: (a.live || a.reuse_sessions).then_some(true),
        reuse_sessions: a.reuse_sessions.then_some(true),
        ..Layer::default()
    };
    let me = std::env::current_exe().ok();
    let me_dir = me.clone();
    let inbox = me
        .as_ref()
        .and_then(|e| e.parent().map(|d| d.join("inbox")))
        .filter(|p| p.is_file())
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "inbox".into());
    let lead = match a.lead.as_deref() {
        Some(kind) => {
            let ask = lead::Ask {
                kind: kind.parse().map_err(anyhow::Error::msg)?,
                goal: a.goal.clone(),
                run: a.run.clone(),
                agent: a.lead_agent.clone(),
                flags: Layer { command: a.lead_command.clone(), model: a.lead_model.clone(), ..Layer::default() },
            };
            let (run_id, goal, secret) = lead::prepare(&connect, &ask).await?;
            Some((ask, run_id, goal, secret))
        }
        None => None,
    };
    let run_id = lead.as_ref().map(|l| l.1.clone()).or(a.run).unwrap_or_default();
    let host = a.host.map(|h| h.trim().to_string()).filter(|h| !h.is_empty()).unwrap_or_else(host_name);
    let _one_per_host = single::take(&agents_dir.join("launch").join(&run_id), &run_id, &host)?;
    let verifier = if a.merge_queue { Some(verifier::Verifier::start(&run_id, &db, &agents_dir)?) } else { None };
    let o = Options {
        run_id,
        db,
        agents_dir,
        dispatch: a.dispatch,
        max_sessions: a.max_sessions as usize,
        until_done: a.until_done || lead.is_some(),
        tmux: a.tmux,
        quiet: a.quiet,
        flags,
        config,
        grace: Duration::from_secs(a.grace_seconds),
        shutdown_grace: Duration::from_secs(a.shutdown_grace_seconds),
        output_wait: Duration::from_secs(a.output_wait_seconds),
        inbox,
        me: me.map_or_else(|| "coord-launch".into(), |p| p.display().to_string()),
        host,
        limits: limits::RunLimits { max_cost_usd: a.max_cost_usd, max_tokens: a.max_tokens },
        hard: a.hard,
        connect,
    };
    let lead = lead.map(|(ask, run_id, goal, secret)| lead::Lead::new(&o, ask, run_id, goal, secret, me_dir.as_ref()));
    let ended = bridged(o, lead).await;
    // The run is done: the verifier merges what is queued and ends by itself.
    if let Some(v) = verifier {
        match &ended {
            Ok(Outcome::Finished(Finish::Done)) => v.finish().await,
            _ => v.stop().await,
        };
    }
    ended
}

async fn bridged(o: Options, lead: Option<lead::Lead>) -> anyhow::Result<Outcome> {
    // Sessions keep running after a stop; a bridge started again re-attaches to them.
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    let mut int = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())?;
    let stop = async move {
        tokio::select! {
            _ = int.recv() => {}
            _ = term.recv() => {}
        }
    };
    match lead {
        Some(l) => lead::with_bridge(Bridge::new(o).await?, l, stop).await,
        None => Ok(Bridge::new(o).await?.run(stop).await?),
    }
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
