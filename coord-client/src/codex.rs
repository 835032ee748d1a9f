//! Starting the OpenAI Codex CLI in a worktree where `inbox hook install --client codex`
//! wrote `.codex/config.toml` (the `coordd` MCP server) and `.codex/hooks.json`, without
//! editing the user's global `~/.codex/config.toml`.
//!
//! Codex (CLI 0.169) loads a project's `.codex/` only for a trusted project, and runs its
//! hooks only when they are trusted too; otherwise both are skipped silently (no warning
//! from `codex exec`, and queued mail stays queued). [`trust_args`] are the `codex`
//! arguments that make one worktree trusted for one invocation: a `-c projects=…` override
//! (a dotted `-c projects."<dir>".trust_level` key does not work for paths, the inline
//! table does) and `--dangerously-bypass-hook-trust`. This is the one place that knows
//! them: the launch bridge and the tests use it, and `inbox hook doctor` names it.

use std::path::Path;

/// The name of coordd's MCP server in Codex's configuration, so the model sees its tools
/// as `mcp__coordd__<tool>` (and hooks see that tool name).
pub const MCP_SERVER: &str = "coordd";

/// The flag that runs the project's hooks without Codex's persisted hook trust.
pub const BYPASS_HOOK_TRUST: &str = "--dangerously-bypass-hook-trust";

/// The TOML inline-table value trusting `dirs`: `{"<dir>"={trust_level="trusted"}}`.
fn projects_value(dirs: &[&Path]) -> String {
    let entries: Vec<String> =
        dirs.iter().map(|d| format!("{}={{trust_level=\"trusted\"}}", toml_string(&d.display().to_string()))).collect();
    format!("{{{}}}", entries.join(","))
}

/// A TOML basic string.
pub fn toml_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The `codex` / `codex exec` arguments that trust `worktree` (absolute: the directory
/// Codex runs in, where `.codex/` is) and its hooks for this invocation only. Pass the
/// repository root too when the worktree is inside a larger checkout.
///
/// ```
/// let args = coord_client::codex::trust_args(&[std::path::Path::new("/w/t1")]);
/// assert_eq!(args, ["-c", r#"projects={"/w/t1"={trust_level="trusted"}}"#, "--dangerously-bypass-hook-trust"]);
/// ```
pub fn trust_args(dirs: &[&Path]) -> Vec<String> {
    vec!["-c".to_string(), format!("projects={}", projects_value(dirs)), BYPASS_HOOK_TRUST.to_string()]
}

/// What `inbox hook install --client codex --trust-global` appends to the user's global
/// `config.toml` to trust `dir` for every future session (hooks still need Codex's own
/// hook trust, or [`BYPASS_HOOK_TRUST`]).
pub fn global_trust_toml(dir: &Path) -> String {
    format!("\n[projects.{}]\ntrust_level = \"trusted\"\n", toml_string(&dir.display().to_string()))
}

/// The environment to start a Codex session with: who it acts for. In an orch worktree,
/// Codex runs the hooks of the repository's main checkout (it reads `.codex/hooks.json`
/// there, not in the linked worktree), which carry no identity: they act for these
/// variables, and do nothing without them.
pub fn session_env(db: &Path, agent: &str, task: Option<&str>, run: Option<&str>) -> Vec<(String, String)> {
    let mut env =
        vec![("COORD_DB".to_string(), db.display().to_string()), ("COORD_AGENT".to_string(), agent.to_string())];
    if let Some(t) = task {
        env.push(("COORD_TASK".to_string(), t.to_string()));
    }
    if let Some(r) = run {
        env.push(("COORD_RUN".to_string(), r.to_string()));
    }
    env
}
