//! One bridge per run and host. Two bridges of one run on one host would each re-attach to
//! and report the other's sessions (whichever reported an end second died of it), so the
//! second is refused: it takes an exclusive lock (`flock`) on
//! `.agents/launch/<run>/bridge-<host>.lock`, held for the bridge's life and released by the
//! kernel when it ends however it ends, and a refused one names the holder (its pid and host,
//! written in the file). Bridges on other hosts (or with another `--host`) cooperate through
//! the daemon instead: each attempt gets exactly one session (`launch.sessionStart` refuses a
//! second one), and a code task is launched only on the host that has its worktree.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::AsRawFd;
use std::path::Path;

/// Another bridge follows the run on this host.
#[derive(Debug, thiserror::Error)]
#[error(
    "another coord-launch already follows run {run} on host {host} (pid {holder}); one bridge per run and host: \
     stop it first, or run this one on another host (--host / COORD_HOST names this host)"
)]
pub struct Taken {
    pub run: String,
    pub host: String,
    /// What the holder wrote: its pid (or `?` when unreadable).
    pub holder: String,
}

/// The lock, held while this value lives.
pub struct Held(#[allow(dead_code)] File);

/// Take the run's lock for this host in `dir` (`.agents/launch/<run>`).
pub fn take(dir: &Path, run: &str, host: &str) -> anyhow::Result<Held> {
    std::fs::create_dir_all(dir)?;
    let name: String =
        host.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '_' }).collect();
    let mut f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(dir.join(format!("bridge-{name}.lock")))?;
    // SAFETY: flock on a descriptor we own; no memory is involved.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let mut text = String::new();
        let _ = f.read_to_string(&mut text);
        let holder = text.split_whitespace().next().unwrap_or("?").to_string();
        return Err(Taken { run: run.to_string(), host: host.to_string(), holder }.into());
    }
    f.set_len(0)?;
    f.seek(SeekFrom::Start(0))?;
    writeln!(f, "{} {host}", std::process::id())?;
    f.flush()?;
    Ok(Held(f))
}
