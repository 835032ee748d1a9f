//! `inbox hook install`: write the session hooks and the coordd MCP server for Claude Code
//! (.claude/settings.local.json, .mcp.json, CLAUDE.md), Codex (.codex/config.toml,
//! .codex/hooks.json), Gemini CLI (.gemini/settings.json) and/or opencode (opencode.json and
//! its plugin), and an inbox note for AGENTS.md, all kept out of git.

use super::*;

/// Write the session hooks and the coordd MCP server for Claude Code
/// (.claude/settings.local.json, .mcp.json, CLAUDE.md), Codex (.codex/config.toml,
/// .codex/hooks.json), Gemini CLI (.gemini/settings.json) and/or opencode (opencode.json,
/// with coordd's plugin beside the database), and an inbox note for AGENTS.md, all kept out
/// of git.
///
/// A file the repository tracks is never modified: the note then goes to CLAUDE.local.md
/// and AGENTS.override.md. What is written is listed in .git/info/exclude. Codex loads
/// .codex/ only in a trusted project: see `inbox hook doctor`. Gemini CLI loads
/// .gemini/settings.json only in a trusted folder (coord-launch trusts its worktrees).
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  inbox --agent backend hook install --task T1 --approve-mcp\n  inbox --agent backend hook install --client codex\n  inbox --agent backend hook install --client codex --trust-global\n  inbox --agent backend hook install --client gemini --task T1 --json\n  inbox --agent backend hook install --client opencode --task T1"
)]
pub struct Args {
    /// The worktree to write into (default: the current directory).
    #[arg(long, value_name = "PATH")]
    pub dir: Option<PathBuf>,
    /// The task the session works on.
    #[arg(long, value_name = "TASK_ID")]
    pub task: Option<String>,
    /// The run the task belongs to (its creator leads the session).
    #[arg(long, value_name = "RUN_ID")]
    pub run: Option<String>,
    /// Also approve the coordd MCP server in .claude/settings.local.json, so Claude Code
    /// starts it without asking (orch's worktrees get this; here it is your choice).
    #[arg(long)]
    pub approve_mcp: bool,
    /// The agent clients to install for (default: every client found on PATH or already
    /// configured in the worktree; Claude Code when there is none).
    #[arg(long, value_enum, value_name = "CLIENT")]
    pub client: Option<ClientChoice>,
    /// Codex: also trust the worktree in your global Codex config ($CODEX_HOME/config.toml,
    /// else ~/.codex/config.toml), so plain `codex` loads .codex/. What is added is shown
    /// before it is written. Not needed for sessions coord-launch starts.
    #[arg(long)]
    pub trust_global: bool,
}

impl Command for Args {
    async fn run(self, ctx: &Ctx) -> Res {
        let a = self;
        let agent = ctx.agent.clone().ok_or_else(|| {
            CliError::Invalid(
                "hooks act for an agent: pass --agent NAME (or set COORD_AGENT); without one they would do nothing"
                    .into(),
            )
        })?;
        let cwd = std::env::current_dir().map_err(|e| CliError::Internal(e.to_string()))?;
        let dir = a.dir.map_or(cwd.clone(), |d| cwd.join(d));
        let clients = codex_setup::clients(a.client, &dir);
        if a.trust_global && !clients.iter().any(|c| c == "codex") {
            return Err(CliError::Invalid(
                "--trust-global trusts the worktree for Codex: use it with --client codex (or all)".into(),
            ));
        }
        let p = InstallHooksParams {
            dir: dir.display().to_string(),
            agent: Some(agent),
            task_id: a.task,
            thread_id: None,
            inbox_bin: std::env::current_exe().ok().map(|p| p.display().to_string()),
            run_id: a.run,
            approve_mcp: a.approve_mcp,
            clients,
        };
        let r = ctx.client().await?.install_hooks(p).await?;
        let trust = match a.trust_global {
            true => Some(codex_setup::trust_global(ctx, &std::fs::canonicalize(&dir).unwrap_or(dir.clone()))?),
            false => None,
        };
        let mut out = serde_json::to_value(&r).map_err(|e| CliError::Internal(e.to_string()))?;
        out["trust_global"] = serde_json::to_value(&trust).unwrap_or_default();
        ctx.print(&out, || {
            for f in &r.files {
                println!("wrote {f}");
            }
            for n in &r.notes {
                println!("note: {n}");
            }
            println!(
                "(for {}; kept out of git: listed in .git/info/exclude, or ignored in orch worktrees)",
                r.clients.join(", ")
            );
            if r.clients.iter().any(|c| c == "codex") && !a.trust_global {
                println!("Codex loads .codex/ only in a trusted project, with trusted hooks: see `inbox hook doctor`");
            }
            if r.clients.iter().any(|c| c == "gemini") {
                println!("Gemini CLI loads .gemini/settings.json only in a trusted folder (docs/agent-hooks.md)");
            }
        });
        Ok(Outcome::Done)
    }
}
