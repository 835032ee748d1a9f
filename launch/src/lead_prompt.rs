//! The lead session's words and command: the lead prompt (how to plan, answer, review and
//! when to finish, with the clients `.agents/launch.toml` gives each role), the state of the
//! run a restarted lead is given, and the command each client runs with `orch mcp`
//! registered for it.

use std::path::{Path, PathBuf};

use coord_proto::types::{AGENT_SECRET_ENV, RunView};
use serde_json::json;

use crate::config::{self, ClientKind, Layer};
use crate::process::Spec;

/// Who the lead is and what it leads.
pub struct LeadWork {
    pub run_id: String,
    pub goal: String,
    pub agent: String,
    /// Its own secret (never the person's), for `orch mcp` and its shell.
    pub secret: Option<String>,
    /// The main checkout, where the lead runs.
    pub cwd: PathBuf,
    pub db: PathBuf,
    /// The `orch` binary.
    pub orch: String,
    /// This `coord-launch` (the filters of claude's and codex's output).
    pub me: String,
}

/// The clients each role and agent gets, from `.agents/launch.toml` and the flags, as lines
/// for the prompt.
fn clients(file: &config::File, workers: &Layer) -> String {
    let name = |l: &Layer| l.client.map_or("claude", ClientKind::name);
    let mut out = format!("- by default: {}\n", name(&file.resolve("", None, workers)));
    for role in file.roles.keys() {
        out.push_str(&format!("- role `{role}`: {}\n", name(&file.resolve("", Some(role), workers))));
    }
    for agent in file.agents.keys() {
        out.push_str(&format!("- worker `{agent}`: {}\n", name(&file.resolve(agent, None, workers))));
    }
    out
}

/// The lead prompt: the goal, the run, the tools, and the loop (every lead is live: what
/// needs it comes as its next message).
pub fn prompt(w: &LeadWork, file: &config::File, workers: &Layer) -> String {
    let wait = "What needs you (a question, a permission request, a failed or stuck task, a finished task to \
         review, a ready task) is written into this session as your next message: after acting, END YOUR \
         TURN and wait for it. Do not poll; wait_for_attention is only for catching up after a restart.";
    format!(
        "You are {agent}, the lead of run {run} in this repository. The goal: {goal}\n\n\
         You lead a team of agent workers through the `orch` MCP tools (bound to run {run}); workers are \
         started for you when you dispatch. Do not write the code yourself.\n\
         1. Plan: split the goal into small tasks (add_task), each with a clear title, a body, acceptance \
         criteria, kind `code` (a change in the repository) or `thread` (an answer), a worker name, and \
         explicit depends_on for every task that needs another's result. Workers' clients:\n{clients}\
         2. Dispatch the ready tasks (dispatch); a task whose dependencies are merged becomes ready: dispatch \
         it then.\n\
         3. {wait}\n\
         4. Answer a worker's question (answer) briefly and concretely. Approve a permission request \
         (respond) when it serves the task and is safe (pushing its own branch is; deleting data or touching \
         other branches is not). Retry or reassign a failed task; shut down a stuck worker.\n\
         5. Review a done code task (diff; comment and review to request changes) and merge it (merge).\n\
         6. When every task is done and merged, call finish_run, then end your turn: the run is over.\n\
         Never cancel the run unless the goal cannot be reached.",
        agent = w.agent,
        run = w.run_id,
        goal = w.goal,
        clients = clients(file, workers),
    )
}

/// What a restarted lead is told: it was restarted, and where the run stands.
pub fn restart_note(view: &RunView) -> String {
    let mut out = format!(
        "Your previous session ended before the run did; you were restarted. Carry on from where the run \
         stands (run {} is {}):\n",
        view.run.run_id,
        view.run.status.as_str()
    );
    for t in &view.tasks {
        let worker = t.assign_to.as_deref().unwrap_or("-");
        out.push_str(&format!("- {} [{}] {} (worker {worker})\n", t.task_id, t.status.as_str(), t.title));
    }
    out.push_str("Read status or task for details, answer what waits for you, and go on.");
    out
}

/// The `orch mcp` server registration for the lead (`mcpServers`, as Claude Code reads it).
pub fn mcp_config(w: &LeadWork) -> serde_json::Value {
    let mut env = json!({"COORD_DB": w.db.display().to_string()});
    if let Some(s) = &w.secret {
        env[AGENT_SECRET_ENV] = json!(s);
    }
    json!({"mcpServers": {"orch": {
        "type": "stdio", "command": w.orch,
        "args": ["mcp", "--run", w.run_id, "--as", w.agent, "--db", w.db.display().to_string()],
        "env": env,
    }}})
}

/// The lead's environment: who it is and its run. Its own secret goes in [`Spec::secret`]:
/// the bridge's (the person's) secrets never reach the session ([`crate::credentials`]).
fn env(w: &LeadWork, session_id: &str) -> Vec<(String, String)> {
    vec![
        (crate::process::SESSION_VAR.to_string(), session_id.to_string()),
        ("COORD_AGENT".to_string(), w.agent.clone()),
        ("COORD_RUN".to_string(), w.run_id.clone()),
        ("COORD_DB".to_string(), w.db.display().to_string()),
        ("COORD_LEAD".to_string(), "1".to_string()),
    ]
}

