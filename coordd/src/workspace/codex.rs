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

use std::path::Path;

use toml_edit::{Array, DocumentMut, InlineTable, Item, Table, value};

use super::ignore::Checkout;
use super::sessions::{MCP_SERVER, SessionEnv, merge_hooks, read_object, read_text, write, write_json};
use crate::error::{Error, Result};

pub const CONFIG: &str = ".codex/config.toml";
pub const HOOKS: &str = ".codex/hooks.json";

/// Write (merge) Codex's two files into `dir`; returns the paths written (relative) and
/// notes on what was left alone.
pub(super) fn install(
    dir: &Path,
    git: Option<&Checkout>,
    env: &SessionEnv,
    hook_base: &str,
    hook_flags: &str,
) -> Result<(Vec<&'static str>, Vec<String>)> {
    let (mut written, mut notes) = (Vec::new(), Vec::new());
    let config_path = dir.join(CONFIG);
    let hooks_path = dir.join(HOOKS);
    // Read and merge both before writing either: a bad file changes nothing.
    let config = if git.is_some_and(|g| g.tracks(CONFIG)) {
        notes.push(format!("the repository tracks {CONFIG}, so the coordd MCP server was not added for Codex"));
        None
    } else {
        let text = read_text(&config_path)?.unwrap_or_default();
        let mut doc: DocumentMut = text.parse().map_err(|e| {
            Error::invalid(format!("{}: not valid TOML ({e}); fix or remove it first", config_path.display()))
        })?;
        merge_config(&mut doc, &config_path, env)?;
        Some(doc)
    };
    let hooks = if git.is_some_and(|g| g.tracks(HOOKS)) {
        notes.push(format!("the repository tracks {HOOKS}, so the coordd hooks were not added for Codex"));
        None
    } else {
        let mut hooks = read_object(&hooks_path)?;
        let mcp = if config.is_some() { " --mcp" } else { "" };
        merge_hooks(&mut hooks, &hooks_path, hook_base, &format!("{hook_flags}{mcp} --client codex"))?;
        Some(hooks)
    };
    if let Some(doc) = config {
        write(&config_path, &doc.to_string())?;
        written.push(CONFIG);
    }
    if let Some(hooks) = hooks {
        write_json(&hooks_path, &hooks)?;
        written.push(HOOKS);
    }
    Ok((written, notes))
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
/// `.claude/`, `.mcp.json` or `CLAUDE.md`) and those on the daemon's `PATH`. Claude Code
/// when there is no sign of either.
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
    if clients.is_empty() {
        clients.push("claude".to_string());
    }
    clients
}
