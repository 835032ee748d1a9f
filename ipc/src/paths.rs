//! Where a project's daemon lives: project root discovery, the database, and the socket,
//! lock and log files beside it. The daemon and every client compute the same paths from
//! the same inputs, so they always meet.

use std::path::{Path, PathBuf};

use coord_proto::{DB_FILE, SOCKET_FILE};

/// Longest socket path used as is. Linux allows 107 bytes, macOS 103; stay under both.
pub const MAX_SOCKET_PATH: usize = 100;

/// The files of one project's coordination state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectPaths {
    /// The database file (`<project>/.agents/coord.db` by default).
    pub db: PathBuf,
    /// The local socket the daemon listens on.
    pub socket: PathBuf,
    /// True when the natural socket path was too long and `socket` is the short fallback.
    pub socket_fallback: bool,
    /// The daemon's lock file; it also records the pid and socket of the running daemon.
    pub lock: PathBuf,
    /// Where an auto-started daemon logs.
    pub log: PathBuf,
}

/// The project root for `cwd`: the nearest ancestor holding a `.agents/` folder, else the
/// nearest git root, else `cwd` itself. Directories inside a `.agents/` folder are never
/// roots: orch's worktrees live in `<project>/.agents/worktrees/`, and a worktree of a
/// repository that tracks files under `.agents/` has a `.agents/` (and a `.git`) of its own;
/// a worker there belongs to the enclosing project. The search does not go up into a
/// directory named in `GIT_CEILING_DIRECTORIES`, as git's own does not ([`searched`]).
pub fn project_root(cwd: &Path) -> PathBuf {
    let inside_state = |dir: &Path| dir.components().any(|c| c.as_os_str() == ".agents");
    let candidates: Vec<&Path> = searched(cwd).into_iter().filter(|d| !inside_state(d)).collect();
    if let Some(dir) = candidates.iter().find(|d| d.join(".agents").is_dir()) {
        return dir.to_path_buf();
    }
    if let Some(dir) = candidates.iter().find(|d| d.join(".git").exists()) {
        return dir.to_path_buf();
    }
    cwd.to_path_buf()
}

/// `cwd` and its ancestors, up to but not into a directory named in `GIT_CEILING_DIRECTORIES`
/// (git's list of directories its repository search never enters): with `/tmp` named there,
/// `/tmp/p/sub` searches `/tmp/p/sub` and `/tmp/p`, never `/tmp`.
pub fn searched(cwd: &Path) -> Vec<&Path> {
    let ceilings: Vec<PathBuf> = std::env::var_os(CEILING_ENV)
        .map(|v| std::env::split_paths(&v).filter(|p| p.is_absolute()).collect())
        .unwrap_or_default();
    searched_below(cwd, &ceilings).collect()
}

/// `cwd` and its ancestors below the first of `ceilings` met going up.
fn searched_below<'a>(cwd: &'a Path, ceilings: &[PathBuf]) -> impl Iterator<Item = &'a Path> {
    cwd.ancestors().take_while(|d| !ceilings.iter().any(|c| c == d))
}

/// The variable listing directories the root search never goes up into (git's own).
pub const CEILING_ENV: &str = "GIT_CEILING_DIRECTORIES";

/// Resolve the paths for an explicit database, or for the project around `cwd`.
/// Relative `db` paths are taken from `cwd`.
pub fn resolve(db: Option<&Path>, cwd: &Path) -> ProjectPaths {
    let db = match db {
        Some(p) if p.is_absolute() => p.to_path_buf(),
        Some(p) => cwd.join(p),
        None => project_root(cwd).join(".agents").join(DB_FILE),
    };
    let db = normalize(&db);
    let dir = db.parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("."));
    let file = db.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
    let sibling = |suffix: &str| -> PathBuf {
        if file == DB_FILE { dir.join(format!("coordd.{suffix}")) } else { dir.join(format!("{file}.coordd.{suffix}")) }
    };
    let natural = if file == DB_FILE { dir.join(SOCKET_FILE) } else { sibling("sock") };
    // A Unix socket's path has a length limit; a named pipe's name is derived from the path
    // (`socket::name`), so on Windows any path will do.
    let too_long = cfg!(unix) && natural.as_os_str().len() > MAX_SOCKET_PATH;
    let (socket, socket_fallback) = if too_long { (fallback_socket(&db), true) } else { (natural, false) };
    ProjectPaths { socket, socket_fallback, lock: sibling("lock"), log: sibling("log"), db }
}

/// The environment variable naming the store (a PostgreSQL URL) a daemon opens.
pub const STORE_URL_ENV: &str = "COORD_STORE_URL";
/// The project's daemon configuration file, beside the database: the store it uses.
pub const STORE_CONFIG_FILE: &str = "coordd.json";

/// `.agents/coordd.json` of the project whose database is `db`.
pub fn store_config(db: &Path) -> PathBuf {
    db.parent().unwrap_or(Path::new(".")).join(STORE_CONFIG_FILE)
}

/// Is there a project for `db`, even before its daemon runs: its SQLite file, a store
/// recorded in its configuration, or a store named in the environment?
pub fn project_exists(db: &Path) -> bool {
    db.exists() || store_config(db).exists() || std::env::var_os(STORE_URL_ENV).is_some_and(|v| !v.is_empty())
}

/// The permission policy's snapshot beside a database (`<dir>/coordd.policy.json`, or
/// `<db>.coordd.policy.json` for a database not named `coord.db`). The daemon rewrites it
/// whenever the policy changes; the permission hooks read it to decide, with no round trip,
/// that a tool call is not gated.
pub fn policy_file(db: &Path) -> PathBuf {
    let dir = db.parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("."));
    let file = db.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
    if file == DB_FILE { dir.join("coordd.policy.json") } else { dir.join(format!("{file}.coordd.policy.json")) }
}

