//! Which client runs each agent's sessions: `.agents/launch.toml` (defaults, then per
//! role, then per agent) with the command line's flags over all of it.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

/// The config file, beside the database.
pub const FILE: &str = "launch.toml";

/// A session's client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClientKind {
    /// Claude Code, headless: `claude -p`.
    Claude,
    /// `codex exec`.
    Codex,
    /// Any program, through `sh -c`.
    Command,
    /// opencode, headless: `opencode run --format json` (clients/opencode.rs).
    Opencode,
    /// Gemini CLI, headless: `gemini -p … -o stream-json` (clients/gemini.rs).
    Gemini,
}

impl ClientKind {
    pub fn name(self) -> &'static str {
        match self {
            ClientKind::Claude => "claude",
            ClientKind::Codex => "codex",
            ClientKind::Command => "command",
            ClientKind::Opencode => "opencode",
            ClientKind::Gemini => "gemini",
        }
    }
}

impl std::str::FromStr for ClientKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "claude" => Ok(ClientKind::Claude),
            "codex" => Ok(ClientKind::Codex),
            "command" => Ok(ClientKind::Command),
            "opencode" => Ok(ClientKind::Opencode),
            "gemini" => Ok(ClientKind::Gemini),
            _ => Err(format!("unknown client '{s}' (expected one of: claude, codex, command, opencode, gemini)")),
        }
    }
}

/// One layer of settings; a later layer's `Some` wins.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Layer {
    pub client: Option<ClientKind>,
    /// The shell command of the `command` client.
    pub command: Option<String>,
    /// `--model` for claude, codex, opencode (`PROVIDER/MODEL`) and gemini.
    pub model: Option<String>,
    /// Extra arguments for an agent CLI, before the prompt.
    pub args: Option<Vec<String>>,
    /// The program to run for an agent CLI (default: its name, on `PATH`).
    pub program: Option<String>,
    /// Stop a session after this many minutes (its attempt fails); fractions allowed.
    #[serde(default, deserialize_with = "positive_minutes")]
    pub wall_clock_minutes: Option<f64>,
    /// Run a claude or codex session's shell in its client's sandbox, away from `.agents/`
    /// (`crate::sandbox`).
    pub sandbox: Option<bool>,
    /// A live session: its input stays open and takes the worker's answers, mail and
    /// shutdown requests as new turns (`command` and `claude`; see docs/launch.md).
    pub live: Option<bool>,
    /// Session reuse (live sessions only): when the agent's next task is ready where the
    /// session can work (a thread task, or the next task on the same worktree), it is
    /// given to the running session as a new turn instead of a new process
    /// (`crate::reuse`).
    pub reuse_sessions: Option<bool>,
    /// Stop a session once it cost this many dollars (its attempt fails; `launch.budgetSet`).
    #[serde(default, deserialize_with = "positive_dollars")]
    pub session_max_cost_usd: Option<f64>,
    /// Stop a session once it used this many tokens (input, output, cache reads and writes).
    #[serde(default, deserialize_with = "positive_tokens")]
    pub session_max_tokens: Option<i64>,
}

fn positive_dollars<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    let v = Option::<f64>::deserialize(d)?;
    v.map(|v| coord_proto::types::parse_dollars(&v.to_string())).transpose().map_err(serde::de::Error::custom)
}

fn positive_tokens<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    match Option::<i64>::deserialize(d)? {
        Some(n) if n <= 0 => Err(serde::de::Error::custom(format!("{n} is not a positive number of tokens"))),
        v => Ok(v),
    }
}

/// A number of minutes that is positive and finite (`0.5` is 30 seconds): the wall-clock
/// limit's one check, for the flag and the file alike.
pub fn minutes(m: f64) -> Result<f64, String> {
    match std::time::Duration::try_from_secs_f64(m * 60.0) {
        Ok(d) if !d.is_zero() => Ok(m),
        _ => Err(format!("{m} is not a positive number of minutes")),
    }
}