/// The lead session's command. `mcp_file` holds [`mcp_config`] (private: it carries the
/// lead's secret). Every lead is live, reading its turns on stdin: a codex lead through the
/// driver `coord-launch --codex-live`, which the caller wraps around this command.
pub fn spec(
    kind: ClientKind,
    l: &Layer,
    w: &LeadWork,
    prompt: &str,
    mcp_file: &Path,
    session_id: &str,
) -> Result<Spec, crate::client::BuildError> {
    let program = |name: &str| l.program.clone().unwrap_or_else(|| name.to_string());
    let model = l.model.iter().flat_map(|m| ["--model".to_string(), m.clone()]);
    let extra = l.args.clone().unwrap_or_default();
    let mut env = env(w, session_id);
    let (program, args, filter) = match kind {
        ClientKind::Command => {
            let cmd = l.command.clone().filter(|c| !c.trim().is_empty()).ok_or(crate::client::BuildError::NoCommand)?;
            env.push(("COORD_PROMPT".to_string(), prompt.to_string()));
            env.push(("COORD_LIVE".to_string(), "1".to_string()));
            ("sh".to_string(), vec!["-c".to_string(), cmd], None)
        }
        ClientKind::Claude => {
            let mut a: Vec<String> =
                ["-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose"]
                    .map(String::from)
                    .into();
            a.extend(["--mcp-config".to_string(), mcp_file.display().to_string()]);
            a.extend(model);
            a.extend(["--permission-mode".into(), "bypassPermissions".into()]);
            a.extend(extra);
            let raw = mcp_file.with_file_name("lead.jsonl").display().to_string();
            (program("claude"), a, Some(vec![w.me.clone(), "--claude-log".into(), raw]))
        }
        ClientKind::Codex => {
            // Live, as a live Codex worker: `codex app-server`, driven by `coord-launch
            // --codex-live` (the caller wraps it: codex_live.rs), which writes each turn of
            // the feed into one thread. The server is given on the command line; codex hands
            // an MCP server only the variables named in `env_vars`.
            let toml = |s: &str| coord_client::codex::toml_string(s);
            let args =
                ["mcp", "--run", &w.run_id, "--as", &w.agent, "--db", &w.db.display().to_string()].map(toml).join(",");
            let mut a = vec!["app-server".to_string()];
            a.extend(coord_client::codex::trust_args(&[&w.cwd]).into_iter().take(2));
            a.extend(["-c".into(), format!("mcp_servers.orch.command={}", toml(&w.orch))]);
            a.extend(["-c".into(), format!("mcp_servers.orch.args=[{args}]")]);
            a.extend(["-c".into(), format!("mcp_servers.orch.env_vars=[\"COORD_DB\",\"{AGENT_SECRET_ENV}\"]")]);
            a.extend(["-c".into(), "mcp_servers.orch.tool_timeout_sec=120".into()]);
            if let Some(m) = &l.model {
                a.extend(["-c".to_string(), format!("model={}", toml(m))]);
            }
            a.extend(extra);
            (program("codex"), a, None)
        }
        ClientKind::Opencode | ClientKind::Gemini => return Err(crate::client::BuildError::NotALead(kind.name())),
    };
    if kind != ClientKind::Command {
        // The lead's words reach the log through the filter, not as its own output.
        env.retain(|(k, _)| k != "COORD_PROMPT");
    }
    let secret = w.secret.clone().map(crate::credentials::Secret::new);
    Ok(Spec { program, args, cwd: w.cwd.clone(), env, filter, stdin: None, secret })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn work() -> LeadWork {
        LeadWork {
            run_id: "R1".into(),
            goal: "Ship login".into(),
            agent: "lead".into(),
            secret: Some("cs_lead_x".into()),
            cwd: "/p".into(),
            db: "/p/.agents/coord.db".into(),
            orch: "/bin/orch".into(),
            me: "/bin/coord-launch".into(),
        }
    }

    #[test]
    fn the_prompt_names_the_goal_the_run_and_each_roles_client() {
        let f: config::File = toml::from_str("[roles.reviewer]\nclient = \"codex\"\n").unwrap();
        let p = prompt(&work(), &f, &Layer::default());
        assert!(p.contains("Ship login") && p.contains("run R1") && p.contains("depends_on"), "{p}");
        assert!(p.contains("role `reviewer`: codex") && p.contains("finish_run"), "{p}");
    }

    #[test]
    fn the_lead_gets_its_own_secret_and_orch_mcp_for_its_run() {
        let l = Layer::default();
        let s = spec(ClientKind::Claude, &l, &work(), "go", Path::new("/p/x/lead-mcp.json"), "ses_1").unwrap();
        assert!(s.args.windows(2).any(|a| a == ["--mcp-config", "/p/x/lead-mcp.json"]), "{:?}", s.args);
        assert_eq!(s.secret, Some(crate::credentials::Secret::new("cs_lead_x".into())));
        assert!(!s.env.iter().any(|(k, _)| k == AGENT_SECRET_ENV), "the secret goes through Spec::secret");
        let m = mcp_config(&work());
        let args = m["mcpServers"]["orch"]["args"].as_array().unwrap().clone();
        assert_eq!(args[..5], json!(["mcp", "--run", "R1", "--as", "lead"]).as_array().unwrap()[..]);
        let mut none = work();
        none.secret = None;
        let s = spec(ClientKind::Codex, &l, &none, "go", Path::new("/m"), "ses_1").unwrap();
        assert_eq!(s.secret, None, "no secret of the person's: the spawn scrubs the bridge's");
        assert!(s.args.iter().any(|a| a.starts_with("mcp_servers.orch.args=")), "{:?}", s.args);
    }
}
