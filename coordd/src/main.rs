//! The `coordd` binary: `serve` runs the daemon in the foreground; `status`, `stop` and
//! `list` talk to running ones.

mod list;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use coord_ipc::paths;
use coord_proto::Exit;
use coord_proto::types::{HelloResult, ShutdownResult};
use coordd::control::{self, ControlError};
use coordd::daemon::{self, DaemonError, ServeOptions};
use coordd::transport::Limits;

/// The per-project coordination daemon for teams of coding agents.
///
/// One daemon serves one project: it owns `<project>/.agents/coord.db` (SQLite, WAL) and
/// listens on `<project>/.agents/coordd.sock`, speaking JSON-RPC 2.0, one message per line.
/// The project is found by walking up to a `.agents/` folder, else the git root, else the
/// current directory. The `inbox` and `orch` CLIs start it on demand (and say so on stderr).
///
/// Exit status: 0 ok; 3 `serve` when another daemon already serves the database (or
/// `migrate` while one runs), `status` when none runs; 50 `check` when the database fails
/// a check; 30 a usage error; 1 any other failure.
#[derive(Parser)]
#[command(name = "coordd", version, about, long_about, after_help = EXAMPLES)]
struct Cli {
    /// Database file (default: <project>/.agents/coord.db); the socket sits beside it.
    #[arg(long, global = true, env = "COORD_DB", value_name = "PATH")]
    db: Option<PathBuf>,
    /// Print JSON instead of text (status, stop, list, check, migrate; a usage error prints an
    /// envelope).
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Cmd,
}

const EXAMPLES: &str = "\
Examples:
  coordd status                      # is this project's daemon running?
  coordd --json list                 # every daemon of this user: project, pid, uptime, clients
  coordd stop                        # stop it (a wait that is still running starts it again)
  coordd serve --idle-timeout 3600   # in the foreground; stop after an idle hour";

#[derive(Subcommand)]
enum Cmd {
    /// Run the daemon in the foreground, logging to stderr (or --log-file).
    #[command(after_help = "Example:\n  coordd serve --log-file /tmp/coordd.log --idle-timeout 600")]
    Serve {
        /// Append logs to this file instead of stderr.
        #[arg(long, value_name = "FILE")]
        log_file: Option<PathBuf>,
        /// Print `ready <socket>` on stdout once accepting connections (for launchers).
        #[arg(long)]
        notify_ready: bool,
        /// Windows: set this named event once accepting connections (what auto-start waits
        /// on there: it starts the daemon detached, with no inherited pipe to print on).
        #[arg(long, value_name = "NAME")]
        ready_event: Option<String>,
        /// Stop after this many seconds without calls, unless a subscription (a wait) or a
        /// live lease keeps it busy (default: never; also COORDD_IDLE_TIMEOUT).
        #[arg(long, value_name = "SECONDS", env = "COORDD_IDLE_TIMEOUT",
              value_parser = clap::value_parser!(u64).range(1..))]
        idle_timeout: Option<u64>,
        /// How long an unfinished request line may wait for its next byte before it is
        /// discarded (e.g. `30s`, `500ms`).
        #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = humantime::parse_duration)]
        partial_line_timeout: std::time::Duration,
        /// MiB of output all connections together may have queued for writing; past it, the
        /// connections that are not reading (holding the most) are closed.
        #[arg(long, value_name = "MIB", default_value_t = (coordd::shed::OUTPUT_BUDGET / (1024 * 1024)) as u64,
              value_parser = clap::value_parser!(u64).range(1..=1_048_576))]
        output_budget_mib: u64,
        /// The store: `sqlite` (the default: <project>/.agents/coord.db) or a PostgreSQL URL
        /// shared by one daemon per host, e.g. postgres://coord@db.internal/team or
        /// postgres:///team?host=/run/postgresql. Recorded in .agents/coordd.json, so later
        /// auto-started daemons use it too. Without it: $COORD_STORE_URL, then the
        /// recorded store, then SQLite.
        #[arg(long, value_name = "URL")]
        store: Option<String>,
        /// Let the dashboard's page write as any agent and change the permission policy. By
        /// default the page acts only as its overseer (a person: `orch dashboard --as NAME`,
        /// default `overseer`). Also COORDD_DASHBOARD_ACTS_AS_ANYONE=1.
        #[arg(long, env = "COORDD_DASHBOARD_ACTS_AS_ANYONE")]
        dashboard_acts_as_anyone: bool,
    },
    /// Copy this project's SQLite history into PostgreSQL, verify it, and switch the
    /// project to it.
    ///
    /// Stop the daemon first (`coordd stop`). Everything is copied (threads, messages,
    /// events with their ids, runs, tasks, attempts, agents, mail, reservations, …) in one
    /// transaction, then verified table by table (row counts and a hash of every row)
    /// before it commits: an interrupted copy leaves nothing behind, so run it again. A
    /// finished copy is only verified again. The SQLite file is left as it was.
    #[command(after_help = "Example:\n  coordd migrate --to postgres://coord@db.internal/team")]
    Migrate {
        /// The target PostgreSQL URL (an empty database or schema, or this copy of it).
        #[arg(long, value_name = "URL")]
        to: String,
    },
    /// Report version, protocol version, pid, socket, database, uptime and clients.
    #[command(after_help = "Example:\n  coordd status --json")]
    Status,
    /// Verify the database without changing it (a daemon may be serving it): SQLite's
    /// integrity and foreign-key checks, event ids from 1 without a gap, no lease or
    /// message without its thread. Exits 0 when all hold, 50 when one does not.
    #[command(after_help = "Example:\n  coordd check --json")]
    Check,
    /// Stop the running daemon and wait until it has exited.
    #[command(after_help = "Example:\n  coordd stop")]
    Stop,
    /// The daemons running for this user: project, pid, uptime, clients.
    #[command(after_help = "Example:\n  coordd list")]
    List,
}

