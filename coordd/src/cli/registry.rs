//! The daemons running for this user, for `coordd list`: each daemon records itself in a
//! file of the per-user runtime directory (`<runtime>/coordd-daemons/<hash of db>.json`,
//! the details of its lock file) when it is ready and removes it when it stops. A daemon
//! killed with `kill -9` leaves its record behind; `coordd list` finds it dead (nothing
//! answers on its socket) and removes it.

use std::path::{Path, PathBuf};

use crate::lockfile::LockInfo;

/// The folder of daemon records.
pub fn dir() -> PathBuf {
    coord_ipc::paths::runtime_dir().join("coordd-daemons")
}

fn record_path(db: &str) -> PathBuf {
    dir().join(format!("{:016x}.json", coord_ipc::paths::fnv1a(db.as_bytes())))
}

/// Record a ready daemon (private to the user: the folder is 0700).
pub fn add(info: &LockInfo) -> std::io::Result<PathBuf> {
    let d = dir();
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&d)?;
    }
    #[cfg(not(unix))]
    std::fs::create_dir_all(&d)?;
    let path = record_path(&info.db);
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, serde_json::to_vec_pretty(info).map_err(std::io::Error::other)?)?;
    std::fs::rename(&tmp, &path)?;
    Ok(path)
}

/// Forget a daemon's record, if it is still this daemon's (`pid`).
pub fn remove(path: &Path, pid: u32) {
    if read(path).is_some_and(|i| i.pid == pid) {
        let _ = std::fs::remove_file(path);
    }
}

pub fn read(path: &Path) -> Option<LockInfo> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

/// Every record, with its file, sorted by database.
pub fn all() -> Vec<(PathBuf, LockInfo)> {
    let Ok(entries) = std::fs::read_dir(dir()) else { return Vec::new() };
    let mut out: Vec<(PathBuf, LockInfo)> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .filter_map(|p| read(&p).map(|i| (p, i)))
        .collect();
    out.sort_by(|a, b| a.1.db.cmp(&b.1.db));
    out
}
