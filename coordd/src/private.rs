//! Local files only their owner can read: the project's `.agents/` folder and its
//! `worktrees/` are 0700, and the database, its WAL and SHM files, the daemon's log, its
//! lock and details files (`coordd.lock`, `coordd.info`), the autostart lock
//! (`coordd.start`) and the policy snapshot (`coordd.policy.json`) are 0600 (every message is in
//! them; the others say what runs and what is gated), whatever the umask. A project made before this rule is tightened when the daemon starts, and the
//! daemon says once, in its log, what it changed. Nothing to do where there are no Unix
//! modes (Windows: the folder inherits the user profile's ACL).

use std::path::{Path, PathBuf};

/// The mode of the state folder.
pub const DIR_MODE: u32 = 0o700;
/// The mode of the database, its WAL and SHM files and the log.
pub const FILE_MODE: u32 = 0o600;

/// The files beside the database that hold data: the database, `-wal`, `-shm`, the log.
pub fn data_files(db: &Path, log: &Path) -> Vec<PathBuf> {
    let with = |suffix: &str| {
        let mut s = db.as_os_str().to_owned();
        s.push(suffix);
        PathBuf::from(s)
    };
    vec![db.to_path_buf(), with("-wal"), with("-shm"), log.to_path_buf()]
}

/// The files beside the database that say what runs and what is gated: the lock, the
/// daemon's details (`info`, as the lock file names it), the autostart lock and the policy
/// snapshot.
pub fn state_files(db: &Path, lock: &Path, info: PathBuf) -> Vec<PathBuf> {
    vec![lock.to_path_buf(), info, lock.with_extension("start"), coord_ipc::paths::policy_file(db)]
}

/// Options that create a file 0600 (on Unix; set what else to do on them).
pub fn file_options() -> std::fs::OpenOptions {
    #[allow(unused_mut)]
    let mut opts = std::fs::OpenOptions::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(FILE_MODE);
    }
    opts
}

/// Write `bytes` to `path` (created or truncated), leaving it 0600 even if it existed
/// with a looser mode: for files written beside and renamed into place.
pub fn write_file(path: &Path, bytes: &[u8]) -> std::io::Result<std::fs::File> {
    use std::io::Write;
    let mut f = file_options().write(true).create(true).truncate(true).open(path)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        f.set_permissions(std::fs::Permissions::from_mode(FILE_MODE))?;
    }
    f.write_all(bytes)?;
    Ok(f)
}

/// Create `dir` and any missing parent, 0700 (the folders it creates).
pub fn create_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new().recursive(true).mode(DIR_MODE).create(dir)
    }
    #[cfg(not(unix))]
    {
        std::fs::create_dir_all(dir)
    }
}

/// Create `path` empty and 0600 unless it exists (an empty file is an empty SQLite
/// database; SQLite itself would create it 0644, and its WAL and SHM take its mode).
pub fn create_file(path: &Path) -> std::io::Result<()> {
    match file_options().write(true).create_new(true).open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

/// Make each existing folder of `dirs` 0700 and each existing file of `files` 0600, where
/// they allow more. Returns what was changed, as `path (old mode → new mode)`; missing
/// ones are skipped.
pub fn tighten(dirs: &[PathBuf], files: &[PathBuf]) -> std::io::Result<Vec<String>> {
    let mut changed = Vec::new();
    let modes = dirs.iter().map(|d| (d, DIR_MODE)).chain(files.iter().map(|f| (f, FILE_MODE)));
    for (path, mode) in modes {
        match restrict(path, mode, &mut changed) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            other => other?,
        }
    }
    Ok(changed)
}

#[cfg(unix)]
fn restrict(path: &Path, mode: u32, changed: &mut Vec<String>) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let old = std::fs::metadata(path)?.permissions().mode() & 0o7777;
    // Only ever take permissions away: the owner's bits stay as they are.
    let new = old & (mode | 0o7000) & !0o077;
    if new != old {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(new))?;
        changed.push(format!("{} ({old:o} → {new:o})", path.display()));
    }
    Ok(())
}

#[cfg(not(unix))]
fn restrict(path: &Path, _mode: u32, _changed: &mut Vec<String>) -> std::io::Result<()> {
    std::fs::metadata(path).map(drop)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn loose_files_are_tightened_once_and_missing_ones_skipped() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join(".agents");
        std::fs::create_dir(&dir).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let db = dir.join("coord.db");
        std::fs::write(&db, b"").unwrap();
        std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();
        let files = data_files(&db, &dir.join("coordd.log"));
        let dirs = [dir.clone(), dir.join("worktrees")];
        let changed = tighten(&dirs, &files).unwrap();
        assert_eq!(changed.len(), 2, "{changed:?}");
        assert_eq!((mode(&dir), mode(&db)), (0o700, 0o600));
        assert!(tighten(&dirs, &files).unwrap().is_empty(), "nothing left to change");
    }
}
