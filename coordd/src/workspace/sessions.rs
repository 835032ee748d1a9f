//! Agent-session integration files, written so that they never reach a commit, for the
//! clients asked for (`claude`, the default; `codex`, `gemini` and `opencode`, whose files
//! are in the modules of those names):
//!
//! - Claude Code hooks in `.claude/settings.local.json` (Claude Code's own uncommitted
//!   settings), merged into what is there, and, when asked (orch's worktrees), the approval
//!   of the `coordd` MCP server (`enabledMcpjsonServers`);
//! - the `inbox mcp` server registration in `.mcp.json`, merged likewise (left alone when
//!   the repository tracks it);
//! - an instruction block in `CLAUDE.md` and `AGENTS.md` (replaced between markers). A file
//!   the repository tracks, or one a person wrote without our block, is never modified: the
//!   block goes to `CLAUDE.local.md` (Claude Code reads it beside `CLAUDE.md`) and to
//!   `AGENTS.override.md` (which Codex reads instead of `AGENTS.md`, so it starts with a
//!   copy of it).
//!
//! Then git is told to ignore what was written (see `ignore`): orch worktrees through their
//! shared conditional excludes, a person's checkout through `.git/info/exclude`. Installing
//! twice changes nothing. Used by `session.installHooks` and by orch dispatch for every code
//! worktree. Plain file and git I/O: callers run it off the executor.

use std::path::{Path, PathBuf};

use coord_proto::types::{HOOK_CLIENTS, InstallHooksParams, InstallHooksResult};
use serde_json::{Map, Value, json};

use super::ignore::{self, Checkout};
use super::session_files::{
    MCP_SERVER, SessionEnv, io_err, is_ours, merge_hooks, read_object, read_text, sh, write, write_json,
};
use crate::error::{Error, Result};

const BEGIN: &str = "<!-- coordd:mailbox:begin -->";
const END: &str = "<!-- coordd:mailbox:end -->";

/// Paths (relative to a worktree) that [`install`] may create; `.claude/` as git reports an
/// untracked directory.
const SESSION_FILES: [&str; 16] = [
    ".claude/",
    ".gemini/",
    ".gemini",
    ".gemini/settings.json",
    "opencode.json",
    ".codex/",
    ".codex",
    ".codex/config.toml",
    ".codex/hooks.json",
    ".claude",
    ".claude/settings.local.json",
    ".mcp.json",
    "CLAUDE.md",
    "CLAUDE.local.md",
    "AGENTS.md",
    "AGENTS.override.md",
];

