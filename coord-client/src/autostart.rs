//! Starting the project's daemon on demand. Concurrent clients serialize on a start lock,
//! so exactly one spawns it; the spawned daemon reports readiness on a pipe (`ready
//! <socket>`; on Windows it is started detached and sets a named event, see `detached`),
//! so nobody sleeps and guesses.

use std::fs::OpenOptions;
#[cfg(not(windows))]
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
#[cfg(not(windows))]
use std::process::{Command, Stdio};
use std::time::Duration;

use coord_ipc::ProjectPaths;
use coord_proto::Exit;

use crate::error::ClientError;

/// How long a starting daemon may take to become ready (it migrates the schema first).
const READY_TIMEOUT: Duration = Duration::from_secs(60);

/// The `coordd` binary: `$COORDD_BIN`, else beside the running executable, else `PATH`.
pub fn daemon_binary() -> PathBuf {
    if let Some(p) = std::env::var_os("COORDD_BIN").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    let exe = format!("coordd{}", std::env::consts::EXE_SUFFIX);
    if let Ok(me) = std::env::current_exe()
        && let Some(dir) = me.parent()
    {
        let beside = dir.join(&exe);
        if beside.is_file() {
            return beside;
        }
        // `cargo test` puts test binaries in target/<profile>/deps.
        if let Some(up) = dir.parent().map(|d| d.join(&exe))
            && dir.ends_with("deps")
            && up.is_file()
        {
            return up;
        }
    }
    PathBuf::from(exe)
}

/// What happened when we tried to start the daemon.
pub enum Started {
    /// Our daemon (with its pid), or one started meanwhile by someone else (`None`), is
    /// ready.
    Ready(Option<u32>),
    /// Another daemon holds the database lock; it is (or is about to be) listening.
    AlreadyRunning,
}

/// Start the daemon for `paths` in the background and wait until it is ready. Blocking:
/// call it from `spawn_blocking`. `still_down` is re-checked under the start lock, so a
/// client that waited for another client's start does not start a second daemon.
pub fn start(paths: &ProjectPaths, still_down: impl Fn() -> bool) -> Result<Started, ClientError> {
    let unavailable = |reason: String| ClientError::DaemonUnavailable { db: paths.db.clone(), reason };
    let dir = paths.db.parent().unwrap_or(Path::new("."));
    private_dir(dir).map_err(|e| unavailable(format!("cannot create {}: {e}", dir.display())))?;
    let start_lock_path = paths.lock.with_extension("start");
    let mut start_lock = OpenOptions::new();
    start_lock.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        // Only its owner opens it, as the daemon's own files (whatever the umask).
        use std::os::unix::fs::OpenOptionsExt;
        start_lock.mode(0o600);
    }
    let start_lock = start_lock
        .open(&start_lock_path)
        .map_err(|e| unavailable(format!("cannot open {}: {e}", start_lock_path.display())))?;
    start_lock.lock().map_err(|e| unavailable(format!("cannot lock {}: {e}", start_lock_path.display())))?;
    if !still_down() {
        return Ok(Started::Ready(None));
    }

    let bin = daemon_binary();
    #[cfg(windows)]
    {
        // Detached, inheriting no handle of ours (src/detached.rs); it logs to its file.
        use std::ffi::OsStr;
        let args = [OsStr::new("serve"), OsStr::new("--db"), paths.db.as_os_str()];
        let args = [&args[..], &[OsStr::new("--log-file"), paths.log.as_os_str()]].concat();
        let outcome = crate::detached::start(&bin, &args, READY_TIMEOUT)
            .map_err(|e| unavailable(format!("cannot start {}: {e}", bin.display())));
        drop(start_lock);
        match outcome? {
            crate::detached::Outcome::Ready(pid) => Ok(Started::Ready(Some(pid))),
            crate::detached::Outcome::Exited(code) => {
                exited(paths, code, code.map_or("unknown status".into(), |c| format!("exit code {c}")))
            }
            crate::detached::Outcome::TimedOut => Err(timed_out(paths)),
        }
    }
    #[cfg(not(windows))]
    {
        let mut log = OpenOptions::new();
        log.create(true).append(true);
        #[cfg(unix)]
        {
            // The log can hold messages' summaries: only its owner reads it (as the daemon's).
            use std::os::unix::fs::OpenOptionsExt;
            log.mode(0o600);
        }
        let log =
            log.open(&paths.log).map_err(|e| unavailable(format!("cannot open log {}: {e}", paths.log.display())))?;
        let mut cmd = Command::new(&bin);
        cmd.arg("serve")
            .arg("--db")
            .arg(&paths.db)
            .arg("--log-file")
            .arg(&paths.log)
            .arg("--notify-ready")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log));
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            // Own process group: a Ctrl-C in the caller's terminal does not kill the daemon.
            cmd.process_group(0);
        }
        let mut child = cmd.spawn().map_err(|e| unavailable(format!("cannot start {}: {e}", bin.display())))?;
        let stdout = child.stdout.take().expect("stdout is piped");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let r = BufReader::new(stdout).read_line(&mut line).map(|_| line);
            let _ = tx.send(r);
        });
        let outcome = rx.recv_timeout(READY_TIMEOUT);
        drop(start_lock);
        match outcome {
            Ok(Ok(line)) if line.starts_with("ready") => {
                let pid = child.id();
                // Reap the daemon when it eventually exits, without blocking anyone.
                std::thread::spawn(move || child.wait());
                Ok(Started::Ready(Some(pid)))
            }
            Ok(_) => {
                let status = child.wait().ok();
                exited(paths, status.and_then(|s| s.code()), status.map_or("unknown status".into(), |s| s.to_string()))
            }
            Err(_) => Err(timed_out(paths)),
        }
    }
}

/// The daemon exited during start-up with `code` (`status` in words): another daemon holds
/// the database lock, or it failed (its last log lines say why).
fn exited(paths: &ProjectPaths, code: Option<i32>, status: String) -> Result<Started, ClientError> {
    if code.and_then(Exit::from_code) == Some(Exit::DaemonState) {
        return Ok(Started::AlreadyRunning);
    }
    let tail = log_tail(&paths.log);
    Err(ClientError::DaemonUnavailable {
        db: paths.db.clone(),
        reason: format!(
            "the daemon exited during start-up ({status}); last log lines from {}:\n{tail}",
            paths.log.display()
        ),
    })
}

fn timed_out(paths: &ProjectPaths) -> ClientError {
    ClientError::DaemonUnavailable {
        db: paths.db.clone(),
        reason: format!("the daemon did not become ready within {READY_TIMEOUT:?}; see {}", paths.log.display()),
    }
}

fn log_tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(5)..].join("\n")
}

/// Does a daemon answer on this socket? (Blocking, and quick: one connect.)
pub fn daemon_listening(socket: &Path) -> bool {
    coord_ipc::socket::probe_blocking(socket).is_ok()
}

/// Create the project's state folder (and any missing parent) only its owner may enter:
/// the database and the log are in it.
fn private_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)
    }
    #[cfg(not(unix))]
    {
        std::fs::create_dir_all(dir)
    }
}
