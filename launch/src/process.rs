//! Worker processes: started in a process group of their own with stdout and stderr in a
//! log file (through a filter process when the client's output needs one), waited on as
//! children or (after a bridge restart) through a pidfd, and stopped as a whole: SIGTERM,
//! then SIGKILL after a grace period, to the group and to every process that carries the
//! session's `COORD_SESSION` (agent CLIs run their shell tools in process groups of their
//! own, which a group signal misses; the id is the session's own, so a stop never reaches
//! another session of the same thread). No wait here polls.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use coord_proto::types::AGENT_SECRET_ENV;
use tokio::io::unix::AsyncFd;
use tokio::process::{Child, Command};

use crate::credentials::{self, Secret};

/// The environment variable that names a session's processes: its session id.
pub const SESSION_VAR: &str = "COORD_SESSION";

/// The session's id as an output filter sees it (it is not one of the session's processes).
pub const FILTER_SESSION_VAR: &str = "COORD_FILTER_SESSION";

/// What to run: a program, its arguments, its directory and extra environment.
#[derive(Debug, Clone, Default)]
pub struct Spec {
    pub program: String,
    pub args: Vec<String>,
    pub cwd: PathBuf,
    pub env: Vec<(String, String)>,
    /// A program (and its arguments) the output goes through on its way to the log, in the
    /// session's process group: it reads the session's stdout and stderr on its stdin.
    pub filter: Option<Vec<String>>,
    /// The session's own agent secret (`COORD_AGENT_SECRET`), given to the session only;
    /// every secret of the bridge's environment is removed from the session either way, and
    /// from its filter all but the bridge's own agent secret ([`crate::credentials`]).
    pub secret: Option<Secret>,
    /// A live session's input: the FIFO its stdin reads (feed.rs); else /dev/null.
    pub stdin: Option<PathBuf>,
}

/// How a process ended, as far as it can be known (a re-attached session's status is
/// not ours to read: both are `None` then).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Ended {
    pub code: Option<i32>,
    pub signal: Option<i32>,
}

/// How the bridge waits for a session's end.
pub enum Waiter {
    /// A child this bridge started, and the end of its output filter when it has one
    /// ([`Waiter::output`]).
    Child(Child, Option<tokio::sync::oneshot::Receiver<()>>),
    /// A process it did not start (re-attached, or a tmux pane): readable when the
    /// process ends; the file, when there is one, holds its exit code.
    Pidfd(AsyncFd<OwnedFd>, Option<PathBuf>),
}

impl Waiter {
    /// Wait for the end, without polling.
    pub async fn wait(&mut self) -> Ended {
        match self {
            Waiter::Child(c, _) => match c.wait().await {
                Ok(st) => Ended { code: st.code(), signal: st.signal() },
                Err(_) => Ended::default(),
            },
            Waiter::Pidfd(fd, status) => {
                let _ = fd.readable().await;
                let code =
                    status.as_ref().and_then(|f| std::fs::read_to_string(f).ok()).and_then(|s| s.trim().parse().ok());
                Ended { code, signal: None }
            }
        }
    }

    /// The end of the session's output filter (`None`: it has none, or this was asked
    /// before): the filter ends at the end of the session's output, once the last lines are
    /// in the log and its last usage report is made.
    pub fn output(&mut self) -> Option<tokio::sync::oneshot::Receiver<()>> {
        match self {
            Waiter::Child(_, filter) => filter.take(),
            Waiter::Pidfd(..) => None,
        }
    }
}

/// The environment of `spec`'s output filter: the session's, its id as
/// [`FILTER_SESSION_VAR`] instead of [`SESSION_VAR`] (the filter is not one of the
/// session's processes). Also the tmux window's (`tmux.rs`).
pub fn filter_env(spec: &Spec) -> impl Iterator<Item = (&str, &str)> {
    spec.env.iter().map(|(k, v)| (if k == SESSION_VAR { FILTER_SESSION_VAR } else { k.as_str() }, v.as_str()))
}

