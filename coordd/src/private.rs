//! Local files only their owner can read: the project's `.agents/` folder is 0700, and
//! the database, its WAL and SHM files and the daemon's log are 0600 (every message is in
//! them). A project made before this rule is tightened when the daemon starts, and the
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

/// Create `path` empty and 0600 unless it exists (an empty file is an empty SQLite
/// database; SQLite itself would create it 0644, and its WAL and SHM take its mode).
pub fn create_file(path: &Path) -> std::io::Result<()> {
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(FILE_MODE);
    }
    match opts.open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

/// Make `dir` 0700 and each existing file of `files` 0600, where they allow more. Returns
/// what was changed, as `path (old mode → new mode)`; missing files are skipped.
pub fn tighten(dir: &Path, files: &[PathBuf]) -> std::io::Result<Vec<String>> {
    let mut changed = Vec::new();
    restrict(dir, DIR_MODE, &mut changed)?;
    for f in files {
        match restrict(f, FILE_MODE, &mut changed) {
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
        let changed = tighten(&dir, &files).unwrap();
        assert_eq!(changed.len(), 2, "{changed:?}");
        assert_eq!((mode(&dir), mode(&db)), (0o700, 0o600));
        assert!(tighten(&dir, &files).unwrap().is_empty(), "nothing left to change");
    }
}
