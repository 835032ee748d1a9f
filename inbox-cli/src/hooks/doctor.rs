//! `inbox hook doctor`: check a worktree's session files, and tell when Codex would skip
//! them or its sandbox would keep the model's shell commands from the daemon.

use super::codex_setup::*;
use super::*;

/// Check a worktree's session files, and tell when Codex would skip them (an untrusted
/// project or untrusted hooks: Codex skips them silently) or its sandbox would keep the
/// model's shell commands from the daemon.
#[derive(clap::Args)]
#[command(after_help = "Examples:\n  inbox hook doctor\n  inbox hook doctor --dir ../wt-1 --json")]
pub struct Args {
    /// The worktree to check (default: the current directory).
    #[arg(long, value_name = "PATH")]
    pub dir: Option<PathBuf>,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let a = self;
        let cwd = std::env::current_dir().map_err(|e| CliError::Internal(e.to_string()))?;
        let dir = a.dir.map_or(cwd.clone(), |d| cwd.join(d));
        let dir = std::fs::canonicalize(&dir).map_err(|e| CliError::Invalid(format!("{}: {e}", dir.display())))?;
        let mut checks = Vec::new();
        let mut add = |client, status, message: String| checks.push(Check { client, status, message });

        let claude_hooks = has_our_hooks(json_file(&dir.join(".claude/settings.local.json")));
        let claude_mcp = json_file(&dir.join(".mcp.json")).is_some_and(|m| m["mcpServers"]["coordd"].is_object());
        match (claude_hooks, claude_mcp) {
            (true, true) => add("claude", "ok", "hooks in .claude/settings.local.json, MCP server in .mcp.json".into()),
            (true, false) => add("claude", "warn", "hooks installed, but no coordd server in .mcp.json".into()),
            (false, _) => add("claude", "info", "not installed (inbox hook install --client claude)".into()),
        }

        let config = read_toml(&dir.join(".codex/config.toml"))?;
        let server = config.as_ref().and_then(|c| c.get("mcp_servers")?.get("coordd").cloned());
        // Codex reads a linked worktree's hooks from the repository's main checkout.
        let hooks_file = main_checkout(&dir).unwrap_or_else(|| dir.clone()).join(".codex/hooks.json");
        let codex_hooks = has_our_hooks(json_file(&hooks_file));
        if server.is_none() && !codex_hooks {
            add("codex", "info", "not installed (inbox hook install --client codex)".into());
        } else {
            match &server {
                Some(s) if s.get("default_tools_approval_mode").and_then(|m| m.as_str()) == Some("approve") => {
                    add("codex", "ok", "MCP server coordd in .codex/config.toml".into())
                }
                Some(_) => add("codex", "warn", "the coordd MCP server lacks default_tools_approval_mode = \"approve\": with approvals off, every call fails".into()),
                None => add("codex", "warn", "no coordd MCP server in .codex/config.toml".into()),
            }
            if codex_hooks {
                add("codex", "ok", format!("hooks in {}", hooks_file.display()));
            } else {
                add("codex", "warn", format!("no coordd hooks in {}", hooks_file.display()));
            }
            let global = global_config();
            let gdoc = read_toml(&global).ok().flatten();
            if trusted(gdoc.as_ref(), &dir) {
                add("codex", "ok", format!("the project is trusted in {}", global.display()));
            } else {
                add(
                    "codex",
                    "warn",
                    format!(
                        "Codex skips .codex/ here, silently, unless it is started trusted: coord-launch passes `{}`; for a plain `codex`, run `inbox hook install --client codex --trust-global`",
                        coord_client::codex::trust_args(&[&dir]).join(" ")
                    ),
                );
            }
            add(
                "codex",
                "warn",
                format!(
                    "Codex runs .codex/hooks.json only for trusted hooks, else skips them silently (mail stays queued): coord-launch passes {}; in a plain `codex`, review and trust them with /hooks",
                    coord_client::codex::BYPASS_HOOK_TRUST
                ),
            );
            let network = |d: Option<&toml_edit::DocumentMut>| {
                d.and_then(|d| d.get("sandbox_workspace_write")?.get("network_access")?.as_bool()).unwrap_or(false)
            };
            if !network(gdoc.as_ref()) && !network(config.as_ref()) {
                add("codex", "info", "in Codex's workspace-write sandbox the model's shell commands cannot reach the daemon's socket; the MCP tools and the hooks can (the reminders name the MCP tools)".into());
            }
        }
        let warnings = checks.iter().filter(|c| c.status == "warn").count();
        let out = serde_json::json!({"dir": dir.display().to_string(), "checks": checks, "warnings": warnings});
        ctx.print(&out, || {
            for c in &checks {
                println!("{:<5} {:<7} {}", c.status, c.client, c.message);
            }
        });
        Ok(Outcome::Done)
    }
}
