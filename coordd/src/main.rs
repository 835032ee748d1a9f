//! The `coordd` binary: `serve` runs the daemon in the foreground, `status` and `stop` talk
//! to a running one.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand};
use coord_ipc::paths;
use coord_proto::Exit;
use coord_proto::types::{HelloResult, ShutdownResult};
use coordd::control::{self, ControlError};
use coordd::daemon::{self, DaemonError, ServeOptions};
use coordd::transport::Limits;

/// The per-project coordination daemon for teams of coding agents.
///
/// Exit status of `serve`: 0 after a clean shutdown, 3 when another daemon already serves
/// the database, 1 on any other failure. `status` exits 3 when no daemon is running.
/// `check` exits 50 when the database fails a check.
///
/// One daemon serves one project: it owns `<project>/.agents/coord.db` (SQLite, WAL) and
/// listens on `<project>/.agents/coordd.sock`, speaking JSON-RPC 2.0, one message per line.
/// The project is found by walking up to a `.agents/` folder, else the git root, else the
/// current directory. The `inbox` and `orch` CLIs start it on demand.
#[derive(Parser)]
#[command(name = "coordd", version, about, long_about)]
struct Cli {
    /// Database file (default: <project>/.agents/coord.db); the socket sits beside it.
    #[arg(long, global = true, env = "COORD_DB", value_name = "PATH")]
    db: Option<PathBuf>,
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run the daemon in the foreground, logging to stderr (or --log-file).
    Serve {
        /// Append logs to this file instead of stderr.
        #[arg(long, value_name = "FILE")]
        log_file: Option<PathBuf>,
        /// Print `ready <socket>` on stdout once accepting connections (for launchers).
        #[arg(long)]
        notify_ready: bool,
        /// How long an unfinished request line may wait for its next byte before it is
        /// discarded (e.g. `30s`, `500ms`).
        #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = humantime::parse_duration)]
        partial_line_timeout: std::time::Duration,
        /// The store: `sqlite` (the default: <project>/.agents/coord.db) or a PostgreSQL URL
        /// shared by one daemon per host, e.g. postgres://coord@db.internal/team or
        /// postgres:///team?host=/run/postgresql. Recorded in .agents/coordd.json, so later
        /// auto-started daemons use it too. Without it: $COORD_STORE_URL, then the
        /// recorded store, then SQLite.
        #[arg(long, value_name = "URL")]
        store: Option<String>,
    },
    /// Copy this project's SQLite history into PostgreSQL, verify it, and switch the
    /// project to it.
    ///
    /// Stop the daemon first (`coordd stop`). Everything is copied (threads, messages,
    /// events with their ids, runs, tasks, attempts, agents, mail, reservations, …) in one
    /// transaction, then verified table by table (row counts and a hash of every row)
    /// before it commits: an interrupted copy leaves nothing behind, so run it again. A
    /// finished copy is only verified again. The SQLite file is left as it was.
    ///
    /// Example: coordd migrate --to postgres://coord@db.internal/team
    Migrate {
        /// The target PostgreSQL URL (an empty database or schema, or this copy of it).
        #[arg(long, value_name = "URL")]
        to: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Report version, protocol version, pid, socket, database and uptime.
    Status {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Verify the database without changing it (a daemon may be serving it): SQLite's
    /// integrity and foreign-key checks, event ids from 1 without a gap, no lease or
    /// message without its thread. Exits 0 when all hold, 50 when one does not.
    ///
    /// Example: `coordd check --json`
    Check {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Stop the running daemon and wait until it has exited.
    Stop {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let paths = paths::resolve(cli.db.as_deref(), &std::env::current_dir().unwrap_or_else(|_| ".".into()));
    let result = match cli.command {
        Cmd::Serve { log_file, notify_ready, partial_line_timeout, store } => {
            let limits = Limits::with_timeout(partial_line_timeout);
            serve(ServeOptions { paths, notify_ready, store, limits }, log_file)
        }
        Cmd::Migrate { to, json } => migrate(paths, &to, json),
        Cmd::Status { json } => runtime().and_then(|rt| rt.block_on(status(paths, json))),
        Cmd::Stop { json } => runtime().and_then(|rt| rt.block_on(stop(paths, json))),
        Cmd::Check { json } => check(&paths, json),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("coordd: {e:#}");
            Exit::Failure.into()
        }
    }
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread().enable_all().build().context("cannot start the async runtime")
}

fn serve(opts: ServeOptions, log_file: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    init_tracing(log_file.as_deref())?;
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

fn init_tracing(log_file: Option<&std::path::Path>) -> anyhow::Result<()> {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_env("COORDD_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter);
    match log_file {
        Some(path) => {
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .with_context(|| format!("cannot open log file {}", path.display()))?;
            builder.with_ansi(false).with_writer(std::sync::Mutex::new(file)).init();
        }
        None => builder.with_writer(std::io::stderr).init(),
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
        println!("  last event  {}", h.last_event_id);
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
    let exited =
        tokio::task::spawn_blocking(move || coordd::lockfile::wait_released(&lock, std::time::Duration::from_secs(30)))
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
