//! The daemon's life: take the lock, replace a stale socket, bind (mode 0600), open the
//! store, announce readiness, accept connections until SIGTERM/SIGINT or
//! `system.shutdown`, then stop accepting and remove the socket, let connections finish
//! their in-flight calls, and close the store (drain the writer, truncate the WAL).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use coord_ipc::ProjectPaths;
use coord_proto::PROTOCOL_VERSION;
use interprocess::local_socket::ListenerOptions;
use interprocess::local_socket::traits::tokio::Listener as _;
use tokio::sync::watch;
use tokio::task::JoinSet;

use crate::api::{self, DaemonInfo};
use crate::core::Core;
use crate::dashboard::Dashboard;
use crate::lockfile::{Acquire, DaemonLock, LockInfo};
use crate::net::socket_file::SocketWatch;
use crate::net::transport;
use crate::services::background;
use crate::store::select;
use crate::time::{Clock, SystemClock};

/// Pause after a failed accept (EMFILE and the like).
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);
/// How long connections get to finish in-flight calls at shutdown.
const DRAIN: Duration = Duration::from_secs(5);

#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    #[error("coordd is already running for {db} (pid {pid}, socket {socket})")]
    AlreadyRunning { db: String, pid: String, socket: String },
    #[error("{context}: {source}")]
    Io { context: String, source: std::io::Error },
    #[error("cannot open the database {db}: {reason}")]
    Store { db: String, reason: String },
}

fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> DaemonError {
    let context = context.into();
    move |source| DaemonError::Io { context, source }
}

pub struct ServeOptions {
    pub paths: ProjectPaths,
    /// Print `ready <socket>` on stdout once serving (used by auto-start).
    pub notify_ready: bool,
    /// Windows: set this named event once serving (auto-start there starts the daemon
    /// detached, with no pipe to print on; `coordd serve --ready-event`).
    pub ready_event: Option<String>,
    /// `--store`: `sqlite` or a PostgreSQL URL (see `store::select`); recorded in the
    /// project's configuration.
    pub store: Option<String>,
    /// The budgets every connection shares.
    pub limits: transport::Limits,
    /// Stop after this long without calls, unless a subscription or a live lease keeps
    /// the daemon busy (`None`: never).
    pub idle_timeout: Option<Duration>,
    /// `--dashboard-acts-as-anyone`: the dashboard's page may write as any agent and set the
    /// permission policy (by default it acts only as its overseer).
    pub dashboard_anyone: bool,
}

