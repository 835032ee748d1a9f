//! Keeping coordd's files out of the user's commits, with git's own ignore rules and
//! without touching a tracked file:
//!
//! - [`exclude_state_dir`] puts `<project>/.agents/` (the database, the socket, the
//!   worktrees) in the repository's `.git/info/exclude` (the clone's private ignore list,
//!   never committed; shared by its worktrees).
//! - Orch worktrees: git has no per-worktree exclude file (`info/exclude` is shared with the
//!   main checkout, where a person may want to commit a `CLAUDE.md`). So
//!   [`exclude_in_orch_worktrees`] adds to the repository's local config one conditional
//!   include, `[includeIf "gitdir:<git dir>/worktrees/orch-*"]`, matching only the
//!   worktrees orch creates; it points `core.excludesFile` at a file listing the session
//!   files ([`ORCH_SESSION_FILES`]) after a copy of the user's own global excludes (which
//!   `core.excludesFile` would otherwise replace there).
//! - A person's own checkout (`inbox hook install`): [`exclude_paths`] adds the files that
//!   were written, anchored, to `.git/info/exclude`.
//!
//! Every function blocks (git2, files): call them off the executor.

use std::path::{Path, PathBuf};

use git2::{ConfigLevel, Repository};

use crate::error::{Error, Result};

/// What orch worktrees never commit: the session files `sessions::install` may write there.
pub const ORCH_SESSION_FILES: [&str; 11] = [
    "/.claude/settings.local.json",
    "/.gemini/settings.json",
    "/opencode.json",
    "/.codex/config.toml",
    "/.codex/hooks.json",
    "/.mcp.json",
    "/CLAUDE.md",
    "/CLAUDE.local.md",
    "/AGENTS.md",
    "/AGENTS.override.md",
    "*.coordd-tmp",
];
/// The prefix of the git names of the worktrees orch creates (see `git::worktree_name`).
pub const ORCH_WORKTREE_PREFIX: &str = "orch-";
const HEADER: &str = "# coordd: never committed (written by coordd)";

fn git_err(context: &str) -> impl FnOnce(git2::Error) -> Error + '_ {
    move |e| Error::invalid(format!("{context}: {}", e.message()))
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |e| Error::app(coord_proto::ErrorCode::IoWriteFailed, format!("{}: {e}", path.display()))
}

/// A directory's place in git: its repository and its path inside the work tree.
pub struct Checkout {
    pub repo: Repository,
    /// The work tree root.
    pub workdir: PathBuf,
    /// `dir` relative to the work tree root (empty at the root).
    pub rel: PathBuf,
}

impl Checkout {
    /// The checkout `dir` lies in, if any.
    pub fn find(dir: &Path) -> Option<Checkout> {
        let repo = Repository::discover(dir).ok()?;
        let workdir = std::fs::canonicalize(repo.workdir()?).ok()?;
        let rel = std::fs::canonicalize(dir).ok()?.strip_prefix(&workdir).ok()?.to_path_buf();
        Some(Checkout { repo, workdir, rel })
    }

    /// Is this one of the worktrees orch creates?
    pub fn is_orch_worktree(&self) -> bool {
        self.repo.is_worktree()
            && self.repo.path().file_name().is_some_and(|n| n.to_string_lossy().starts_with(ORCH_WORKTREE_PREFIX))
    }

    /// Does the index track `name` (relative to `dir`)?
    pub fn tracks(&self, name: &str) -> bool {
        let path = self.rel.join(name);
        self.repo.index().ok().is_some_and(|i| i.get_path(&path, 0).is_some())
    }

    /// `name` (relative to `dir`) as an anchored ignore pattern.
    pub fn pattern(&self, name: &str) -> String {
        let rel = self.rel.join(name);
        format!("/{}", rel.to_string_lossy().replace('\\', "/"))
    }
}