/// Make a path absolute and drop `.` and `..` components, resolving symlinks in the part
/// that exists: the deepest existing folder is canonicalized and the rest appended. So a
/// client that computes the paths before `.agents/` exists and the daemon it starts, which
/// computes them after, always agree (the socket's name is derived from the path). On
/// Windows the canonical form's `\\?\` prefix is dropped, for the same reason and for
/// readable paths.
fn normalize(p: &Path) -> PathBuf {
    let mut lexical = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                lexical.pop();
            }
            other => lexical.push(other),
        }
    }
    // The file itself is never resolved (a symlinked database keeps its name), only folders.
    let (Some(mut base), Some(name)) = (lexical.parent(), lexical.file_name()) else { return lexical };
    let mut rest = vec![name.to_os_string()];
    loop {
        if let Ok(real) = std::fs::canonicalize(base) {
            let mut out = simplify(real);
            out.extend(rest.iter().rev());
            return out;
        }
        match (base.parent(), base.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                base = parent;
            }
            _ => return lexical,
        }
    }
}

/// `\\?\C:\x` → `C:\x` and `\\?\UNC\server\share` → `\\server\share` (Windows); other
/// paths as they are.
fn simplify(p: PathBuf) -> PathBuf {
    if !cfg!(windows) {
        return p;
    }
    let s = p.to_string_lossy();
    if let Some(unc) = s.strip_prefix(r"\\?\UNC\") {
        return PathBuf::from(format!(r"\\{unc}"));
    }
    match s.strip_prefix(r"\\?\") {
        Some(local) if local.as_bytes().get(1) == Some(&b':') => PathBuf::from(local),
        _ => p,
    }
}

/// A short socket path in the user's runtime directory, unique per database.
fn fallback_socket(db: &Path) -> PathBuf {
    let hash = fnv1a(db.as_os_str().as_encoded_bytes());
    runtime_dir().join(format!("coordd-{hash:016x}.sock"))
}

/// `$XDG_RUNTIME_DIR`, else a per-user folder under the temp dir.
pub fn runtime_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        let p = PathBuf::from(d);
        if p.is_dir() {
            return p;
        }
    }
    #[cfg(unix)]
    let user = format!("coordd-{}", current_uid());
    #[cfg(not(unix))]
    let user = "coordd".to_string();
    let base = if cfg!(unix) { PathBuf::from("/tmp") } else { std::env::temp_dir() };
    base.join(user)
}

#[cfg(unix)]
fn current_uid() -> u32 {
    // SAFETY: getuid has no preconditions and cannot fail.
    unsafe { libc::getuid() }
}

/// 64-bit FNV-1a: stable across processes and builds (unlike std's hasher).
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_layout_under_agents() {
        let tmp = std::env::temp_dir().join(format!("coord-paths-{}", std::process::id()));
        std::fs::create_dir_all(tmp.join("sub/.agents")).unwrap();
        let deep = tmp.join("sub/a/b");
        std::fs::create_dir_all(&deep).unwrap();
        let p = resolve(None, &deep);
        let root = std::fs::canonicalize(tmp.join("sub")).unwrap();
        assert_eq!(p.db, root.join(".agents/coord.db"));
        assert_eq!(p.socket, root.join(".agents/coordd.sock"));
        assert_eq!(p.lock, root.join(".agents/coordd.lock"));
        assert_eq!(p.log, root.join(".agents/coordd.log"));
        std::fs::remove_dir_all(&tmp).unwrap();
    }

    #[test]
    fn a_worktree_inside_the_state_folder_belongs_to_the_enclosing_project() {
        let tmp = std::env::temp_dir().join(format!("coord-paths-wt-{}", std::process::id()));
        let wt = tmp.join("proj/.agents/worktrees/R1/T1-a1");
        std::fs::create_dir_all(wt.join(".agents")).unwrap();
        std::fs::create_dir_all(wt.join("src")).unwrap();
        std::fs::write(wt.join(".git"), "gitdir: elsewhere").unwrap();
        assert_eq!(project_root(&wt.join("src")), tmp.join("proj"));
        std::fs::remove_dir_all(&tmp).unwrap();
    }

    #[test]
    fn the_search_stops_below_a_ceiling_directory() {
        let tmp = std::env::temp_dir().join(format!("coord-paths-ceiling-{}", std::process::id()));
        let deep = tmp.join("top/proj/sub");
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::create_dir_all(tmp.join("top/.agents")).unwrap();
        let ceiling = tmp.join("top");
        let found: Vec<&Path> = searched_below(&deep, std::slice::from_ref(&ceiling)).collect();
        assert_eq!(found, vec![deep.as_path(), tmp.join("top/proj").as_path()]);
        std::fs::remove_dir_all(&tmp).unwrap();
    }

    #[test]
    fn custom_db_name_gets_its_own_socket_and_lock() {
        let p = resolve(Some(Path::new("/x/y/other.db")), Path::new("/"));
        assert_eq!(p.socket, PathBuf::from("/x/y/other.db.coordd.sock"));
        assert_eq!(p.lock, PathBuf::from("/x/y/other.db.coordd.lock"));
        assert!(!p.socket_fallback);
    }

    #[test]
    fn long_paths_fall_back_to_a_short_stable_socket() {
        let long = format!("/{}/coord.db", "d".repeat(150));
        let a = resolve(Some(Path::new(&long)), Path::new("/"));
        let b = resolve(Some(Path::new(&long)), Path::new("/"));
        assert!(a.socket_fallback);
        assert_eq!(a.socket, b.socket);
        assert!(a.socket.as_os_str().len() <= MAX_SOCKET_PATH);
        assert!(a.lock.starts_with(format!("/{}", "d".repeat(150))));
    }
}
