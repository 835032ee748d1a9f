//! Each session's credentials: its own agent's secret and no one else's.
//!
//! The bridge runs as the lead (its connection authenticated with the lead's
//! `COORD_AGENT_SECRET`). With credentials required, it mints each worker agent's secret
//! with that authority (`agents.register` with `force_update` and `rotate_secret`) the
//! first time it starts a session for it, keeps it in memory for the agent's later
//! sessions, and gives a session only that secret. A bridge started again finds the secret
//! of an agent whose session it re-attached to in that session's environment instead of
//! minting a new one (which would retire the secret the running session holds).
//!
//! Whatever the project's setting, a session never inherits a secret of the bridge's
//! environment: [`scrub`] names every inherited `COORD_*` variable that holds a secret, and
//! the spawners remove them. A secret is never put in argv, a log line or the tmux command
//! line ([`Secret`]'s `Debug` shows no digit of it; tmux hands it over in a `0600` file
//! the session's shell reads and deletes before the client starts).

use std::collections::HashMap;

use coord_proto::types::{AGENT_SECRET_ENV, RegisterParams};

use crate::rpc::Rpc;

/// An agent's secret on its way to one session.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(s: String) -> Secret {
        Secret(s)
    }

    /// The secret itself, for the session's environment only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(..)")
    }
}

/// Whether an environment variable carries a secret a session must not inherit: the
/// agent secret, and any other `COORD_*` secret, token, password or key.
pub fn is_secret_var(name: &str) -> bool {
    name == AGENT_SECRET_ENV
        || name.starts_with("COORD_") && ["SECRET", "TOKEN", "PASSWORD", "KEY"].iter().any(|w| name.contains(w))
}

/// The names of the secrets in this process's environment, which no session inherits.
pub fn scrub() -> Vec<String> {
    std::env::vars_os().filter_map(|(k, _)| k.into_string().ok()).filter(|k| is_secret_var(k)).collect()
}

/// Minting failed: the session is not started, and the line says why.
#[derive(Debug, thiserror::Error)]
pub enum CredentialError {
    #[error(
        "credentials are required and the bridge cannot mint {agent}'s secret: {source} \
         (start coord-launch with the lead's or an admin's COORD_AGENT_SECRET)"
    )]
    Mint { agent: String, source: coord_client::ClientError },
    #[error(
        "credentials are required and {agent} is the project's lead or an admin: the bridge gives a session \
         only a worker's secret (dispatch the task to a worker)"
    )]
    Privileged { agent: String },
    #[error("cannot read the project's settings: {0}")]
    Settings(coord_client::ClientError),
}

/// The secrets this bridge minted or found, by agent.
#[derive(Default)]
pub struct Credentials {
    minted: HashMap<String, Secret>,
}

impl Credentials {
    /// A re-attached session of `agent` (its processes `pids`) holds this secret: its later
    /// sessions get it too.
    pub fn found(&mut self, agent: &str, pids: Vec<i32>) {
        if self.minted.contains_key(agent) {
            return;
        }
        if let Some(s) = secret_of_session(agent, pids) {
            self.minted.insert(agent.to_string(), s);
        }
    }

    /// The secret a session of `agent` gets: none while credentials are not required;
    /// else the agent's own, minted once with the bridge's (the lead's) authority.
    pub async fn for_agent(
        &mut self,
        rpc: &mut Rpc,
        agent: &str,
        role: Option<&str>,
    ) -> Result<Option<Secret>, CredentialError> {
        let settings = rpc.settings().await.map_err(CredentialError::Settings)?;
        if !settings.require_credentials {
            return Ok(None);
        }
        if settings.lead.as_deref() == Some(agent) || settings.admins.iter().any(|a| a == agent) {
            return Err(CredentialError::Privileged { agent: agent.to_string() });
        }
        if let Some(s) = self.minted.get(agent) {
            return Ok(Some(s.clone()));
        }
        let mint = |e| CredentialError::Mint { agent: agent.to_string(), source: e };
        // Keep a registered agent's role; a new one gets the task's role, else `worker`.
        let known = rpc.agent_show(agent).await.ok().filter(|a| a.registered);
        let role = known.map(|a| a.role).or(role.map(str::to_string)).unwrap_or_else(|| "worker".into());
        let p = RegisterParams {
            agent_id: agent.to_string(),
            role,
            display_name: None,
            force_update: true,
            rotate_secret: true,
        };
        let r = rpc.agent_register(p).await.map_err(mint)?;
        let secret = r
            .secret
            .map(Secret::new)
            .ok_or_else(|| mint(coord_client::ClientError::Transport("agents.register returned no secret".into())))?;
        self.minted.insert(agent.to_string(), secret.clone());
        Ok(Some(secret))
    }
}

/// The secret of `agent` one of a session's processes holds in its environment (`/proc`,
/// same user); a secret of another agent is never taken for its.
fn secret_of_session(agent: &str, pids: Vec<i32>) -> Option<Secret> {
    let want = format!("{AGENT_SECRET_ENV}=");
    pids.into_iter().find_map(|pid| {
        let env = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
        env.split(|b| *b == 0)
            .find_map(|kv| kv.strip_prefix(want.as_bytes()))
            .and_then(|v| String::from_utf8(v.to_vec()).ok())
            .filter(|v| coord_proto::types::secret_agent(v) == Some(agent))
            .map(Secret::new)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_coord_secret_is_scrubbed_and_the_rest_kept() {
        for v in ["COORD_AGENT_SECRET", "COORD_DASHBOARD_TOKEN", "COORD_PG_PASSWORD", "COORD_API_KEY"] {
            assert!(is_secret_var(v), "{v}");
        }
        for v in ["COORD_DB", "COORD_AGENT", "COORD_SESSION", "PATH", "HOME"] {
            assert!(!is_secret_var(v), "{v}");
        }
    }

    #[test]
    fn a_secret_never_shows_in_debug_output() {
        let s = Secret::new("cs_w1_0123456789abcdef".into());
        assert_eq!(format!("{s:?}"), "Secret(..)");
        assert!(!format!("{:?}", Some(s)).contains("0123"));
    }
}
