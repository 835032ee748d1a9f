//! What a session runs for each client: the program, its arguments and environment, and
//! the prompt that names the task, the thread and how to finish.

use std::path::Path;

use crate::config::{ClientKind, Layer};
use crate::process::Spec;

/// The attempt a session is for.
#[derive(Debug, Clone, PartialEq)]
pub struct Work {
    pub run_id: String,
    pub task_id: String,
    pub attempt: u32,
    pub thread_id: String,
    pub agent: String,
    pub title: String,
    pub role: Option<String>,
    /// The attempt's worktree (code tasks).
    pub worktree: Option<String>,
}

/// What the bridge needs to build a session's command.
pub struct Context<'a> {
    pub db: &'a Path,
    /// Where the session runs: the worktree, or a scratch directory.
    pub cwd: &'a Path,
    /// The `inbox` to name in prompts.
    pub inbox: &'a str,
    /// The session's id (`COORD_SESSION`).
    pub session_id: &'a str,
    /// This `coord-launch`, for the output filters it runs (`--codex-log`, ...).
    pub me: &'a str,
    /// The project's `.agents` and the daemon's socket (for `--sandbox`).
    pub agents_dir: &'a Path,
    pub socket: &'a Path,
    /// A live session: its input stays open and takes turns (feed.rs).
    pub live: bool,
}

/// Building a session's command failed.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("the command client needs a command: pass --command or set `command` in .agents/launch.toml")]
    NoCommand,
    #[error("a {0} session cannot lead a run (--lead takes claude, codex or command)")]
    NotALead(&'static str),
    #[error(
        "--sandbox is built for the claude and codex clients: run command, opencode and gemini sessions without it \
         (docs/security.md, \"Sandboxed workers\")"
    )]
    SandboxUnsupported,
    #[error(
        "--sandbox with --live is built for claude only: the live Codex driver (codex app-server) \
         runs its threads unsandboxed; run sandboxed Codex sessions without --live \
         (docs/security.md, \"Sandboxed workers\")"
    )]
    SandboxNotLive,
}

/// The prompt of an agent CLI: who it is, the task and thread, and how to finish. A live
/// session is told to end its turn after asking: the answer comes as its next message.
pub fn prompt(w: &Work, inbox: &str, live: bool) -> String {
    let (a, t) = (&w.agent, &w.thread_id);
    let ask = format!("ask with `{inbox} update --agent {a} --thread {t} --status blocked --summary '...'`");
    let (wait, end) = if live {
        (
            format!(
                "{ask}, then END YOUR TURN. Do not wait in a tool (no `wait-reply`, no sleep): this session \
                 stays open, and the answer comes to you as your next message, however long it takes. Mail, \
                 notes from the lead and shutdown requests come the same way."
            ),
            ", then end your turn; the session is closed for you.",
        )
    } else {
        (
            format!(
                "{ask}. It prints the line to wait with (`wait for the answer: inbox wait-reply --thread {t} \
                 --after-event EVENT_ID`): run exactly that, with the EVENT_ID it printed, as `{inbox} wait-reply \
                 --thread {t} --after-event EVENT_ID`. From that event on, the wait returns the answer even if it \
                 came before you started waiting; if it times out (exit 10), run the line it prints to go on waiting."
            ),
            ".\nDo not stop before done or fail: a session that ends without them fails its attempt.",
        )
    };
    format!(
        "You are agent {a}, a worker of run {run}. Your task is {task}: {title}.\n\
         It is inbox thread {t}; everything about it is there. Work only through inbox (the CLI \
         or its MCP tools):\n\
         1. Claim and read it: `{inbox} claim --agent {a} --thread {t}` then `{inbox} show --agent {a} --thread {t}`.\n\
         2. Report progress with `{inbox} update --agent {a} --thread {t} --status in_progress --summary '...'`.\n\
         3. If you need the lead, {wait}\n\
         4. When the work is done (committed, for a code task), finish with \
         `{inbox} done --agent {a} --thread {t} --summary '...'`, or `{inbox} fail ...` if you cannot{end}",
        run = w.run_id,
        task = w.task_id,
        title = w.title,
    )
}