impl Cmd {
    fn name(&self) -> &'static str {
        match self {
            Cmd::Serve { .. } => "serve",
            Cmd::Migrate { .. } => "migrate",
            Cmd::Status => "status",
            Cmd::Check => "check",
            Cmd::Stop => "stop",
            Cmd::List => "list",
        }
    }
}

/// Is `--json` on the command line (before a `--`)? Known before parsing succeeds, so a
/// usage error can still answer in JSON.
fn json_requested() -> bool {
    std::env::args().skip(1).take_while(|a| a != "--").any(|a| a == "--json")
}

/// A usage error: clap's message on stderr, or with `--json` an envelope on stdout; exit 30.
/// Help and version succeed.
fn usage(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = e.print();
        return Exit::Ok.into();
    }
    if json_requested() {
        let message = e.render().to_string();
        let message = message.trim().trim_start_matches("error: ").lines().next().unwrap_or_default().to_string();
        println!(
            "{}",
            serde_json::json!({"ok": false, "command": "", "error": {"code": "invalid_args", "message": message}})
        );
    } else {
        let _ = e.print();
    }
    Exit::Invalid.into()
}

fn main() -> ExitCode {
    let cli = match Cli::command().try_get_matches().and_then(|m| Cli::from_arg_matches(&m)) {
        Ok(c) => c,
        Err(e) => return usage(e),
    };
    let paths = paths::resolve(cli.db.as_deref(), &std::env::current_dir().unwrap_or_else(|_| ".".into()));
    let json = cli.json;
    let command = cli.command.name();
    #[cfg(unix)]
    if !matches!(cli.command, Cmd::Serve { .. }) {
        // `coordd status | head -1` ends quietly. (Never for `serve`: a client that hangs
        // up must not kill the daemon.)
        // SAFETY: setting a signal's disposition to SIG_DFL before any thread exists has
        // no preconditions.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
    }
    let result = match cli.command {
        Cmd::Serve {
            log_file,
            notify_ready,
            ready_event,
            partial_line_timeout,
            output_budget_mib,
            store,
            idle_timeout,
            dashboard_acts_as_anyone,
        } => {
            if ready_event.is_some() && !cfg!(windows) {
                return usage(clap::Error::raw(
                    clap::error::ErrorKind::ArgumentConflict,
                    "--ready-event names a Windows event; use --notify-ready elsewhere\n",
                ));
            }
            let limits =
                Limits::with_timeout(partial_line_timeout).with_output_budget(output_budget_mib as usize * 1024 * 1024);
            let idle_timeout = idle_timeout.map(Duration::from_secs);
            let opts = ServeOptions {
                paths,
                notify_ready,
                ready_event,
                store,
                limits,
                idle_timeout,
                dashboard_anyone: dashboard_acts_as_anyone,
            };
            serve(opts, log_file)
        }
        Cmd::Migrate { to } => migrate(paths, &to, json),
        Cmd::Status => runtime().and_then(|rt| rt.block_on(status(paths, json))),
        Cmd::Stop => runtime().and_then(|rt| rt.block_on(stop(paths, json))),
        Cmd::Check => check(&paths, json),
        Cmd::List => runtime().and_then(|rt| rt.block_on(list::run(json))),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            if json {
                let error = serde_json::json!({"code": "internal", "message": format!("{e:#}")});
                println!("{}", serde_json::json!({"ok": false, "command": command, "error": error}));
            } else {
                eprintln!("coordd: {e:#}");
            }
            Exit::Failure.into()
        }
    }
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread().enable_all().build().context("cannot start the async runtime")
}