/// Run the daemon until it is told to stop.
pub async fn serve(opts: ServeOptions) -> Result<(), DaemonError> {
    let paths = opts.paths.clone();
    let dir = paths.db.parent().map(PathBuf::from).unwrap_or_else(|| PathBuf::from("."));
    create_private_dir(&dir)?;

    let mut lock = match DaemonLock::try_acquire(&paths.lock)
        .map_err(io(format!("cannot open lock file {}", paths.lock.display())))?
    {
        Acquire::Acquired(l) => l,
        Acquire::Held(info) => {
            return Err(DaemonError::AlreadyRunning {
                db: paths.db.display().to_string(),
                pid: info.as_ref().map_or("unknown".into(), |i| i.pid.to_string()),
                socket: info.map_or(paths.socket.display().to_string(), |i| i.socket),
            });
        }
    };

    let listener = bind(&paths).await?;
    let started = Instant::now();
    let clock: Arc<dyn Clock> = Arc::new(SystemClock::from_env());
    let started_at = clock.now().to_string();
    let lock_info = LockInfo {
        pid: std::process::id(),
        socket: paths.socket.display().to_string(),
        socket_fallback: paths.socket_fallback,
        db: paths.db.display().to_string(),
        version: env!("CARGO_PKG_VERSION").into(),
        protocol_version: PROTOCOL_VERSION,
        started_at: started_at.clone(),
    };
    match lock.write_info(&lock_info) {
        // On a full disk the daemon still starts (read-only, see the store): the details
        // file is for humans and a second daemon's refusal; `status` asks the daemon itself.
        Err(e) if e.kind() == std::io::ErrorKind::StorageFull => {
            tracing::warn!(error = %e, file = %lock.info_path().display(), "cannot record the daemon's details: the disk is full");
        }
        other => other.map_err(io(format!("cannot write {}", lock.info_path().display())))?,
    }

    let db_path = paths.db.clone();
    if let Some(root) = project_root(&paths) {
        // Keep `.agents/` (the database, the socket, the worktrees) out of the user's commits.
        if let Ok(Err(e)) =
            tokio::task::spawn_blocking(move || crate::workspace::ignore::exclude_state_dir(&root)).await
        {
            tracing::warn!(error = %e, "cannot add .agents/ to .git/info/exclude");
        }
    }
    let store_err =
        |e: crate::error::Error| DaemonError::Store { db: paths.db.display().to_string(), reason: e.to_app().message };
    let (choice, source) = select::resolve(opts.store.as_deref(), &paths.db).map_err(store_err)?;
    let location = choice.describe(&paths.db);
    if choice == select::Choice::Sqlite {
        crate::private::create_file(&paths.db).map_err(io(format!("cannot create {}", paths.db.display())))?;
    }
    let opening = choice.clone();
    let (store, bus) = tokio::task::spawn_blocking(move || select::open(&opening, &db_path))
        .await
        .map_err(|e| io("database open task failed")(std::io::Error::other(e)))?
        .map_err(|e| DaemonError::Store { db: location.clone(), reason: e.to_app().message })?;
    if source == select::Source::Flag
        && let Err(e) = select::record(&paths.db, &choice)
    {
        tracing::warn!(error = %e, "cannot record the store in the project's configuration");
    }
    tracing::info!(store = %location, host = crate::host::name(), "store open");
    // The database and the log exist now (SQLite gives the WAL and SHM the database's mode).
    let mut files = crate::private::data_files(&paths.db, &paths.log);
    files.extend(crate::private::state_files(&paths.db, &paths.lock, lock.info_path()));
    let dirs = [dir.clone(), dir.join(crate::workspace::git::WORKTREES_DIR)];
    match tokio::task::spawn_blocking(move || crate::private::tighten(&dirs, &files)).await {
        Ok(Ok(changed)) if !changed.is_empty() => {
            tracing::warn!(changed = %changed.join(", "), "tightened local file modes: only their owner can read them now");
        }
        Ok(Ok(_)) => {}
        Ok(Err(e)) => tracing::warn!(error = %e, "cannot tighten the modes of the project's local files"),
        Err(e) => tracing::warn!(error = %e, "cannot tighten the modes of the project's local files"),
    }
    let core = Arc::new(Core::new(store.clone(), clock, bus, paths.db.clone()));
    let (shutdown_tx, mut shutdown_rx) = watch::channel(false);
    tokio::spawn(background::auto_retry(core.clone(), shutdown_rx.clone()));
    tokio::spawn(background::lease_expiry(core.clone(), shutdown_rx.clone()));
    tokio::spawn(crate::services::search::index_loop(core.clone(), shutdown_rx.clone()));
    tokio::spawn(background::auto_merge(core.clone(), shutdown_rx.clone()));
    if let Some(limit) = opts.idle_timeout {
        tokio::spawn(background::idle(core.clone(), limit, shutdown_tx.clone()));
    }

    let info = DaemonInfo {
        socket: paths.socket.display().to_string(),
        db: paths.db.display().to_string(),
        started_at,
        started,
    };
    let dashboard = Arc::new(Dashboard::new(dir.clone(), core.clock.clone(), opts.dashboard_anyone));
    let methods = api::module(core, info, shutdown_tx.clone(), dashboard.clone());
    dashboard.set_methods(methods.clone());
    // A dashboard served before a restart is served again, on the same URL.
    dashboard.restore().await;

    // Handlers are installed before readiness is announced: a signal sent the moment a
    // launcher sees "ready" must already mean a clean shutdown.
    let mut signals = Signals::install().map_err(io("cannot install signal handlers"))?;
    tracing::info!(socket = %paths.socket.display(), db = %paths.db.display(), pid = std::process::id(), "coordd ready");
    let record = match crate::cli::registry::add(&lock_info) {
        Ok(p) => Some(p),
        Err(e) => {
            tracing::warn!(error = %e, "cannot record this daemon for `coordd list`");
            None
        }
    };
    if opts.notify_ready {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "ready {}", paths.socket.display());
        let _ = out.flush();
    }
    #[cfg(windows)]
    if let Some(event) = &opts.ready_event
        && let Err(e) = crate::windows::signal_ready(event)
    {
        tracing::warn!(error = %e, event, "cannot signal the ready event");
    }

    let mut conns = JoinSet::new();
    let mut socket_watch = SocketWatch::new(&paths.socket);
    let mut listener = listener;
    loop {
        let mut rebind = false;
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(stream) => {
                    let (r, w) = tokio::io::split(stream);
                    conns.spawn(transport::serve(r, w, methods.clone(), opts.limits.clone(), shutdown_rx.clone()));
                }
                Err(e) => {
                    // Typically out of file descriptors: back off instead of spinning (and
                    // flooding the log) until some connection closes.
                    tracing::warn!(error = %e, "accept failed; pausing new connections for 100 ms");
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                }
            },
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
            _ = socket_watch.changed() => rebind = true,
            sig = signals.recv() => {
                tracing::info!(signal = sig, "shutting down");
                break;
            }
            _ = shutdown_rx.changed() => {
                tracing::info!("shutting down on request");
                break;
            }
        }
        if rebind {
            // Someone removed (or replaced) the socket file: clients can no longer reach
            // this daemon, and a new one could not start (the lock is ours). Listen again.
            tracing::warn!(socket = %paths.socket.display(), "the socket file was removed or replaced; listening on a new one");
            match bind(&paths).await {
                Ok(fresh) => {
                    let mut old = std::mem::replace(&mut listener, fresh);
                    old.do_not_reclaim_name_on_drop();
                    socket_watch.renew();
                    tracing::info!(socket = %paths.socket.display(), "socket re-created");
                }
                Err(e) => {
                    tracing::error!(error = %e, "cannot re-create the socket");
                    socket_watch.renew();
                }
            }
        }
    }
    let _ = shutdown_tx.send(true);
    drop(listener);
    dashboard.shutdown().await;
    let _ = std::fs::remove_file(&paths.socket);
    let drained = tokio::time::timeout(DRAIN, async { while conns.join_next().await.is_some() {} }).await;
    if drained.is_err() {
        tracing::warn!("connections did not finish within {DRAIN:?}; closing them");
        conns.abort_all();
    }
    drop(methods);
    if let Some(r) = &record {
        crate::cli::registry::remove(r, std::process::id());
    }
    store.close().await;
    drop(lock);
    tracing::info!("coordd stopped");
    Ok(())
}

