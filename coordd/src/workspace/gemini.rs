//! Gemini CLI's session file in a worktree: `.gemini/settings.json`, merged into what is
//! there (a tracked one is left alone, with a note):
//!
//! - `mcpServers.coordd`: `inbox mcp` with the absolute `--db`, `--agent` and `--task`,
//!   `trust: true` (no confirmation per call, even outside `yolo`);
//! - `hooks`: the Claude Code hook handler (`inbox hook claude EVENT --client gemini`) on
//!   Gemini's events — SessionStart, BeforeAgent (UserPromptSubmit), AfterTool
//!   (PostToolUse), AfterAgent (Stop), BeforeTool (PreToolUse) — with Gemini's timeouts,
//!   in milliseconds;
//! - `context.fileName`: the instruction file holding coordd's block (Gemini CLI reads
//!   only `GEMINI.md` unless told), beside `GEMINI.md`.
//!
//! Gemini CLI loads project settings only in a trusted folder: the launch bridge trusts
//! the worktree for its process alone (`GEMINI_CLI_TRUST_WORKSPACE=true`);
//! docs/agent-hooks.md, "Gemini CLI". Plain file I/O, called by `sessions::install` off
//! the executor.

use std::path::Path;

use coord_proto::types::MAX_PERMISSION_TIMEOUT;
use serde_json::{Map, Value, json};

use super::ignore::Checkout;
use super::session_files::{HOOK_MARK, MCP_SERVER, SessionEnv, is_ours, read_object, write_json};
use crate::error::{Error, Result};

pub const SETTINGS: &str = ".gemini/settings.json";

/// Gemini's hook events, the `inbox hook claude` event each runs, and its timeout (ms).
const EVENTS: [(&str, &str, u64); 5] = [
    ("SessionStart", "session-start", 10_000),
    ("BeforeAgent", "user-prompt-submit", 10_000),
    ("AfterTool", "post-tool-use", 10_000),
    ("AfterAgent", "stop", 10_000),
    // A gated call waits for its approver, at most the policy's timeout.
    ("BeforeTool", "pre-tool-use", (MAX_PERMISSION_TIMEOUT + 30) * 1000),
];

/// Merge coordd's entries into `dir`'s `.gemini/settings.json`. `instructions` is the
/// file (relative to `dir`) that holds coordd's instruction block. Returns the notes; the
/// file is written unless it is tracked (then `false`).
pub(super) fn install(
    dir: &Path,
    git: Option<&Checkout>,
    env: &SessionEnv,
    hook_base: &str,
    hook_flags: &str,
    instructions: &str,
) -> Result<(bool, Vec<String>)> {
    if git.is_some_and(|g| g.tracks(SETTINGS)) {
        return Ok((false, vec![format!("the repository tracks {SETTINGS}, so nothing was added for Gemini CLI")]));
    }
    let path = dir.join(SETTINGS);
    let mut settings = read_object(&path)?;
    let servers = object(&mut settings, "mcpServers", &path)?;
    servers.insert(MCP_SERVER.to_string(), json!({"command": env.bin, "args": env.mcp_args(), "trust": true}));
    let hooks = object(&mut settings, "hooks", &path)?;
    for (event, arg, timeout) in EVENTS {
        let groups = hooks.entry(event).or_insert_with(|| json!([]));
        let Value::Array(groups) = groups else {
            return Err(Error::invalid(format!("{}: hooks.{event} is not an array", path.display())));
        };
        groups.retain(|g| !is_ours(g));
        let command = format!("{hook_base}{HOOK_MARK}{arg}{hook_flags} --mcp --client gemini");
        groups.push(json!({"hooks": [{"type": "command", "command": command, "timeout": timeout}]}));
    }
    let context = object(&mut settings, "context", &path)?;
    let names = context.entry("fileName").or_insert_with(|| json!(["GEMINI.md"]));
    if let Value::String(one) = names {
        *names = json!([one.clone()]);
    }
    let Value::Array(names) = names else {
        return Err(Error::invalid(format!("{}: context.fileName is not a list", path.display())));
    };
    if !names.iter().any(|n| n == instructions) {
        names.push(json!(instructions));
    }
    write_json(&path, &settings)?;
    Ok((true, Vec::new()))
}

/// The object at `key`, created when absent.
pub(super) fn object<'a>(m: &'a mut Map<String, Value>, key: &str, path: &Path) -> Result<&'a mut Map<String, Value>> {
    match m.entry(key).or_insert_with(|| json!({})) {
        Value::Object(o) => Ok(o),
        _ => Err(Error::invalid(format!("{}: \"{key}\" is not an object", path.display()))),
    }
}
