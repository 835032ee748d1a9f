//! The per-database lock file: an OS file lock held for the daemon's whole life (so a
//! crashed daemon never leaves a stale lock), with the daemon's details written inside
//! for `coordd status` and for humans.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// What a running daemon records in its lock file.
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
    file: File,
    path: PathBuf,
}

pub enum Acquire {
    Acquired(DaemonLock),
    /// Another process holds the lock; its recorded details, if readable.
    Held(Option<LockInfo>),
}

impl DaemonLock {
    /// Try to take the lock without waiting.
    pub fn try_acquire(path: &Path) -> std::io::Result<Acquire> {
        let file = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(path)?;
        match file.try_lock() {
            Ok(()) => Ok(Acquire::Acquired(DaemonLock { file, path: path.to_path_buf() })),
            Err(TryLockError::WouldBlock) => Ok(Acquire::Held(read_info(path))),
            Err(TryLockError::Error(e)) => Err(e),
        }
    }

    /// Record the daemon's details.
    pub fn write_info(&mut self, info: &LockInfo) -> std::io::Result<()> {
        self.file.set_len(0)?;
        self.file.seek(SeekFrom::Start(0))?;
        let mut text = serde_json::to_string_pretty(info).map_err(std::io::Error::other)?;
        text.push('\n');
        self.file.write_all(text.as_bytes())?;
        self.file.sync_data()
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for DaemonLock {
    fn drop(&mut self) {
        // Clear the details so nobody mistakes them for a live daemon; the OS lock goes
        // with the file handle.
        let _ = self.file.set_len(0);
    }
}

/// Read the details a daemon recorded, if any.
pub fn read_info(path: &Path) -> Option<LockInfo> {
    let mut s = String::new();
    File::open(path).ok()?.read_to_string(&mut s).ok()?;
    serde_json::from_str(&s).ok()
}

/// Block until no daemon holds the lock at `path` (it exited), up to `timeout`.
pub fn wait_released(path: &Path, timeout: std::time::Duration) -> std::io::Result<bool> {
    let file = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(path)?;
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