/// Bind the socket, replacing a stale one. We hold the lock, so a socket file that nobody
/// answers on is stale by definition; one that answers means another daemon somehow serves
/// it, and we refuse rather than steal it.
async fn bind(paths: &ProjectPaths) -> Result<interprocess::local_socket::tokio::Listener, DaemonError> {
    if paths.socket_fallback
        && let Some(parent) = paths.socket.parent()
    {
        create_private_dir(parent)?;
    }
    let name = coord_ipc::socket::name(&paths.socket).map_err(io("invalid socket name"))?;
    #[cfg(unix)]
    if paths.socket.exists() {
        if coord_ipc::socket::connect(&paths.socket).await.is_ok() {
            return Err(DaemonError::AlreadyRunning {
                db: paths.db.display().to_string(),
                pid: "unknown".into(),
                socket: paths.socket.display().to_string(),
            });
        }
        tracing::warn!(socket = %paths.socket.display(), "removing stale socket");
        std::fs::remove_file(&paths.socket)
            .map_err(io(format!("cannot remove stale socket {}", paths.socket.display())))?;
    }
    let opts = ListenerOptions::new().name(name).reclaim_name(true);
    #[cfg(unix)]
    let opts = {
        use interprocess::os::unix::local_socket::ListenerOptionsExt;
        opts.mode(0o600)
    };
    #[cfg(windows)]
    let opts = {
        // The named pipe's twin of mode 0600: only the current user may open it.
        use interprocess::os::windows::local_socket::ListenerOptionsExt;
        use interprocess::os::windows::security_descriptor::SecurityDescriptor;
        let sddl = crate::windows::pipe_sddl().map_err(io("cannot read the current user's SID"))?;
        let wide = widestring::U16CString::from_str(&sddl).map_err(|e| io("bad SDDL")(std::io::Error::other(e)))?;
        let sd = SecurityDescriptor::deserialize(&wide).map_err(io("cannot build the pipe's security descriptor"))?;
        opts.security_descriptor(sd)
    };
    opts.create_tokio().map_err(io(format!("cannot listen on {}", paths.socket.display())))
}

