//! The per-database lock file: an OS file lock held for the daemon's whole life (so a
//! crashed daemon never leaves a stale lock), and beside it the daemon's details (pid,
//! socket, …) for `coordd status`, for a second daemon's refusal and for humans. The
//! details live in a file of their own (`coordd.info`), never under the lock: Windows
//! locks are mandatory, so nobody could read a locked file there.

use std::fs::{File, TryLockError};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// What a running daemon records beside its lock file.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct LockInfo {
    pub pid: u32,
    pub socket: String,
    pub socket_fallback: bool,
    pub db: String,
    pub version: String,
    pub protocol_version: u32,
    pub started_at: String,
}

/// A held lock; released when dropped or when the process dies.
pub struct DaemonLock {
    /// Held open (and locked) for the daemon's life.
    _file: File,
    path: PathBuf,
}

/// The details file of the lock at `lock` (`coordd.lock` → `coordd.info`).
pub fn info_path(lock: &Path) -> PathBuf {
    lock.with_extension("info")
}

pub enum Acquire {
    Acquired(DaemonLock),
    /// Another process holds the lock; its recorded details, if readable.
    Held(Option<LockInfo>),
}

impl DaemonLock {
    /// Try to take the lock without waiting.
    pub fn try_acquire(path: &Path) -> std::io::Result<Acquire> {
        let file = crate::private::file_options().read(true).write(true).create(true).truncate(false).open(path)?;
        match file.try_lock() {
            Ok(()) => {
                // Whatever a crashed daemon left there is not ours to show.
                let _ = std::fs::remove_file(info_path(path));
                Ok(Acquire::Acquired(DaemonLock { _file: file, path: path.to_path_buf() }))
            }
            Err(TryLockError::WouldBlock) => Ok(Acquire::Held(read_info(path))),
            Err(TryLockError::Error(e)) => Err(e),
        }
    }

    /// Record the daemon's details (written whole, then renamed into place).
    pub fn write_info(&mut self, info: &LockInfo) -> std::io::Result<()> {
        let path = info_path(&self.path);
        let tmp = path.with_extension("info.tmp");
        let mut text = serde_json::to_string_pretty(info).map_err(std::io::Error::other)?;
        text.push('\n');
        let written = crate::private::write_file(&tmp, text.as_bytes()).and_then(|f| f.sync_data());
        if let Err(e) = written {
            // Leave no half-written file behind (a full disk).
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
        std::fs::rename(&tmp, &path)
    }

    /// The details file this lock writes.
    pub fn info_path(&self) -> PathBuf {
        info_path(&self.path)
    }
}

impl Drop for DaemonLock {
    fn drop(&mut self) {
        // Remove the details so nobody mistakes them for a live daemon (while the lock is
        // still ours); the OS lock goes with the file handle.
        let _ = std::fs::remove_file(info_path(&self.path));
    }
}

/// Read the details the daemon holding the lock at `lock` recorded, if any.
pub fn read_info(lock: &Path) -> Option<LockInfo> {
    serde_json::from_slice(&std::fs::read(info_path(lock)).ok()?).ok()
}

/// Block until the daemon `pid` holding the lock at `path` has exited, up to `timeout`.
/// Unix: until its lock is released. Windows: until the process ends (waiting for a
/// mandatory lock there fails with a lock violation under Wine; the process handle is what
/// Windows offers to wait on).
pub fn wait_exited(pid: u32, path: &Path, timeout: std::time::Duration) -> std::io::Result<bool> {
    #[cfg(windows)]
    {
        let _ = path;
        crate::windows::wait_for_process(pid, timeout)
    }
    #[cfg(not(windows))]
    {
        let _ = pid;
        wait_released(path, timeout)
    }
}

/// Block until no daemon holds the lock at `path` (it exited), up to `timeout`.
#[cfg(not(windows))]
fn wait_released(path: &Path, timeout: std::time::Duration) -> std::io::Result<bool> {
    let file = crate::private::file_options().read(true).write(true).create(true).truncate(false).open(path)?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let r = file.lock().map(|()| file.unlock());
        let _ = tx.send(r);
    });
    match rx.recv_timeout(timeout) {
        Ok(r) => r.and_then(|x| x).map(|()| true),
        Err(_) => Ok(false),
    }
}