/// Add `lines` that are missing to an ignore file (creating it), under our header.
fn append_lines(path: &Path, lines: &[String]) -> Result<()> {
    let existing = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(io_err(path)(e)),
    };
    let have: Vec<&str> = existing.lines().map(str::trim).collect();
    let missing: Vec<&String> = lines.iter().filter(|l| !have.contains(&l.as_str())).collect();
    if missing.is_empty() {
        return Ok(());
    }
    let mut text = existing.clone();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    if !have.contains(&HEADER) {
        text.push_str(HEADER);
        text.push('\n');
    }
    for l in missing {
        text.push_str(l);
        text.push('\n');
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io_err(dir))?;
    }
    std::fs::write(path, text).map_err(io_err(path))
}

/// The repository's private ignore list (`<common git dir>/info/exclude`).
fn info_exclude(repo: &Repository) -> PathBuf {
    repo.commondir().join("info").join("exclude")
}

/// Ignore `<root>/.agents/` in the git repository around `root`, if there is one.
pub fn exclude_state_dir(root: &Path) -> Result<()> {
    let Some(c) = Checkout::find(root) else { return Ok(()) };
    append_lines(&info_exclude(&c.repo), &[format!("{}/", c.pattern(".agents"))])
}

/// Ignore these files (relative to the checkout's `dir`) in `.git/info/exclude`.
pub fn exclude_paths(c: &Checkout, names: &[&str]) -> Result<()> {
    let lines: Vec<String> = names.iter().map(|n| c.pattern(n)).collect();
    append_lines(&info_exclude(&c.repo), &lines)
}

/// The user's global excludes file, as git would read it when no repository overrides it.
fn global_excludes() -> Option<String> {
    let from_config = git2::Config::open_default().ok().and_then(|c| c.get_path("core.excludesFile").ok());
    let path = from_config.or_else(|| {
        let base = std::env::var_os("XDG_CONFIG_HOME")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
        Some(base.join("git").join("ignore"))
    })?;
    std::fs::read_to_string(path).ok()
}

/// Make every orch worktree of `repo_path` ignore the session files (see the module docs).
/// Idempotent; the excludes file is rewritten each time, so it follows the user's global
/// excludes.
pub fn exclude_in_orch_worktrees(repo_path: &Path) -> Result<()> {
    let repo = Repository::open(repo_path).map_err(git_err("cannot open the repository"))?;
    let common = std::fs::canonicalize(repo.commondir()).map_err(io_err(repo.commondir()))?;
    let dir = common.join("coordd");
    std::fs::create_dir_all(&dir).map_err(io_err(&dir))?;
    let excludes = dir.join("worktree-excludes");
    let mut text = format!("{HEADER}: the session files of orch worktrees\n{}\n", ORCH_SESSION_FILES.join("\n"));
    if let Some(global) = global_excludes() {
        text.push_str("# copied from the user's global excludes file\n");
        text.push_str(&global);
        text.push('\n');
    }
    std::fs::write(&excludes, text).map_err(io_err(&excludes))?;
    let include = dir.join("worktree.gitconfig");
    let conf = format!("[core]\n\texcludesFile = {}\n", git_path(&excludes));
    if std::fs::read_to_string(&include).ok().as_deref() != Some(conf.as_str()) {
        std::fs::write(&include, conf).map_err(io_err(&include))?;
    }
    // No trailing slash: git would make it `orch-*/**`, which does not match the
    // worktree's git dir itself.
    let key = format!(
        "includeIf.gitdir:{}.path",
        git_path(&common.join("worktrees").join(format!("{ORCH_WORKTREE_PREFIX}*")))
    );
    let mut local = repo
        .config()
        .and_then(|c| c.open_level(ConfigLevel::Local))
        .map_err(git_err("cannot open the repository's config"))?;
    let want = git_path(&include);
    if local.get_string(&key).ok().as_deref() != Some(want.as_str()) {
        local.set_str(&key, &want).map_err(git_err("cannot write the repository's config"))?;
    }
    Ok(())
}

/// A path as git's configuration takes it: with `/` on Windows too (a `\` there starts an
/// escape sequence, and `gitdir:` patterns match `/`-separated paths).
fn git_path(p: &Path) -> String {
    let s = p.display().to_string();
    if cfg!(windows) { s.replace('\\', "/") } else { s }
}