/// Start `spec` in a new process group with stdin from /dev/null and stdout and stderr
/// appended to `log` (through its filter, which joins the group). Returns the pid (also
/// the group id) and its waiter.
pub fn spawn(spec: &Spec, log: &Path) -> std::io::Result<(i32, Waiter)> {
    if let Some(dir) = log.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let out = OpenOptions::new().create(true).append(true).open(log)?;
    let (to_log, from_session) = match &spec.filter {
        Some(_) => {
            let (r, w) = std::io::pipe()?;
            (Stdio::from(w.try_clone()?), Some((r, w)))
        }
        None => (Stdio::from(out.try_clone()?), None),
    };
    let err = match &from_session {
        Some((_, w)) => Stdio::from(w.try_clone()?),
        None => Stdio::from(out.try_clone()?),
    };
    let mut cmd = Command::new(&spec.program);
    cmd.args(&spec.args).current_dir(&spec.cwd).envs(spec.env.iter().map(|(k, v)| (k, v)));
    let inherited = credentials::scrub();
    for k in &inherited {
        cmd.env_remove(k);
    }
    if let Some(s) = &spec.secret {
        cmd.env(AGENT_SECRET_ENV, s.expose());
    }
    let stdin = match &spec.stdin {
        Some(fifo) => Stdio::from(File::open(fifo)?),
        None => Stdio::null(),
    };
    cmd.stdin(stdin).stdout(to_log).stderr(err);
    cmd.process_group(0).kill_on_drop(false);
    let child = cmd.spawn()?;
    let pid = child.id().ok_or_else(|| std::io::Error::other("the child ended before its pid was read"))? as i32;
    let mut filtered = None;
    if let (Some(filter), Some((r, w))) = (&spec.filter, from_session) {
        drop(w);
        let (program, args) = filter.split_first().ok_or_else(|| std::io::Error::other("an empty filter"))?;
        let mut f = Command::new(program);
        // Not one of the session's processes (no `COORD_SESSION`, a group of its own): it
        // ends by itself at the session's end of output, after what it was given (the
        // last turn's usage report) is done, rather than being killed with the session.
        f.args(args).current_dir(&spec.cwd).envs(filter_env(spec));
        // It reports the session's usage (`launch.usage`, the launcher's to call), so it
        // keeps the bridge's own agent secret, and only that one.
        for k in inherited.iter().filter(|k| *k != AGENT_SECRET_ENV) {
            f.env_remove(k);
        }
        f.stdin(Stdio::from(r)).stdout(Stdio::from(out.try_clone()?)).stderr(Stdio::from(out));
        f.process_group(0).kill_on_drop(false);
        let mut filter = f.spawn()?;
        let (ended, rx) = tokio::sync::oneshot::channel();
        filtered = Some(rx);
        tokio::spawn(async move {
            let _ = filter.wait().await;
            let _ = ended.send(());
        });
    }
    Ok((pid, Waiter::Child(child, filtered)))
}