/// Is this worktree-relative path one that [`install`] writes?
pub fn is_session_file(path: &str) -> bool {
    SESSION_FILES.contains(&path)
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
        .and_then(|e| e.parent().map(|d| d.join(format!("inbox{}", std::env::consts::EXE_SUFFIX))))
        .filter(|p| p.exists())
        .map_or_else(|| "inbox".to_string(), |p| p.display().to_string())
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

/// `text` with the marked block replaced, or appended.
fn with_block(text: &str, block: &str) -> String {
    match (text.find(BEGIN), text.find(END)) {
        (Some(b), Some(e)) if e > b => {
            format!("{}{block}{}", &text[..b], text[e + END.len()..].trim_start_matches('\n'))
        }
        _ if text.is_empty() => block.to_string(),
        _ => format!("{}{}\n{block}", text, if text.ends_with('\n') { "" } else { "\n" }),
    }
}

/// Where an instruction file's block goes: the file itself when it is ours to edit (it does
/// not exist, or it already holds our block, and git does not track it), else `alternate`.
fn instruction_target<'a>(dir: &Path, git: Option<&Checkout>, name: &'a str, alternate: &'a str) -> Result<&'a str> {
    if git.is_some_and(|g| g.tracks(name)) {
        return Ok(alternate);
    }
    Ok(match read_text(&dir.join(name))? {
        Some(t) if !t.contains(BEGIN) => alternate,
        _ => name,
    })
}

/// The clients asked for, checked (Claude Code, Codex, Gemini CLI, opencode); none means
/// Claude Code alone.
fn clients(asked: &[String]) -> Result<(bool, bool, bool, bool)> {
    if let Some(bad) = asked.iter().find(|c| !HOOK_CLIENTS.contains(&c.as_str())) {
        return Err(Error::invalid(format!("unknown client '{bad}': expected one of {}", HOOK_CLIENTS.join(", "))));
    }
    let has = |c: &str| asked.iter().any(|a| a == c);
    Ok((asked.is_empty() || has("claude"), has("codex"), has("gemini"), has("opencode")))
}

/// Write the hooks and instructions into `p.dir` for the database `db`, and keep them out
/// of git.
pub fn install(p: &InstallHooksParams, db: &Path) -> Result<InstallHooksResult> {
    let dir = PathBuf::from(&p.dir);
    if !dir.is_absolute() || !dir.is_dir() {
        return Err(Error::invalid(format!("dir '{}' must be an existing absolute directory", p.dir)));
    }
    let Some(agent) = p.agent.as_deref() else {
        return Err(Error::invalid("hooks act for an agent: name it (agent); without one they would do nothing"));
    };
    crate::domain::check::agent("agent", agent)?;
    let (claude, codex, gemini, opencode) = clients(&p.clients)?;
    let git = Checkout::find(&dir);
    let mut notes = Vec::new();
    let bin = inbox_bin(p.inbox_bin.as_deref());
    let env = SessionEnv {
        bin: bin.clone(),
        db: db.to_path_buf(),
        agent: agent.to_string(),
        task: p.task_id.clone(),
        run: p.run_id.clone(),
    };
    let base = format!("{} --db {} --agent {}", sh(&bin), sh(&db.display().to_string()), sh(agent));
    let task = p.task_id.as_deref().map_or(String::new(), |t| format!(" --task {}", sh(t)));
    // The hooks also know the run (`inbox check` does not take it).
    let run = p.run_id.as_deref().map_or(String::new(), |r| format!(" --run {}", sh(r)));

    // `inbox mcp` serves one agent; a tracked `.mcp.json` is left alone.
    let mcp_path = dir.join(".mcp.json");
    let mcp = if !claude {
        None
    } else if git.as_ref().is_some_and(|g| g.tracks(".mcp.json")) {
        notes.push("the repository tracks .mcp.json, so the coordd MCP server was not added to it".to_string());
        None
    } else {
        let mut mcp = read_object(&mcp_path)?;
        merge_mcp(&mut mcp, &mcp_path, &env)?;
        Some(mcp)
    };
    // Read and merge the JSON files before writing any: a bad file changes nothing.
    let settings_path = dir.join(".claude").join("settings.local.json");
    let mut settings = read_object(&settings_path)?;
    let hook_flags = format!("{task}{run}{}", if mcp.is_some() { " --mcp" } else { "" });
    merge_hooks(&mut settings, &settings_path, &base, &hook_flags)?;
    merge_env(&mut settings, &settings_path, &env)?;
    if p.approve_mcp && mcp.is_some() {
        approve_mcp(&mut settings, &settings_path)?;
    }
    let claude_md = instruction_target(&dir, git.as_ref(), "CLAUDE.md", "CLAUDE.local.md")?;
    let agents_md = instruction_target(&dir, git.as_ref(), "AGENTS.md", "AGENTS.override.md")?;

    let mut written = Vec::new();
    let mut extra = Vec::new();
    let mut has_mcp = mcp.is_some();
    if codex {
        let done = super::codex::install(&dir, git.as_ref(), &env, &base, &format!("{task}{run}"))?;
        has_mcp |= done.files.contains(&super::codex::CONFIG);
        written.extend(done.files);
        notes.extend(done.notes);
        extra.extend(done.shared_hooks);
    }
    if gemini {
        let (done, n) = super::gemini::install(&dir, git.as_ref(), &env, &base, &format!("{task}{run}"), agents_md)?;
        has_mcp |= done;
        written.extend(done.then_some(super::gemini::SETTINGS));
        notes.extend(n);
    }
    if opencode {
        let (done, plugin, n) = super::opencode::install(&dir, git.as_ref(), &env, agents_md)?;
        has_mcp |= done;
        written.extend(done.then_some(super::opencode::CONFIG));
        notes.extend(n);
        extra.extend(plugin);
    }
    let block = instructions(p, has_mcp, &format!("{base} check{task}"));
    if claude {
        write_json(&settings_path, &settings)?;
        if remove_old_hooks(&dir, git.as_ref())? {
            notes
                .push("moved the hooks of an earlier install from .claude/settings.json to settings.local.json".into());
        }
        written.push(".claude/settings.local.json");
        if let Some(mcp) = &mcp {
            write_json(&mcp_path, mcp)?;
            written.push(".mcp.json");
        }
        let claude_text = read_text(&dir.join(claude_md))?.unwrap_or_default();
        write(&dir.join(claude_md), &with_block(&claude_text, &block))?;
        written.push(claude_md);
    }
    // Codex reads AGENTS.override.md instead of AGENTS.md: the override carries both.
    let agents_text = match (agents_md, read_text(&dir.join("AGENTS.md"))?) {
        ("AGENTS.override.md", Some(original)) => {
            let original = with_block(&original, "").trim_end().to_string();
            format!("{original}\n\n{block}")
        }
        _ => read_text(&dir.join(agents_md))?.unwrap_or_default(),
    };
    write(&dir.join(agents_md), &with_block(&agents_text, &block))?;
    written.push(agents_md);

    match &git {
        Some(g) if g.is_orch_worktree() => {
            ignore::exclude_in_orch_worktrees(&g.workdir)?;
        }
        Some(g) => ignore::exclude_paths(g, &written)?,
        None => {}
    }
    let clients = [(claude, "claude"), (codex, "codex"), (gemini, "gemini"), (opencode, "opencode")];
    let clients = clients.iter().filter(|c| c.0).map(|c| c.1.to_string()).collect();
    let files = written.iter().map(|f| dir.join(f)).chain(extra);
    Ok(InstallHooksResult { files: files.map(|f| f.display().to_string()).collect(), notes, clients })
}

/// Approve our `.mcp.json` server in Claude Code's local settings.
fn approve_mcp(settings: &mut Map<String, Value>, path: &Path) -> Result<()> {
    let list = settings.entry("enabledMcpjsonServers").or_insert_with(|| json!([]));
    let Value::Array(list) = list else {
        return Err(Error::invalid(format!("{}: \"enabledMcpjsonServers\" is not an array", path.display())));
    };
    if !list.iter().any(|v| v == MCP_SERVER) {
        list.push(json!(MCP_SERVER));
    }
    Ok(())
}

/// Earlier versions wrote the hooks into `.claude/settings.json`. Take ours out of it (when
/// git does not track it), so the hooks do not run twice; a file left with nothing else is
/// removed. Returns whether it was changed.
fn remove_old_hooks(dir: &Path, git: Option<&Checkout>) -> Result<bool> {
    let path = dir.join(".claude").join("settings.json");
    if !path.exists() || git.is_some_and(|g| g.tracks(".claude/settings.json")) {
        return Ok(false);
    }
    let Ok(mut settings) = read_object(&path) else { return Ok(false) };
    let Some(Value::Object(hooks)) = settings.get_mut("hooks") else { return Ok(false) };
    let mut changed = false;
    for groups in hooks.values_mut() {
        if let Value::Array(groups) = groups {
            let before = groups.len();
            groups.retain(|g| !is_ours(g));
            changed |= groups.len() != before;
        }
    }
    hooks.retain(|_, g| g.as_array().is_none_or(|a| !a.is_empty()));
    if !changed {
        return Ok(false);
    }
    if hooks.is_empty() {
        settings.remove("hooks");
    }
    if settings.is_empty() {
        std::fs::remove_file(&path).map_err(|e| io_err(&path, e))?;
    } else {
        write_json(&path, &settings)?;
    }
    Ok(true)
}

/// Set the session's environment (`env`, which Claude Code passes to every tool it runs;
/// see [`SessionEnv::vars`]). Other variables are kept.
fn merge_env(settings: &mut Map<String, Value>, path: &Path, session: &SessionEnv) -> Result<()> {
    let env = settings.entry("env").or_insert_with(|| json!({}));
    let Value::Object(env) = env else {
        return Err(Error::invalid(format!("{}: \"env\" is not an object", path.display())));
    };
    for (key, v) in session.vars() {
        match v {
            Some(v) => env.insert(key.into(), json!(v)),
            None => env.remove(key),
        };
    }
    Ok(())
}

/// Register `inbox mcp` for the session's agent (and its task) as the `coordd` server of an
/// `.mcp.json` object, keeping the other servers.
fn merge_mcp(mcp: &mut Map<String, Value>, path: &Path, env: &SessionEnv) -> Result<()> {
    let servers = mcp.entry("mcpServers").or_insert_with(|| json!({}));
    let Value::Object(servers) = servers else {
        return Err(Error::invalid(format!("{}: \"mcpServers\" is not an object", path.display())));
    };
    servers.insert(MCP_SERVER.to_string(), json!({"type": "stdio", "command": env.bin, "args": env.mcp_args()}));
    Ok(())
}