/// The environment every session gets.
pub fn env(w: &Work, ctx: &Context<'_>) -> Vec<(String, String)> {
    let mut env = vec![
        (crate::process::SESSION_VAR.to_string(), ctx.session_id.to_string()),
        ("COORD_AGENT".to_string(), w.agent.clone()),
        ("COORD_RUN".to_string(), w.run_id.clone()),
        ("COORD_TASK".to_string(), w.task_id.clone()),
        ("COORD_THREAD".to_string(), w.thread_id.clone()),
        ("COORD_ATTEMPT".to_string(), w.attempt.to_string()),
        ("COORD_DB".to_string(), ctx.db.display().to_string()),
        ("COORD_WORKTREE".to_string(), w.worktree.clone().unwrap_or_default()),
    ];
    if let Some(r) = &w.role {
        env.push(("COORD_ROLE".to_string(), r.clone()));
    }
    env
}

/// The command a session runs, by client.
pub fn build(kind: ClientKind, l: &Layer, w: &Work, ctx: &Context<'_>) -> Result<Spec, BuildError> {
    let program = |name: &str| l.program.clone().unwrap_or_else(|| name.to_string());
    let extra = l.args.clone().unwrap_or_default();
    let model = l.model.iter().flat_map(|m| ["--model".to_string(), m.clone()]);
    let sandbox = l.sandbox == Some(true);
    if sandbox && !matches!(kind, ClientKind::Claude | ClientKind::Codex) {
        return Err(BuildError::SandboxUnsupported);
    }
    if sandbox && ctx.live && kind == ClientKind::Codex {
        return Err(BuildError::SandboxNotLive);
    }
    let sandbox_paths = crate::sandbox::Paths { agents_dir: ctx.agents_dir, socket: ctx.socket, cwd: ctx.cwd };
    let sandbox_settings = sandbox.then(|| ["--settings".to_string(), crate::sandbox::claude_settings(&sandbox_paths)]);
    let sandbox_settings = sandbox_settings.into_iter().flatten();
    let (program, args) = match kind {
        ClientKind::Command => {
            let cmd = l.command.clone().filter(|c| !c.trim().is_empty()).ok_or(BuildError::NoCommand)?;
            ("sh".to_string(), vec!["-c".to_string(), cmd])
        }
        ClientKind::Claude if ctx.live => {
            // Live: stream-json both ways, the turns on stdin (feed.rs).
            let mut a: Vec<String> =
                ["-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
                    .map(String::from)
                    .into();
            a.extend(model);
            a.extend(["--permission-mode".into(), "bypassPermissions".into()]);
            a.extend(sandbox_settings);
            a.extend(extra);
            (program("claude"), a)
        }
        ClientKind::Claude => {
            // Headless, with the hooks and `.mcp.json` dispatch wrote into the worktree.
            let mut a = vec!["-p".to_string(), prompt(w, ctx.inbox, false)];
            a.extend(model);
            a.extend(["--permission-mode".into(), "bypassPermissions".into()]);
            a.extend(sandbox_settings);
            a.extend(extra);
            (program("claude"), a)
        }
        ClientKind::Codex if ctx.live => {
            // Live: the app-server, driven through `coord-launch --codex-live` (codex_live.rs,
            // which trusts the hooks per thread: app-server refuses the bypass flag).
            let mut a = vec!["app-server".to_string()];
            a.extend(coord_client::codex::trust_args(&[ctx.cwd]).into_iter().take(2));
            if let Some(m) = &l.model {
                a.extend(["-c".to_string(), format!("model={}", coord_client::codex::toml_string(m))]);
            }
            a.extend(extra);
            (program("codex"), a)
        }
        ClientKind::Codex => {
            // Trusted for this invocation only (so it loads the project's `.codex/` and
            // hooks), unattended like claude's bypass mode: no approvals, no sandbox (the
            // session commits in its worktree and reaches the daemon's socket). Its
            // events (`--json`) go through `--codex-log` into a readable log.
            let mut a = vec!["exec".to_string(), "--json".to_string(), "--skip-git-repo-check".to_string()];
            a.extend(coord_client::codex::trust_args(&[ctx.cwd]));
            if sandbox {
                // Its own sandbox, set up around `.agents/` (sandbox.rs); still no approvals.
                a.extend(["-c".to_string(), "approval_policy=\"never\"".to_string()]);
                a.extend(crate::sandbox::codex_args(&sandbox_paths));
            } else {
                a.push("--dangerously-bypass-approvals-and-sandbox".to_string());
            }
            a.extend(model);
            a.extend(extra);
            a.push(prompt(w, ctx.inbox, false));
            (program("codex"), a)
        }
        ClientKind::Opencode if ctx.live => {
            // Live: its own server, driven through `coord-launch --opencode-live`
            // (opencode_live.rs); the model goes with each prompt.
            (program("opencode"), crate::clients::opencode::serve_args(extra))
        }
        ClientKind::Opencode => {
            let a = crate::clients::opencode::args(l.model.as_deref(), extra, prompt(w, ctx.inbox, false));
            (program("opencode"), a)
        }
        ClientKind::Gemini if ctx.live => {
            // Live: the Agent Client Protocol, driven through `coord-launch --gemini-live`
            // (gemini_live.rs), which asks the lead's gate when Gemini asks permission.
            (program("gemini"), crate::clients::gemini::acp_args(l.model.as_deref(), extra))
        }
        ClientKind::Gemini => {
            let a = crate::clients::gemini::args(l.model.as_deref(), extra, prompt(w, ctx.inbox, false));
            (program("gemini"), a)
        }
    };
    let mut env = env(w, ctx);
    if kind == ClientKind::Command {
        // A command has no prompt argument: it may read it here.
        env.push(("COORD_PROMPT".to_string(), prompt(w, ctx.inbox, ctx.live)));
    }
    if ctx.live {
        env.push(("COORD_LIVE".to_string(), "1".to_string()));
    }
    if kind == ClientKind::Codex {
        // The identity Codex's hooks act for (they run from the main checkout).
        let task = Some(w.task_id.as_str());
        for kv in coord_client::codex::session_env(ctx.db, &w.agent, task, Some(&w.run_id)) {
            if !env.contains(&kv) {
                env.push(kv);
            }
        }
    }
    match kind {
        ClientKind::Opencode => {
            env.extend(crate::clients::opencode::env(ctx.cwd));
            if let (true, Some(m)) = (ctx.live, &l.model) {
                env.push((crate::opencode_live::MODEL_VAR.to_string(), m.clone()));
            }
        }
        ClientKind::Gemini => env.extend(crate::clients::gemini::env()),
        _ => {}
    }
    let filter = match kind {
        ClientKind::Codex if !ctx.live => Some(vec![ctx.me.to_string(), "--codex-log".to_string()]),
        // (One-shot: the bridge adds the raw output's path beside the log, as for Codex; a
        // live command's filter is the bridge's to set.)
        ClientKind::Command if !ctx.live => Some(vec![ctx.me.to_string(), "--command-log".to_string()]),
        ClientKind::Gemini if ctx.live => None,
        ClientKind::Opencode | ClientKind::Gemini => {
            Some(vec![ctx.me.to_string(), "--client-log".to_string(), kind.name().to_string()])
        }
        _ => None,
    };
    Ok(Spec { program, args, cwd: ctx.cwd.to_path_buf(), env, filter, secret: None, stdin: None })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn work() -> Work {
        Work {
            run_id: "R1".into(),
            task_id: "T1".into(),
            attempt: 2,
            thread_id: "thr_1".into(),
            agent: "W1".into(),
            title: "Fix it".into(),
            role: None,
            worktree: Some("/w".into()),
        }
    }

    #[test]
    fn the_command_client_runs_through_the_shell_with_the_coord_environment() {
        let ctx = Context {
            db: Path::new("/p/.agents/coord.db"),
            cwd: Path::new("/w"),
            inbox: "inbox",
            session_id: "ses_1",
            me: "coord-launch",
            agents_dir: Path::new("/p/.agents"),
            socket: Path::new("/p/.agents/coordd.sock"),
            live: false,
        };
        let l = Layer { command: Some("echo hi".into()), ..Layer::default() };
        let s = build(ClientKind::Command, &l, &work(), &ctx).unwrap();
        assert_eq!((s.program.as_str(), s.args.clone()), ("sh", vec!["-c".to_string(), "echo hi".to_string()]));
        assert!(s.env.contains(&("COORD_THREAD".into(), "thr_1".into())));
        assert!(s.env.contains(&("COORD_DB".into(), "/p/.agents/coord.db".into())));
        assert!(s.env.contains(&("COORD_SESSION".into(), "ses_1".into())));
        assert!(s.env.iter().any(|(k, v)| k == "COORD_PROMPT" && v.contains("thr_1")));
        assert_eq!(s.filter, Some(vec!["coord-launch".to_string(), "--command-log".to_string()]));
        assert!(matches!(build(ClientKind::Command, &Layer::default(), &work(), &ctx), Err(BuildError::NoCommand)));
        let sandboxed = Layer { command: Some("echo hi".into()), sandbox: Some(true), ..Layer::default() };
        let refused = build(ClientKind::Command, &sandboxed, &work(), &ctx);
        assert!(matches!(refused, Err(BuildError::SandboxUnsupported)), "a command cannot be sandboxed");
        // Codex, sandboxed, runs in its own permission profile, not bypassing its sandbox.
        let codex =
            build(ClientKind::Codex, &Layer { sandbox: Some(true), ..Layer::default() }, &work(), &ctx).unwrap();
        assert!(!codex.args.iter().any(|a| a.contains("bypass-approvals-and-sandbox")), "{:?}", codex.args);
        assert!(codex.args.iter().any(|a| a.starts_with("default_permissions=")), "{:?}", codex.args);
        // A live Codex session is not sandboxed: refused rather than run unsandboxed.
        let live = Context { live: true, ..ctx };
        let refused = build(ClientKind::Codex, &Layer { sandbox: Some(true), ..Layer::default() }, &work(), &live);
        assert!(matches!(refused, Err(BuildError::SandboxNotLive)), "a live codex session cannot be sandboxed");
    }

    #[test]
    fn agent_clients_get_a_prompt_naming_the_task_thread_and_how_to_finish() {
        let ctx = Context {
            db: Path::new("/db"),
            cwd: Path::new("/w"),
            inbox: "inbox",
            session_id: "ses_1",
            me: "cl",
            agents_dir: Path::new("/p/.agents"),
            socket: Path::new("/p/.agents/coordd.sock"),
            live: false,
        };
        let l = Layer { model: Some("m1".into()), ..Layer::default() };
        let claude = build(ClientKind::Claude, &l, &work(), &ctx).unwrap();
        assert_eq!(claude.args[0], "-p");
        assert!(claude.args[1].contains("thr_1") && claude.args[1].contains("inbox done --agent W1"));
        assert!(claude.args.windows(2).any(|w| w == ["--model", "m1"]));
        let codex = build(ClientKind::Codex, &l, &work(), &ctx).unwrap();
        assert_eq!(codex.args[..2], ["exec", "--json"]);
        assert_eq!(codex.filter, Some(vec!["cl".to_string(), "--codex-log".to_string()]));
        assert!(codex.args.contains(&"--dangerously-bypass-hook-trust".to_string()), "{:?}", codex.args);
        assert!(codex.args.iter().any(|a| a.contains(r#""/w"={trust_level="trusted"}"#)), "{:?}", codex.args);
        assert!(codex.args.last().unwrap().contains("T1: Fix it"));
    }
}