/// Wait on a process this bridge did not start: a pidfd, readable once it ends.
pub fn attach(pid: i32, status: Option<PathBuf>) -> std::io::Result<Waiter> {
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` is a descriptor we just opened and own.
    let owned = unsafe { OwnedFd::from_raw_fd(fd as i32) };
    // SAFETY: the descriptor is owned by the `AsyncFd` and closed only when it is dropped,
    // after it is deregistered.
    let fd = unsafe { AsyncFd::register(owned) }.map_err(|e| std::io::Error::other(format!("{e:?}")))?;
    Ok(Waiter::Pidfd(fd, status))
}

/// Is a process with this pid alive (and not a zombie)?
pub fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat.rsplit_once(") ").is_some_and(|(_, rest)| !rest.starts_with('Z')),
        Err(_) => false,
    }
}

/// Signal a whole process group; false when none is left.
pub fn signal_group(pgid: i32, sig: i32) -> bool {
    // SAFETY: killpg sends a signal to a process group; no memory is involved.
    unsafe { libc::killpg(pgid, sig) == 0 }
}

/// The live processes whose environment holds `COORD_SESSION=session`: everything a
/// session started that kept its environment, in whatever process group, even once
/// reparented. Blocking (it reads `/proc`).
pub fn of_session(session: &str) -> Vec<i32> {
    if session.is_empty() {
        return Vec::new();
    }
    let want = format!("{SESSION_VAR}={session}");
    let Ok(dir) = std::fs::read_dir("/proc") else { return Vec::new() };
    let me = std::process::id() as i32;
    dir.flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()).map(|pid| (pid, e.path())))
        .filter(|(pid, path)| {
            *pid != me
                && std::fs::read(path.join("environ"))
                    .is_ok_and(|env| env.split(|b| *b == 0).any(|kv| kv == want.as_bytes()))
        })
        .map(|(pid, _)| pid)
        .collect()
}

/// The session id (`COORD_SESSION`) a live process carries. Blocking (it reads `/proc`).
pub fn session_of(pid: i32) -> Option<String> {
    let env = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    let want = format!("{SESSION_VAR}=");
    env.split(|b| *b == 0)
        .find_map(|kv| kv.strip_prefix(want.as_bytes()))
        .map(|v| String::from_utf8_lossy(v).into_owned())
}

/// The process group of a live process.
fn group_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // After the command's closing parenthesis: state, ppid, pgrp.
    stat.rsplit_once(") ")?.1.split_whitespace().nth(2)?.parse().ok()
}

/// The session's processes ([`of_session`]), off the executor.
async fn session_processes(session: &str) -> Vec<i32> {
    let session = session.to_string();
    tokio::task::spawn_blocking(move || of_session(&session)).await.unwrap_or_default()
}

fn kill_all(pids: &[i32], sig: i32) {
    for pid in pids {
        // SAFETY: kill sends a signal to one process; no memory is involved.
        unsafe { libc::kill(*pid, sig) };
    }
}

/// Signal a session: its process group, and every process of the session ([`of_session`]).
pub async fn signal_session(pgid: i32, session: &str, sig: i32) {
    signal_group(pgid, sig);
    kill_all(&session_processes(session).await, sig);
}

/// A last SIGKILL to every process of the session. A process in the middle of an exec shows
/// an empty environment for that instant, so one scan can miss it: scan again until none
/// of the session's processes is left (a few times at most).
async fn kill_the_rest(session: &str) {
    for _ in 0..4 {
        let left = session_processes(session).await;
        if left.is_empty() {
            break;
        }
        kill_all(&left, libc::SIGKILL);
    }
}

/// Stop a session (its group and its processes, see [`signal_session`]): SIGTERM, then
/// SIGKILL if the leader has not ended within `grace`. Returns how the leader ended.
/// Everything gets a last SIGKILL either way, so nothing it started outlives it.
pub async fn stop(pgid: i32, session: &str, waiter: &mut Waiter, grace: Duration) -> Ended {
    signal_session(pgid, session, libc::SIGTERM).await;
    let ended = match tokio::time::timeout(grace, waiter.wait()).await {
        Ok(e) => e,
        Err(_) => {
            signal_session(pgid, session, libc::SIGKILL).await;
            waiter.wait().await
        }
    };
    signal_session(pgid, session, libc::SIGKILL).await;
    kill_the_rest(session).await;
    ended
}

/// Clean up after a session whose leader `pid` is gone while no bridge watched it (a lost
/// session): what it left behind gets the same SIGTERM and last SIGKILL as a stopped one.
/// Its old process group is signalled only while one of the session's own processes is
/// still in it (a group id alone may belong to someone else by now).
pub async fn clean_up(pid: i32, session: &str) {
    let left = session_processes(session).await;
    let group_is_ours = tokio::task::spawn_blocking({
        let left = left.clone();
        move || left.iter().any(|p| group_of(*p) == Some(pid))
    })
    .await
    .unwrap_or(false);
    for sig in [libc::SIGTERM, libc::SIGKILL] {
        if group_is_ours {
            signal_group(pid, sig);
        }
        kill_all(&left, sig);
    }
    kill_the_rest(session).await;
}

/// The last `lines` lines of a log (at most its last 16 KiB), lossily decoded.
pub fn log_tail(log: &Path, lines: usize) -> String {
    let Ok(mut f) = File::open(log) else { return String::new() };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let from = len.saturating_sub(16 * 1024);
    if f.seek(SeekFrom::Start(from)).is_err() {
        return String::new();
    }
    let mut buf = Vec::new();
    let _ = f.read_to_end(&mut buf);
    let text = String::from_utf8_lossy(&buf);
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_stopped_group_leaves_no_process_behind() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("s.log");
        let spec = Spec {
            program: "sh".into(),
            args: vec!["-c".into(), "sleep 300 & echo $! > fifo; wait".into()],
            cwd: dir.path().into(),
            ..Spec::default()
        };
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let (pid, mut w) = spawn(&spec, &log).unwrap();
        // Reading the fifo blocks until the script wrote its grandchild's pid.
        let sleeper: i32 =
            tokio::task::spawn_blocking(move || std::fs::read_to_string(fifo).unwrap().trim().parse().unwrap())
                .await
                .unwrap();
        assert!(alive(pid) && alive(sleeper));
        let mut grandchild = attach(sleeper, None).unwrap();
        let ended = stop(pid, "", &mut w, Duration::from_secs(5)).await;
        assert_eq!(ended.signal, Some(libc::SIGTERM));
        let gone = tokio::time::timeout(Duration::from_secs(30), grandchild.wait()).await;
        assert!(gone.is_ok(), "the session's grandchild outlived the stop");
    }

    #[tokio::test]
    async fn a_stop_reaches_the_sessions_processes_in_other_groups() {
        let dir = tempfile::tempdir().unwrap();
        let session = format!("ses_stop_test_{}", std::process::id());
        // A grandchild in a group (and session) of its own, as agent CLIs start their shells.
        // It writes its own pid once it runs, then blocks opening a fifo no one writes: no
        // exec follows, so its environment is readable for the whole test (a process in
        // the middle of an exec shows an empty one).
        let spec = Spec {
            program: "sh".into(),
            args: vec!["-c".into(), "setsid sh -c 'echo $$ > fifo; read x < hold' & wait".into()],
            cwd: dir.path().into(),
            env: vec![(SESSION_VAR.into(), session.clone())],
            ..Spec::default()
        };
        let fifo = dir.path().join("fifo");
        for f in [&fifo, &dir.path().join("hold")] {
            let c = std::ffi::CString::new(f.to_str().unwrap()).unwrap();
            // SAFETY: a valid NUL-terminated path.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        }
        let (pid, mut w) = spawn(&spec, &dir.path().join("s.log")).unwrap();
        let detached: i32 =
            tokio::task::spawn_blocking(move || std::fs::read_to_string(fifo).unwrap().trim().parse().unwrap())
                .await
                .unwrap();
        assert!(of_session(&session).contains(&detached));
        let mut grandchild = attach(detached, None).unwrap();
        stop(pid, &session, &mut w, Duration::from_secs(5)).await;
        let gone = tokio::time::timeout(Duration::from_secs(30), grandchild.wait()).await;
        assert!(gone.is_ok(), "the session's detached grandchild outlived the stop");
    }

    #[tokio::test]
    async fn a_reattached_process_is_seen_to_end() {
        let mut child = std::process::Command::new("sh").args(["-c", "read x"]).stdin(Stdio::piped()).spawn().unwrap();
        let mut w = attach(child.id() as i32, None).unwrap();
        drop(child.stdin.take());
        w.wait().await;
        child.wait().unwrap();
    }

    #[test]
    fn the_tail_is_the_last_lines() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("t.log");
        std::fs::write(&log, "a\nb\nc\nd\n").unwrap();
        assert_eq!(log_tail(&log, 2), "c\nd");
        assert_eq!(log_tail(&dir.path().join("none"), 2), "");
    }
}
