//! The OpenAI Codex CLI's session files in a worktree (Codex ignores `.mcp.json` and
//! `.claude/`):
//!
//! - `.codex/config.toml`: the `coordd` MCP server (`inbox mcp` with the absolute `--db`,
//!   `--agent` and `--task`) with `default_tools_approval_mode = "approve"` (with approvals
//!   off, Codex otherwise fails every call: "requires approval, but approval policy is
//!   never"), and the `COORD_*` variables in `shell_environment_policy.set` (Codex has no
//!   equivalent of Claude Code's settings `env`). Merged into what is there with
//!   `toml_edit`, so a person's own settings and comments stay.
//! - `.codex/hooks.json`: the same hook commands as Claude Code's (Codex sends
//!   Claude-shaped hook JSON), with `--client codex` so the handler speaks to Codex.
//!
//! The sandbox is left as the user set it: in Codex's `workspace-write` sandbox the model's
//! shell commands cannot reach the daemon's socket, but the MCP server and the hooks run
//! outside it, so the reminders name the MCP tool (docs/agent-hooks.md, "Codex").
//! A tracked `.codex/config.toml` or `.codex/hooks.json` is left alone, with a note.
//! Plain file I/O, called by `sessions::install` off the executor.

use std::path::{Path, PathBuf};

use toml_edit::{Array, DocumentMut, InlineTable, Item, Table, value};

use super::ignore::{self, Checkout};
use super::session_files::{MCP_SERVER, SessionEnv, merge_hooks, read_object, read_text, write, write_json};
use crate::error::{Error, Result};

pub const CONFIG: &str = ".codex/config.toml";
pub const HOOKS: &str = ".codex/hooks.json";

/// What [`install`] wrote.
pub(super) struct Installed {
    /// Paths relative to the worktree.
    pub files: Vec<&'static str>,
    /// The identity-free hooks of an orch worktree, in the repository's main checkout.
    pub shared_hooks: Option<PathBuf>,
    pub notes: Vec<String>,
}

/// Write (merge) Codex's two files into `dir`.
///
/// Codex (0.169) reads `.codex/hooks.json` from the repository's main checkout even in a
/// linked worktree (while `.codex/config.toml` comes from the worktree). So for an orch
/// worktree the hooks go to the main checkout, without an identity: they act for the
/// agent, task and run in the session's environment (`COORD_*`, set by the launch bridge,
/// see `coord_client::codex::session_env`), and do nothing in a session without one.
pub(super) fn install(
    dir: &Path,
    git: Option<&Checkout>,
    env: &SessionEnv,
    hook_base: &str,
    hook_flags: &str,
) -> Result<Installed> {
    let mut out = Installed { files: Vec::new(), shared_hooks: None, notes: Vec::new() };
    let config_path = dir.join(CONFIG);
    // Read and merge both before writing either: a bad file changes nothing.
    let config = if git.is_some_and(|g| g.tracks(CONFIG)) {
        out.notes.push(format!("the repository tracks {CONFIG}, so the coordd MCP server was not added for Codex"));
        None
    } else {
        let text = read_text(&config_path)?.unwrap_or_default();
        let mut doc: DocumentMut = text.parse().map_err(|e| {
            Error::invalid(format!("{}: not valid TOML ({e}); fix or remove it first", config_path.display()))
        })?;
        merge_config(&mut doc, &config_path, env)?;
        Some(doc)
    };
    let mcp = if config.is_some() { " --mcp" } else { "" };
    let main = git.filter(|g| g.is_orch_worktree()).and_then(|g| g.repo.commondir().parent().and_then(Checkout::find));
    let (hooks_path, base, flags) = match &main {
        Some(m) => (m.workdir.join(HOOKS), env.bin_quoted(), format!("{mcp} --client codex")),
        None => (dir.join(HOOKS), hook_base.to_string(), format!("{hook_flags}{mcp} --client codex")),
    };
    let hooks_git = main.as_ref().or(git);
    let hooks = if hooks_git.is_some_and(|g| g.tracks(HOOKS)) {
        out.notes.push(format!("the repository tracks {HOOKS}, so the coordd hooks were not added for Codex"));
        None
    } else {
        let mut hooks = read_object(&hooks_path)?;
        merge_hooks(&mut hooks, &hooks_path, &base, &flags)?;
        Some(hooks)
    };
    if let Some(doc) = config {
        write(&config_path, &doc.to_string())?;
        out.files.push(CONFIG);
    }
    if let Some(hooks) = hooks {
        write_json(&hooks_path, &hooks)?;
        match &main {
            Some(m) => {
                ignore::exclude_paths(m, &[HOOKS])?;
                out.shared_hooks = Some(hooks_path);
            }
            None => out.files.push(HOOKS),
        }
    }
    Ok(out)
}

