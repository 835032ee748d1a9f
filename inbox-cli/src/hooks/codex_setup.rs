//! Which agent clients `inbox hook install` writes for, Codex's global trust
//! (`--trust-global`), and `inbox hook doctor`: what a worktree has installed and whether
//! Codex would skip it. Codex loads a project's `.codex/` only for a trusted project and
//! runs its hooks only when they are trusted, and says nothing when it skips them; the
//! flags that trust one invocation are `coord_client::codex::trust_args`.

use std::path::{Path, PathBuf};

use coord_cli::CliError;
use coord_proto::ErrorCode;
use serde::Serialize;
use serde_json::Value;

use coord_cli::Ctx;

use super::ClientChoice;

/// Is `exe` on `PATH`?
pub(super) fn on_path(exe: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(exe).is_file()))
}

/// The clients to install for: as asked, else every client on `PATH` or configured in
/// `dir`, else Claude Code.
pub fn clients(asked: Option<ClientChoice>, dir: &Path) -> Vec<String> {
    let one = |c: &str| vec![c.to_string()];
    match asked {
        Some(ClientChoice::Claude) => one("claude"),
        Some(ClientChoice::Codex) => one("codex"),
        Some(ClientChoice::Gemini) => one("gemini"),
        Some(ClientChoice::Opencode) => one("opencode"),
        Some(ClientChoice::All) => ["claude", "codex", "gemini", "opencode"].map(String::from).into(),
        None => {
            let has = |names: &[&str]| names.iter().any(|n| dir.join(n).exists());
            let codex = on_path("codex") || has(&[".codex"]);
            let gemini = on_path("gemini") || has(&[".gemini"]);
            let opencode = on_path("opencode") || has(&["opencode.json"]);
            let claude = on_path("claude") || has(&[".claude", ".mcp.json"]) || !(codex || gemini || opencode);
            let found = [(claude, "claude"), (codex, "codex"), (gemini, "gemini"), (opencode, "opencode")];
            found.iter().filter(|c| c.0).map(|c| c.1.to_string()).collect()
        }
    }
}

/// The user's global Codex config: `$CODEX_HOME/config.toml`, else `~/.codex/config.toml`.
pub fn global_config() -> PathBuf {
    match std::env::var_os("CODEX_HOME").filter(|h| !h.is_empty()) {
        Some(home) => PathBuf::from(home).join("config.toml"),
        None => PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".codex").join("config.toml"),
    }
}

pub(super) fn read_toml(path: &Path) -> Result<Option<toml_edit::DocumentMut>, CliError> {
    match std::fs::read_to_string(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(CliError::App(ErrorCode::IoReadFailed, format!("{}: {e}", path.display()))),
        Ok(t) => t.parse().map(Some).map_err(|e| CliError::Invalid(format!("{}: not valid TOML: {e}", path.display()))),
    }
}

/// Does the global config trust `dir`?
pub(super) fn trusted(doc: Option<&toml_edit::DocumentMut>, dir: &Path) -> bool {
    let key = dir.display().to_string();
    doc.and_then(|d| d.get("projects")?.get(&key)?.get("trust_level")?.as_str().map(|t| t == "trusted"))
        .unwrap_or(false)
}

/// What `--trust-global` did.
#[derive(Serialize)]
pub struct GlobalTrust {
    pub path: String,
    /// The TOML appended; empty when the project was trusted already.
    pub added: String,
}

/// Trust `dir` in the global Codex config: show what is added, then append it.
pub fn trust_global(ctx: &Ctx, dir: &Path) -> Result<GlobalTrust, CliError> {
    let path = global_config();
    let doc = read_toml(&path)?;
    if trusted(doc.as_ref(), dir) {
        return Ok(GlobalTrust { path: path.display().to_string(), added: String::new() });
    }
    let added = coord_client::codex::global_trust_toml(dir);
    if !ctx.json {
        println!("adding to {}:{added}", path.display());
    }
    let io = |e: std::io::Error| CliError::App(ErrorCode::IoWriteFailed, format!("{}: {e}", path.display()));
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io)?;
    }
    let mut text = std::fs::read_to_string(&path).unwrap_or_default();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&added);
    std::fs::write(&path, text).map_err(io)?;
    Ok(GlobalTrust { path: path.display().to_string(), added })
}

/// One finding of `hook doctor`.
#[derive(Serialize)]
pub(super) struct Check {
    pub(super) client: &'static str,
    /// `ok`, `warn` (Codex or Claude Code would not get coordd's help) or `info`.
    pub(super) status: &'static str,
    pub(super) message: String,
}

pub(super) fn json_file(path: &Path) -> Option<Value> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

/// Does a hooks file hold our hook commands?
pub(super) fn has_our_hooks(hooks: Option<Value>) -> bool {
    hooks.is_some_and(|h| h["hooks"].to_string().contains(" hook claude "))
}

/// The main checkout of the repository whose linked worktree `dir` is (its `.git` is a
/// file, `gitdir: <main>/.git/worktrees/<name>`); `None` for anything else.
pub(super) fn main_checkout(dir: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(dir.join(".git")).ok()?;
    let gitdir = PathBuf::from(text.trim().strip_prefix("gitdir:")?.trim());
    let gitdir = if gitdir.is_absolute() { gitdir } else { dir.join(gitdir) };
    Some(gitdir.parent()?.parent()?.parent()?.to_path_buf())
}
