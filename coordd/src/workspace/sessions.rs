//! Agent-session integration files: writes Claude Code hooks (`.claude/settings.json`,
//! merged into what is there), the `inbox mcp` server registration (`.mcp.json`, merged
//! likewise) and an instruction block in `CLAUDE.md` and `AGENTS.md` (replaced between
//! markers), so installing twice changes nothing. Used by `session.installHooks` and by orch dispatch
//! for every code worktree it creates. Plain file I/O: callers run it off the executor.

use std::path::{Path, PathBuf};

use coord_proto::ErrorCode;
use coord_proto::types::{InstallHooksParams, InstallHooksResult, MAX_PERMISSION_TIMEOUT};
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
const HOOK_MARK: &str = " hook claude ";
const BEGIN: &str = "<!-- coordd:mailbox:begin -->";
const END: &str = "<!-- coordd:mailbox:end -->";
/// Seconds Claude Code gives each hook before abandoning it.
const HOOK_TIMEOUT: u64 = 10;

/// Paths (relative to a worktree) that [`install`] creates; `.claude/` as git reports an
/// untracked directory.
const SESSION_FILES: [&str; 6] =
    [".claude/", ".claude", ".claude/settings.json", ".mcp.json", "CLAUDE.md", "AGENTS.md"];
/// The name of our server in `.mcp.json`.
const MCP_SERVER: &str = "coordd";

/// Is this worktree-relative path one that [`install`] writes?
pub fn is_session_file(path: &str) -> bool {
    SESSION_FILES.contains(&path)
}

fn io_err(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::app(ErrorCode::IoWriteFailed, format!("{}: {e}", path.display()))
}

/// Quote for a POSIX shell (`shlex`). A string with a NUL byte cannot be quoted; no path
/// or agent name holds one, so it is left as is and the shell will refuse it.
fn sh(s: &str) -> String {
    shlex::try_quote(s).map_or_else(|_| s.to_string(), |q| q.into_owned())
}

/// The `inbox` executable to run: as asked, else `$COORD_INBOX_BIN`, else beside this
/// daemon's executable, else `inbox` from PATH.
fn inbox_bin(asked: Option<&str>) -> String {
    if let Some(b) = asked.filter(|b| !b.is_empty()) {
        return b.to_string();
    }
    if let Ok(b) = std::env::var("COORD_INBOX_BIN")
        && !b.is_empty()
    {
        return b;
    }
    std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(|d| d.join("inbox")))
        .filter(|p| p.exists())
        .map_or_else(|| "inbox".to_string(), |p| p.display().to_string())
}

fn read_object(path: &Path) -> Result<Map<String, Value>> {
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

fn write_json(path: &Path, v: &Map<String, Value>) -> Result<()> {
    let text = serde_json::to_string_pretty(v).map_err(|e| io_err(path, e))? + "\n";
    write(path, &text)
}

fn write(path: &Path, text: &str) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| io_err(dir, e))?;
    }
    // Write beside, then rename: a crash never leaves a half-written settings file.
    let tmp = path.with_extension("coordd-tmp");
    std::fs::write(&tmp, text).map_err(|e| io_err(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| io_err(path, e))
}

fn instructions(p: &InstallHooksParams, mcp: bool, check: &str) -> String {
    let who = p.agent.as_deref().map_or(String::new(), |a| format!(" You are agent `{a}`."));
    let task = p.task_id.as_deref().map_or(String::new(), |t| format!(" Your task is `{t}`."));
    let thread = p.thread_id.as_deref().map_or(String::new(), |t| format!(" Your work thread is `{t}`."));
    let tool = if mcp { "call the `check_inbox` tool of the `coordd` MCP server, or " } else { "" };
    format!(
        "{BEGIN}\n## Coordination inbox (coordd)\n\n\
         Other sessions and people can message you while you work.{who}{task}{thread}\n\n\
         - After each subagent or long step, check your inbox: {tool}run `{check}`.\n\
         - Treat messages you receive as user input, with priority over your current plan.\n\
         - Reply with `inbox send` (or `inbox reply`); reach a linked session with `--to-peer`.\n\
         {END}\n"
    )
}

/// Replace the marked block in `path`, or append it.
fn upsert_block(path: &Path, block: &str) -> Result<()> {
    let existing = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(Error::app(ErrorCode::IoReadFailed, format!("{}: {e}", path.display()))),
    };
    let text = match (existing.find(BEGIN), existing.find(END)) {
        (Some(b), Some(e)) if e > b => {
            format!("{}{block}{}", &existing[..b], existing[e + END.len()..].trim_start_matches('\n'))
        }
        _ if existing.is_empty() => block.to_string(),
        _ => format!("{}{}\n{block}", existing, if existing.ends_with('\n') { "" } else { "\n" }),
    };
    write(path, &text)
}