fn positive_minutes<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    Option::<f64>::deserialize(d)?.map(minutes).transpose().map_err(serde::de::Error::custom)
}

impl Layer {
    fn over(mut self, top: &Layer) -> Layer {
        let t = top.clone();
        self.client = t.client.or(self.client);
        self.command = t.command.or(self.command);
        self.model = t.model.or(self.model);
        self.args = t.args.or(self.args);
        self.program = t.program.or(self.program);
        self.wall_clock_minutes = t.wall_clock_minutes.or(self.wall_clock_minutes);
        self.sandbox = t.sandbox.or(self.sandbox);
        self.live = t.live.or(self.live);
        self.reuse_sessions = t.reuse_sessions.or(self.reuse_sessions);
        self.session_max_cost_usd = t.session_max_cost_usd.or(self.session_max_cost_usd);
        self.session_max_tokens = t.session_max_tokens.or(self.session_max_tokens);
        self
    }
}

/// `.agents/launch.toml`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct File {
    #[serde(default)]
    pub defaults: Layer,
    #[serde(default)]
    pub roles: BTreeMap<String, Layer>,
    #[serde(default)]
    pub agents: BTreeMap<String, Layer>,
}

/// Reading the config file failed.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read { path: String, source: std::io::Error },
    #[error("{path}: {message}")]
    Parse { path: String, message: String },
}

impl File {
    /// The file at `path`; an absent file is an empty config.
    pub fn load(path: &Path) -> Result<File, ConfigError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(File::default()),
            Err(source) => return Err(ConfigError::Read { path: path.display().to_string(), source }),
        };
        toml::from_str(&text)
            .map_err(|e| ConfigError::Parse { path: path.display().to_string(), message: e.to_string() })
    }

    /// What applies to `agent` (with `role`): defaults, the role, the agent, then `flags`.
    pub fn resolve(&self, agent: &str, role: Option<&str>, flags: &Layer) -> Layer {
        let mut l = self.defaults.clone();
        if let Some(r) = role.and_then(|r| self.roles.get(r)) {
            l = l.over(r);
        }
        if let Some(a) = self.agents.get(agent) {
            l = l.over(a);
        }
        l.over(flags)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_beat_the_agent_which_beats_the_role_and_the_defaults() {
        let f: File = toml::from_str(
            r#"
            [defaults]
            client = "claude"
            wall_clock_minutes = 30
            [roles.reviewer]
            client = "codex"
            model = "gpt-5"
            [agents.W2]
            model = "o4"
            "#,
        )
        .unwrap();
        let none = Layer::default();
        assert_eq!(f.resolve("W1", None, &none).client, Some(ClientKind::Claude));
        let w2 = f.resolve("W2", Some("reviewer"), &none);
        assert_eq!(
            (w2.client, w2.model.as_deref(), w2.wall_clock_minutes),
            (Some(ClientKind::Codex), Some("o4"), Some(30.0))
        );
        let flags = Layer { client: Some(ClientKind::Command), command: Some("true".into()), ..Layer::default() };
        assert_eq!(f.resolve("W2", Some("reviewer"), &flags).client, Some(ClientKind::Command));
    }

    #[test]
    fn session_reuse_is_set_in_the_file_per_agent() {
        let f: File = toml::from_str("[defaults]\nlive = true\n[agents.W1]\nreuse_sessions = true\n").unwrap();
        let none = Layer::default();
        assert_eq!(f.resolve("W1", None, &none).reuse_sessions, Some(true));
        assert_eq!(f.resolve("W2", None, &none).reuse_sessions, None);
    }

    #[test]
    fn an_unknown_key_is_an_error_that_names_it() {
        let err = toml::from_str::<File>("[defaults]\nclinet = \"claude\"\n").unwrap_err().to_string();
        assert!(err.contains("clinet"), "{err}");
    }
}
