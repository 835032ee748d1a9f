//! The `coordd` binary: `serve` runs the daemon in the foreground; `status`, `stop` and
//! `list` talk to running ones.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use coord_ipc::paths;
use coord_proto::Exit;
use coordd::cli::{self, check, list, migrate, serve, status, stop};
use coordd::daemon::ServeOptions;
use coordd::net::transport::Limits;

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
        #[arg(long, value_name = "MIB", default_value_t = (coordd::net::shed::OUTPUT_BUDGET / (1024 * 1024)) as u64,
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
    let matches = match Cli::command().try_get_matches() {
        Ok(m) => m,
        Err(e) => return usage(e),
    };
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => return usage(e),
    };
    let paths = paths::resolve(cli.db.as_deref(), &std::env::current_dir().unwrap_or_else(|_| ".".into()));
    let json = cli.json;
    let command = matches.subcommand_name().unwrap_or_default();
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
            serve::run(opts, log_file)
        }
        Cmd::Migrate { to } => migrate::run(paths, &to, json),
        Cmd::Status => cli::runtime().and_then(|rt| rt.block_on(status::run(paths, json))),
        Cmd::Stop => cli::runtime().and_then(|rt| rt.block_on(stop::run(paths, json))),
        Cmd::Check => check::run(&paths, json),
        Cmd::List => cli::runtime().and_then(|rt| rt.block_on(list::run(json))),
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