fn serve(opts: ServeOptions, log_file: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    init_tracing(log_file.as_deref())?;
    return_large_buffers_to_the_system();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("coordd")
        .build()
        .context("cannot start the async runtime")?;
    match rt.block_on(daemon::serve(opts)) {
        Ok(()) => Ok(Exit::Ok.into()),
        Err(e @ DaemonError::AlreadyRunning { .. }) => {
            tracing::error!("{e}");
            eprintln!("coordd: {e}");
            Ok(Exit::DaemonState.into())
        }
        Err(e) => {
            tracing::error!("{e}");
            Err(e.into())
        }
    }
}

/// glibc's malloc raises its mmap threshold each time a large block is freed, after which
/// multi-MB buffers (a 5 MB message, and its copies for every subscriber) come from the
/// heap and stay in the daemon's resident size long after they are freed. A fixed 1 MiB
/// threshold keeps such buffers in their own mappings, given back the moment they are
/// freed, so the resident size follows what the daemon really holds (docs/performance.md).
fn return_large_buffers_to_the_system() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets a malloc parameter; it is called before any other thread
    // of the daemon exists.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20);
    }
}

fn init_tracing(log_file: Option<&std::path::Path>) -> anyhow::Result<()> {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_env("COORDD_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter);
    match log_file {
        Some(path) => {
            let mut opts = std::fs::OpenOptions::new();
            opts.create(true).append(true);
            #[cfg(unix)]
            {
                // Every message's summary can reach the log: only its owner reads it.
                use std::os::unix::fs::OpenOptionsExt;
                opts.mode(coordd::private::FILE_MODE);
            }
            let file = opts.open(path).with_context(|| format!("cannot open log file {}", path.display()))?;
            builder.with_ansi(false).with_writer(std::sync::Mutex::new(file)).init();
        }
        None => {
            // Colour only on a terminal, and never with NO_COLOR set (https://no-color.org).
            use std::io::IsTerminal;
            let colour = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
            builder.with_ansi(colour).with_writer(std::io::stderr).init()
        }
    }
    Ok(())
}

fn migrate(paths: paths::ProjectPaths, to: &str, json: bool) -> anyhow::Result<ExitCode> {
    use coordd::lockfile::{Acquire, DaemonLock};
    use coordd::store::select::{self, Choice};
    let url = match Choice::parse(to)? {
        Choice::Postgres(url) => url,
        Choice::Sqlite => anyhow::bail!("--to takes a PostgreSQL URL (postgres://…)"),
    };
    if let Some(dir) = paths.lock.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    // Holding the daemon lock: no daemon of this project writes the source meanwhile.
    let _lock = match DaemonLock::try_acquire(&paths.lock)? {
        Acquire::Acquired(l) => l,
        Acquire::Held(info) => {
            let pid = info.map_or("unknown".to_string(), |i| i.pid.to_string());
            eprintln!("coordd: a daemon (pid {pid}) serves this project: stop it first with `coordd stop`");
            return Ok(Exit::DaemonState.into());
        }
    };
    let report = coordd::store::migrate::run(&paths.db, &url)?;
    select::record(&paths.db, &Choice::Postgres(url.clone()))
        .with_context(|| format!("cannot record the store in {}", select::config_path(&paths.db).display()))?;
    let target = coordd::store::postgres::redact(&url);
    if json {
        let mut v = serde_json::to_value(&report)?;
        v["ok"] = true.into();
        v["to"] = target.into();
        v["config"] = select::config_path(&paths.db).display().to_string().into();
        println!("{v}");
    } else {
        let verb = if report.copied { "copied and verified" } else { "already copied; verified again" };
        println!("{} → {target}: {verb}", paths.db.display());
        for t in &report.tables {
            println!("  {:<16} {:>8} rows  {}", t.table, t.rows, t.hash);
        }
        println!("  last event id {}", report.last_event_id);
        println!("The project now uses PostgreSQL ({}).", select::config_path(&paths.db).display());
    }
    Ok(Exit::Ok.into())
}

async fn status(paths: paths::ProjectPaths, json: bool) -> anyhow::Result<ExitCode> {
    let h: HelloResult = match control::call(&paths.socket, "system.hello", serde_json::json!({})).await {
        Ok(h) => h,
        Err(ControlError::NotRunning) => {
            if json {
                println!(
                    "{}",
                    serde_json::json!({"ok": true, "running": false, "db": paths.db, "socket": paths.socket})
                );
            } else {
                println!("coordd is not running for {}", paths.db.display());
            }
            return Ok(Exit::DaemonState.into());
        }
        Err(e) => return Err(e.into()),
    };
    let lock = coordd::lockfile::read_info(&paths.lock);
    if json {
        let mut v = serde_json::to_value(&h)?;
        v["ok"] = true.into();
        v["running"] = true.into();
        v["lock_file"] = paths.lock.display().to_string().into();
        v["socket_fallback"] = lock.as_ref().is_some_and(|l| l.socket_fallback).into();
        println!("{v}");
    } else {
        println!("coordd {} (protocol {}) running", h.version, h.protocol_version);
        println!("  pid         {}", h.pid);
        println!("  socket      {}{}", h.socket, if paths.socket_fallback { " (short fallback path)" } else { "" });
        println!("  db          {}", h.db);
        println!("  lock file   {}", paths.lock.display());
        println!("  started     {}", h.started_at);
        println!("  uptime      {}", humantime::format_duration(std::time::Duration::from_secs(h.uptime_ms / 1000)));
        println!("  clients     {} connection(s), {} subscription(s)", h.connections, h.subscriptions);
        println!("  last event  {}", h.last_event_id);
        if let Some(ro) = &h.read_only {
            println!("  READ-ONLY   since {} ({}): {}", ro.since, ro.reason, ro.message);
            println!("              writes are refused (read_only) until space returns; the next write then reopens");
        }
    }
    Ok(Exit::Ok.into())
}

fn check(paths: &paths::ProjectPaths, json: bool) -> anyhow::Result<ExitCode> {
    let r = coordd::store::sqlite::check::check(&paths.db).map_err(|e| anyhow::anyhow!(e.to_app().message))?;
    if json {
        println!("{}", serde_json::to_value(&r)?);
    } else {
        println!("{} {}", if r.ok { "ok" } else { "PROBLEMS in" }, r.db);
        println!("  schema version   {}", r.schema_version);
        println!("  integrity        {}", r.integrity.join("; "));
        println!("  foreign keys     {} violation(s)", r.foreign_key_violations);
        let (first, last) = (r.events.first.unwrap_or(0), r.events.last.unwrap_or(0));
        println!("  events           {} ({first}..{last}), {} missing id(s)", r.events.count, r.events.gaps);
        println!("  orphans          {} lease(s), {} message(s)", r.orphan_leases, r.orphan_messages);
    }
    Ok(if r.ok { Exit::Ok } else { Exit::Internal }.into())
}

async fn stop(paths: paths::ProjectPaths, json: bool) -> anyhow::Result<ExitCode> {
    let reason = serde_json::json!({"reason": "coordd stop"});
    let pid = match control::call::<ShutdownResult>(&paths.socket, "system.shutdown", reason).await {
        Ok(r) => r.pid,
        Err(ControlError::NotRunning) => {
            if json {
                println!("{}", serde_json::json!({"ok": true, "stopped": false, "running": false}));
            } else {
                println!("coordd is not running for {}", paths.db.display());
            }
            return Ok(Exit::Ok.into());
        }
        Err(e) => return Err(e.into()),
    };
    let lock = paths.lock.clone();
    let exited = tokio::task::spawn_blocking(move || {
        coordd::lockfile::wait_exited(pid, &lock, std::time::Duration::from_secs(30))
    })
    .await??;
    if !exited {
        anyhow::bail!("coordd (pid {pid}) did not exit within 30 s");
    }
    if json {
        println!("{}", serde_json::json!({"ok": true, "stopped": true, "pid": pid}));
    } else {
        println!("coordd (pid {pid}) stopped");
    }
    Ok(Exit::Ok.into())
}
