//! The pieces both clients' session files are made of (`sessions` for Claude Code, `codex`
//! for Codex): who the session is ([`SessionEnv`]), the hook commands merged into a
//! Claude-shaped hooks object ([`merge_hooks`]), and reading and writing the files
//! (atomically: beside, then renamed). Plain file I/O, called off the executor.

use std::path::{Path, PathBuf};

use coord_proto::ErrorCode;
use coord_proto::types::MAX_PERMISSION_TIMEOUT;
use serde_json::{Map, Value, json};

use crate::error::{Error, Result};

/// Hook events installed, with the `inbox hook claude` event each runs and the seconds
/// Claude Code gives it.
const EVENTS: [(&str, &str, u64); 5] = [
    ("SessionStart", "session-start", HOOK_TIMEOUT),
    ("UserPromptSubmit", "user-prompt-submit", HOOK_TIMEOUT),
    ("PostToolUse", "post-tool-use", HOOK_TIMEOUT),
    ("Stop", "stop", HOOK_TIMEOUT),
    // A gated call waits for its approver, at most the policy's timeout (which can change
    // while the session runs); the hook ends itself by then.
    ("PreToolUse", "pre-tool-use", MAX_PERMISSION_TIMEOUT + 30),
];

/// What marks a hook command as ours (replaced on re-install).
pub(super) const HOOK_MARK: &str = " hook claude ";

/// Seconds Claude Code gives each hook before abandoning it.
const HOOK_TIMEOUT: u64 = 10;

/// The name of our server in `.mcp.json`.
pub(super) const MCP_SERVER: &str = "coordd";

pub(super) fn io_err(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::app(ErrorCode::IoWriteFailed, format!("{}: {e}", path.display()))
}

/// Quote for a POSIX shell (`shlex`). A string with a NUL byte cannot be quoted; no path
/// or agent name holds one, so it is left as is and the shell will refuse it.
///
/// On Windows Claude Code runs hook commands with Git Bash (cmd or PowerShell when there
/// is none): paths get `/` separators (a `\` is an escape in bash), and a word that needs
/// no quoting stays bare, which all three shells read alike; one that does is quoted for
/// bash, in double quotes (also cmd's) unless it holds a character special inside them.
pub(super) fn sh(s: &str) -> String {
    let s = if cfg!(windows) { s.replace('\\', "/") } else { s.to_string() };
    let bare = !s.is_empty()
        && s.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | ':' | '.' | '_' | '-' | '+' | ',' | '@'));
    if cfg!(windows) && !bare && !s.contains(['$', '`', '"', '!', '\\']) {
        return format!("\"{s}\"");
    }
    shlex::try_quote(&s).map_or_else(|_| s.clone(), |q| q.into_owned())
}

pub(super) fn read_object(path: &Path) -> Result<Map<String, Value>> {
    match std::fs::read_to_string(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Map::new()),
        Err(e) => Err(Error::app(ErrorCode::IoReadFailed, format!("{}: {e}", path.display()))),
        Ok(text) if text.trim().is_empty() => Ok(Map::new()),
        Ok(text) => match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(m)) => Ok(m),
            _ => Err(Error::invalid(format!("{} is not a JSON object; fix or remove it first", path.display()))),
        },
    }
}

pub(super) fn write_json(path: &Path, v: &Map<String, Value>) -> Result<()> {
    let text = serde_json::to_string_pretty(v).map_err(|e| io_err(path, e))? + "\n";
    write(path, &text)
}

pub(super) fn write(path: &Path, text: &str) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
    }
    // Write beside, then rename: a crash never leaves a half-written settings file.
    let tmp = path.with_extension("coordd-tmp");
    std::fs::write(&tmp, text).map_err(|e| io_err(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| io_err(path, e))
}

pub(super) fn read_text(path: &Path) -> Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::app(ErrorCode::IoReadFailed, format!("{}: {e}", path.display()))),
    }
}

/// Who a session is, as its hooks, MCP server and environment say it.
pub(super) struct SessionEnv {
    /// The `inbox` executable.
    pub bin: String,
    pub db: PathBuf,
    pub agent: String,
    pub task: Option<String>,
    pub run: Option<String>,
}

impl SessionEnv {
    /// The `inbox` executable, quoted for a shell.
    pub fn bin_quoted(&self) -> String {
        sh(&self.bin)
    }

    /// The arguments of `inbox mcp` for this session.
    pub fn mcp_args(&self) -> Vec<String> {
        let mut args =
            vec!["--db".into(), self.db.display().to_string(), "--agent".into(), self.agent.clone(), "mcp".into()];
        if let Some(t) = &self.task {
            args.extend(["--task".to_string(), t.clone()]);
        }
        args
    }

    /// The session's environment: who it is, and where a tool reports progress
    /// (`COORD_PROGRESS`: the daemon's socket). `None`: remove the variable.
    pub fn vars(&self) -> Vec<(&'static str, Option<String>)> {
        let socket = coord_ipc::paths::resolve(Some(&self.db), Path::new("/")).socket;
        vec![
            ("COORD_PROGRESS", Some(socket.display().to_string())),
            ("COORD_AGENT", Some(self.agent.clone())),
            ("COORD_DB", Some(self.db.display().to_string())),
            ("COORD_TASK", self.task.clone()),
            ("COORD_RUN", self.run.clone()),
        ]
    }
}

/// Is this hook group one of ours?
pub(super) fn is_ours(group: &Value) -> bool {
    group["hooks"]
        .as_array()
        .is_some_and(|hs| hs.iter().any(|h| h["command"].as_str().is_some_and(|c| c.contains(HOOK_MARK))))
}

/// Add our hook commands to a settings object, replacing an earlier install of ours and
/// keeping everyone else's hooks.
pub(super) fn merge_hooks(settings: &mut Map<String, Value>, path: &Path, base: &str, task: &str) -> Result<()> {
    let hooks = settings.entry("hooks").or_insert_with(|| json!({}));
    let Value::Object(hooks) = hooks else {
        return Err(Error::invalid(format!("{}: \"hooks\" is not an object", path.display())));
    };
    for (event, arg, timeout) in EVENTS {
        let groups = hooks.entry(event).or_insert_with(|| json!([]));
        let Value::Array(groups) = groups else {
            return Err(Error::invalid(format!("{}: hooks.{event} is not an array", path.display())));
        };
        groups.retain(|g| !is_ours(g));
        let command = format!("{base} hook claude {arg}{task}");
        groups.push(json!({"hooks": [{"type": "command", "command": command, "timeout": timeout}]}));
    }
    Ok(())
}
