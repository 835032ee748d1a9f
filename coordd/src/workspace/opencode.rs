//! opencode's session files:
//!
//! - `opencode.json` in the worktree, merged into what is there (a tracked one is left
//!   alone, with a note): `mcp.coordd` (`inbox mcp` with the absolute `--db`, `--agent`
//!   and `--task`, as one command array) and a `plugin` entry naming coordd's plugin by an
//!   absolute `file://` URL, with the session's identity as the plugin's options; when
//!   coordd's instruction block went to `AGENTS.override.md` (which opencode does not
//!   read), an `instructions` entry naming it.
//! - The plugin itself (`opencode_plugin.js`, identity-free, rewritten on each install)
//!   beside the database, never in the worktree: opencode runs an npm install in every
//!   `.opencode/` directory it finds, so coordd writes none. The plugin runs `inbox hook
//!   claude EVENT --client opencode` for each opencode hook and applies the answer
//!   (docs/agent-hooks.md, "opencode").
//!
//! Plain file I/O, called by `sessions::install` off the executor.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::gemini::object;
use super::ignore::Checkout;
use super::session_files::{MCP_SERVER, SessionEnv, read_object, read_text, write, write_json};
use crate::error::{Error, Result};

pub const CONFIG: &str = "opencode.json";
/// The plugin's file name, beside the database.
const PLUGIN_FILE: &str = "coordd-opencode-plugin.js";
const PLUGIN: &str = include_str!("opencode_plugin.js");

/// Where the plugin goes for the database `db`.
pub fn plugin_path(db: &Path) -> PathBuf {
    db.parent().unwrap_or(Path::new(".")).join(PLUGIN_FILE)
}

/// Merge coordd's entries into `dir`'s `opencode.json` and write the plugin beside `db`.
/// `instructions` is the file (relative to `dir`) holding coordd's block. Returns whether
/// `opencode.json` was written, the plugin's path and the notes.
pub(super) fn install(
    dir: &Path,
    git: Option<&Checkout>,
    env: &SessionEnv,
    instructions: &str,
) -> Result<(bool, Option<PathBuf>, Vec<String>)> {
    if git.is_some_and(|g| g.tracks(CONFIG)) {
        return Ok((false, None, vec![format!("the repository tracks {CONFIG}, so nothing was added for opencode")]));
    }
    let path = dir.join(CONFIG);
    let mut config = read_object(&path)?;
    let mut command = vec![env.bin.clone()];
    command.extend(env.mcp_args());
    object(&mut config, "mcp", &path)?
        .insert(MCP_SERVER.to_string(), json!({"type": "local", "enabled": true, "command": command}));
    let plugin = plugin_path(&env.db);
    let url = file_url(&plugin);
    let options = json!({
        "inbox": env.bin, "db": env.db.display().to_string(), "agent": env.agent,
        "task": env.task, "run": env.run, "mcp": true,
    });
    let list = config.entry("plugin").or_insert_with(|| json!([]));
    let Value::Array(list) = list else {
        return Err(Error::invalid(format!("{}: \"plugin\" is not a list", path.display())));
    };
    list.retain(|p| !is_ours(p));
    list.push(json!([url, options]));
    if instructions != "AGENTS.md" {
        let file = dir.join(instructions).display().to_string();
        let list = config.entry("instructions").or_insert_with(|| json!([]));
        let Value::Array(list) = list else {
            return Err(Error::invalid(format!("{}: \"instructions\" is not a list", path.display())));
        };
        if !list.iter().any(|f| f == file.as_str()) {
            list.push(json!(file));
        }
    }
    if read_text(&plugin)?.as_deref() != Some(PLUGIN) {
        write(&plugin, PLUGIN)?;
    }
    write_json(&path, &config)?;
    Ok((true, Some(plugin), Vec::new()))
}

/// Is this `plugin` entry ours (a string or `[url, options]` naming our plugin file)?
fn is_ours(entry: &Value) -> bool {
    let url = entry.as_str().or_else(|| entry.get(0).and_then(Value::as_str));
    url.is_some_and(|u| u.ends_with(&format!("/{PLUGIN_FILE}")))
}

/// An absolute path as a `file://` URL (spaces and `%` escaped).
fn file_url(path: &Path) -> String {
    let p = path.display().to_string().replace('\\', "/").replace('%', "%25").replace(' ', "%20");
    if p.starts_with('/') { format!("file://{p}") } else { format!("file:///{p}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn our_plugin_entries_are_recognised_in_both_shapes() {
        let url = file_url(Path::new("/p/my db/.agents/coordd-opencode-plugin.js"));
        assert_eq!(url, "file:///p/my%20db/.agents/coordd-opencode-plugin.js");
        assert!(is_ours(&json!(url)) && is_ours(&json!([url, {"agent": "w1"}])));
        assert!(!is_ours(&json!("opencode-wakatime")) && !is_ours(&json!(["file:///x/other.js", {}])));
    }
}