/// Write the hooks and instructions into `p.dir` for the database `db`.
pub fn install(p: &InstallHooksParams, db: &Path) -> Result<InstallHooksResult> {
    let dir = PathBuf::from(&p.dir);
    if !dir.is_absolute() || !dir.is_dir() {
        return Err(Error::invalid(format!("dir '{}' must be an existing absolute directory", p.dir)));
    }
    if let Some(a) = &p.agent {
        crate::domain::check::agent("agent", a)?;
    }
    let bin = inbox_bin(p.inbox_bin.as_deref());
    let mut base = format!("{} --db {}", sh(&bin), sh(&db.display().to_string()));
    if let Some(a) = &p.agent {
        base.push_str(&format!(" --agent {}", sh(a)));
    }
    let mut task = p.task_id.as_deref().map_or(String::new(), |t| format!(" --task {}", sh(t)));
    if let Some(r) = &p.run_id {
        task.push_str(&format!(" --run {}", sh(r)));
    }

    // Read and merge both JSON files before writing either: a bad file changes nothing.
    let settings_path = dir.join(".claude").join("settings.json");
    let mut settings = read_object(&settings_path)?;
    merge_hooks(&mut settings, &settings_path, &base, &task)?;
    if let Some(agent) = &p.agent {
        merge_env(&mut settings, &settings_path, agent, p, db)?;
    }
    // `inbox mcp` serves one agent: without one, register no server that cannot start.
    let mcp_path = dir.join(".mcp.json");
    let mcp = match &p.agent {
        Some(agent) => {
            let mut mcp = read_object(&mcp_path)?;
            merge_mcp(&mut mcp, &mcp_path, &bin, db, agent, p.task_id.as_deref())?;
            Some(mcp)
        }
        None => None,
    };
    write_json(&settings_path, &settings)?;
    let mut files = vec![settings_path.display().to_string()];
    if let Some(mcp) = &mcp {
        write_json(&mcp_path, mcp)?;
        files.push(mcp_path.display().to_string());
    }

    let block = instructions(p, mcp.is_some(), &format!("{base} check{task}"));
    for name in ["CLAUDE.md", "AGENTS.md"] {
        let path = dir.join(name);
        upsert_block(&path, &block)?;
        files.push(path.display().to_string());
    }
    Ok(InstallHooksResult { files })
}

/// Add our hook commands to a settings object, replacing an earlier install of ours and
/// keeping everyone else's hooks.
fn merge_hooks(settings: &mut Map<String, Value>, path: &Path, base: &str, task: &str) -> Result<()> {
    let hooks = settings.entry("hooks").or_insert_with(|| json!({}));
    let Value::Object(hooks) = hooks else {
        return Err(Error::invalid(format!("{}: \"hooks\" is not an object", path.display())));
    };
    for (event, arg, timeout) in EVENTS {
        let groups = hooks.entry(event).or_insert_with(|| json!([]));
        let Value::Array(groups) = groups else {
            return Err(Error::invalid(format!("{}: hooks.{event} is not an array", path.display())));
        };
        groups.retain(|g| {
            !g["hooks"]
                .as_array()
                .is_some_and(|hs| hs.iter().any(|h| h["command"].as_str().is_some_and(|c| c.contains(HOOK_MARK))))
        });
        let command = format!("{base} hook claude {arg}{task}");
        groups.push(json!({"hooks": [{"type": "command", "command": command, "timeout": timeout}]}));
    }
    Ok(())
}

/// Set the session's environment (`env`, which Claude Code passes to every tool it runs):
/// who it is, and where a tool reports progress (`COORD_PROGRESS`: the daemon's socket).
/// Other variables are kept.
fn merge_env(
    settings: &mut Map<String, Value>,
    path: &Path,
    agent: &str,
    p: &InstallHooksParams,
    db: &Path,
) -> Result<()> {
    let env = settings.entry("env").or_insert_with(|| json!({}));
    let Value::Object(env) = env else {
        return Err(Error::invalid(format!("{}: \"env\" is not an object", path.display())));
    };
    let socket = coord_ipc::paths::resolve(Some(db), Path::new("/")).socket;
    env.insert("COORD_PROGRESS".into(), json!(socket.display().to_string()));
    env.insert("COORD_AGENT".into(), json!(agent));
    env.insert("COORD_DB".into(), json!(db.display().to_string()));
    for (key, v) in [("COORD_TASK", &p.task_id), ("COORD_RUN", &p.run_id)] {
        match v {
            Some(v) => env.insert(key.into(), json!(v)),
            None => env.remove(key),
        };
    }
    Ok(())
}

/// Register `inbox mcp` for `agent` (and its task) as the `coordd` server of an
/// `.mcp.json` object, keeping the other servers.
fn merge_mcp(
    mcp: &mut Map<String, Value>,
    path: &Path,
    bin: &str,
    db: &Path,
    agent: &str,
    task: Option<&str>,
) -> Result<()> {
    let servers = mcp.entry("mcpServers").or_insert_with(|| json!({}));
    let Value::Object(servers) = servers else {
        return Err(Error::invalid(format!("{}: \"mcpServers\" is not an object", path.display())));
    };
    let mut args = vec!["--db".to_string(), db.display().to_string(), "--agent".to_string(), agent.to_string()];
    args.push("mcp".to_string());
    if let Some(t) = task {
        args.extend(["--task".to_string(), t.to_string()]);
    }
    servers.insert(MCP_SERVER.to_string(), json!({"type": "stdio", "command": bin, "args": args}));
    Ok(())
}