/// Create a folder (and any missing parent) only its owner may enter.
fn create_private_dir(dir: &std::path::Path) -> Result<(), DaemonError> {
    if dir.is_dir() {
        return Ok(());
    }
    crate::private::create_dir(dir).map_err(io(format!("cannot create {}", dir.display())))
}

/// SIGTERM and SIGINT; on Windows the console's Ctrl-C, Ctrl-Break (what
/// `GenerateConsoleCtrlEvent` sends to a process group), close and shutdown events.
/// Registered eagerly.
struct Signals {
    #[cfg(unix)]
    term: tokio::signal::unix::Signal,
    #[cfg(unix)]
    int: tokio::signal::unix::Signal,
    #[cfg(windows)]
    c: tokio::signal::windows::CtrlC,
    #[cfg(windows)]
    brk: tokio::signal::windows::CtrlBreak,
    #[cfg(windows)]
    close: tokio::signal::windows::CtrlClose,
    #[cfg(windows)]
    shutdown: tokio::signal::windows::CtrlShutdown,
}

impl Signals {
    fn install() -> std::io::Result<Signals> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Ok(Signals { term: signal(SignalKind::terminate())?, int: signal(SignalKind::interrupt())? })
        }
        #[cfg(windows)]
        {
            use tokio::signal::windows::{ctrl_break, ctrl_c, ctrl_close, ctrl_shutdown};
            Ok(Signals { c: ctrl_c()?, brk: ctrl_break()?, close: ctrl_close()?, shutdown: ctrl_shutdown()? })
        }
    }

    /// The name of the next signal received.
    async fn recv(&mut self) -> &'static str {
        #[cfg(unix)]
        {
            tokio::select! {
                _ = self.term.recv() => "SIGTERM",
                _ = self.int.recv() => "SIGINT",
            }
        }
        #[cfg(windows)]
        {
            tokio::select! {
                _ = self.c.recv() => "CTRL_C",
                _ = self.brk.recv() => "CTRL_BREAK",
                _ = self.close.recv() => "CTRL_CLOSE",
                _ = self.shutdown.recv() => "CTRL_SHUTDOWN",
            }
        }
    }
}

/// The project root of a database in its default place (`<root>/.agents/coord.db`).
fn project_root(paths: &ProjectPaths) -> Option<PathBuf> {
    let dir = paths.db.parent()?;
    (dir.file_name()? == ".agents").then(|| dir.parent().map(PathBuf::from)).flatten()
}