/// A table at `key` of `parent`, created when absent.
fn table<'a>(parent: &'a mut Table, key: &str, path: &Path, what: &str) -> Result<&'a mut Table> {
    let item = parent.entry(key).or_insert_with(|| {
        let mut t = Table::new();
        t.set_implicit(true);
        Item::Table(t)
    });
    if let Item::Value(toml_edit::Value::InlineTable(inline)) = item {
        *item = Item::Table(std::mem::take(inline).into_table());
    }
    item.as_table_mut().ok_or_else(|| Error::invalid(format!("{}: {what} is not a table", path.display())))
}

/// Our server and environment, into a Codex config document; everything else is kept.
fn merge_config(doc: &mut DocumentMut, path: &Path, env: &SessionEnv) -> Result<()> {
    let servers = table(doc.as_table_mut(), "mcp_servers", path, "mcp_servers")?;
    let mut server = Table::new();
    server.insert("command", value(env.bin.as_str()));
    server.insert("args", value(env.mcp_args().into_iter().collect::<Array>()));
    server.insert("default_tools_approval_mode", value("approve"));
    // Codex gives an MCP server only a few variables of its own environment: pass on the
    // one that sets `inbox mcp`'s wait_reply limit, so a project can raise it for its
    // sessions without changing this fixed command line.
    server.insert("env_vars", value(Array::from_iter(["COORD_MCP_WAIT_SECONDS"])));
    servers.insert(MCP_SERVER, Item::Table(server));

    let policy = table(doc.as_table_mut(), "shell_environment_policy", path, "shell_environment_policy")?;
    let set = policy.entry("set").or_insert_with(|| value(InlineTable::new()));
    let Some(set) = set.as_table_like_mut() else {
        return Err(Error::invalid(format!("{}: shell_environment_policy.set is not a table", path.display())));
    };
    for (k, v) in env.vars() {
        match v {
            Some(v) => set.insert(k, value(v)),
            None => set.remove(k),
        };
    }
    Ok(())
}

/// The agent clients a project uses, for orch dispatch to install in its worktrees: those
/// configured in the main checkout of the repository `worktree` belongs to (`.codex/`;
/// `.claude/`, `.mcp.json` or `CLAUDE.md`; `.gemini/`; `opencode.json`) and those on the
/// daemon's `PATH`. Claude Code when there is no sign of any.
pub fn clients_in_use(worktree: &Path) -> Vec<String> {
    let main = git2::Repository::open(worktree)
        .ok()
        .and_then(|r| r.commondir().parent().map(Path::to_path_buf))
        .unwrap_or_else(|| worktree.to_path_buf());
    let configured = |names: &[&str]| names.iter().any(|n| main.join(n).exists() || worktree.join(n).exists());
    let on_path =
        |exe: &str| std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(exe).is_file()));
    let mut clients = Vec::new();
    if configured(&[".claude", ".mcp.json", "CLAUDE.md"]) || on_path("claude") {
        clients.push("claude".to_string());
    }
    if configured(&[".codex"]) || on_path("codex") {
        clients.push("codex".to_string());
    }
    if configured(&[".gemini"]) || on_path("gemini") {
        clients.push("gemini".to_string());
    }
    if configured(&["opencode.json"]) || on_path("opencode") {
        clients.push("opencode".to_string());
    }
    if clients.is_empty() {
        clients.push("claude".to_string());
    }
    clients
}
