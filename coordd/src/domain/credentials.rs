//! Agent credentials (opt-in): a secret per registered agent, issued by `agents.register`
//! and stored only as its SHA-256 hash; `agents.authenticate` proves a connection acts for
//! an agent (the comparison takes the same time whatever the secret and whether the agent
//! exists). With the project's `require_credentials` setting on, every write made on a
//! connection needs that connection to be authenticated: as the agent the write names,
//! or, for a write that names none (orch planning, settings, registrations), as any agent.
//! Who may change the rules once credentials are required is [`roles`]. See
//! `docs/security.md` for what this does and does not protect against.

pub mod roles;

use coord_proto::ErrorCode;
use coord_proto::types::*;
use serde_json::json;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::events::{self, Draft};
use crate::error::{Error, Result};
use crate::store::Tx;
use crate::time::Ts;

const REQUIRE_KEY: &str = "require_credentials";

/// Is the project in require-credentials mode?
pub fn required(tx: &dyn Tx) -> Result<bool> {
    Ok(tx.agents().setting(REQUIRE_KEY)?.as_deref() == Some("true"))
}

/// Turn the mode on or off (recording `settings.changed` when it changes); whether it is on.
pub fn set_required(tx: &mut dyn Tx, now: Ts, on: Option<bool>) -> Result<bool> {
    let Some(on) = on else { return required(tx) };
    if required(tx)? != on {
        tx.agents_mut().setting_put(REQUIRE_KEY, if on { "true" } else { "false" })?;
        let payload = json!({ REQUIRE_KEY: on });
        let summary = format!("require credentials {}", if on { "on" } else { "off" });
        events::record(tx, &Draft::about(EventType::SettingsChanged, "", "", "", &summary, &payload, now))?;
    }
    Ok(on)
}

fn unauthenticated(msg: String) -> Error {
    Error::app(ErrorCode::Unauthenticated, msg)
}

/// May a call from a connection authenticated as `authenticated` write as `agent` (or,
/// with `None`, write at all)? Always, unless credentials are required.
pub fn authorize(tx: &dyn Tx, agent: Option<&str>, authenticated: &[String]) -> Result<()> {
    if !required(tx)? {
        return Ok(());
    }
    match agent {
        Some(a) if authenticated.iter().any(|x| x == a) => Ok(()),
        Some(a) => Err(unauthenticated(format!(
            "credentials are required in this project, and this connection is not authenticated as '{a}': \
             authenticate it with that agent's secret (agents.authenticate)"
        ))),
        None if !authenticated.is_empty() => Ok(()),
        None => Err(unauthenticated(
            "credentials are required in this project, and this connection is not authenticated as any agent: \
             authenticate it with an agent's secret (agents.authenticate)"
                .into(),
        )),
    }
}

/// What a call needs of its connection, decided at its entry from the authority table
/// (`coord_proto::authority`) and checked against the stored settings by [`admit`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Need {
    /// Authenticated as this agent; `None`: as some agent.
    pub agent: Option<String>,
    /// Also holding the lead's role, for calling this method.
    pub lead: Option<&'static str>,
}

impl Need {
    /// Met by the connection's own agents alone, whatever the settings?
    pub fn met_by(&self, authenticated: &[String]) -> bool {
        self.lead.is_none()
            && match &self.agent {
                Some(a) => authenticated.contains(a),
                None => !authenticated.is_empty(),
            }
    }
}

/// Does a connection authenticated as `authenticated` meet `need`? Always while
/// credentials are not required.
pub fn admit(tx: &dyn Tx, need: &Need, authenticated: &[String]) -> Result<()> {
    authorize(tx, need.agent.as_deref(), authenticated)?;
    match need.lead {
        Some(method) => roles::authorize(tx, Some(authenticated), &format!("call {method}")),
        None => Ok(()),
    }
}

fn hash(secret: &str) -> String {
    Sha256::digest(secret.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// Issue a new secret for `agent_id` (replacing any earlier one) and store its hash.
pub fn issue(tx: &mut dyn Tx, agent_id: &str, now: Ts) -> Result<String> {
    let secret = crate::ids::new_secret(agent_id)?;
    tx.agents_mut().credential_put(agent_id, &hash(&secret), now)?;
    Ok(secret)
}

/// Whether `agent_id` has a secret.
pub fn has_secret(tx: &dyn Tx, agent_id: &str) -> Result<bool> {
    Ok(tx.agents().credential_hash(agent_id)?.is_some())
}

/// Check `secret` against `agent_id`'s, in constant time; the same error whether the agent
/// is unknown, has no secret, or the secret is wrong.
pub fn verify(tx: &dyn Tx, agent_id: &str, secret: &str) -> Result<()> {
    // An agent without a secret is compared against a hash no secret has, so the time
    // taken does not tell which agents exist.
    let stored = tx.agents().credential_hash(agent_id)?.unwrap_or_else(|| "-".repeat(64));
    let presented = hash(secret);
    if bool::from(presented.as_bytes().ct_eq(stored.as_bytes())) {
        Ok(())
    } else {
        Err(unauthenticated(format!("the secret is not that of agent '{agent_id}' (or it has none)")))
    }
}

/// Who the current call's connection is authenticated as (`None`: the daemon's own work),
/// for a write whose acting agent is decided inside its transaction
/// (`Core::write_acting`).
pub struct Acting {
    authenticated: Option<Vec<String>>,
    /// The dashboard page's overseer and whether it may act only as them.
    page: Option<(String, bool)>,
}

impl Acting {
    pub fn new(authenticated: Option<Vec<String>>, page: Option<(String, bool)>) -> Acting {
        Acting { authenticated, page }
    }

    /// The daemon's own work: nothing to check.
    pub fn daemon() -> Acting {
        Acting { authenticated: None, page: None }
    }

    /// May this call write as `agent`? Always for the daemon's own work; a dashboard page
    /// as its overseer, and as an agent it authenticated as (any, when not restricted);
    /// anyone else unless credentials are required.
    pub fn check(&self, tx: &dyn Tx, agent: &str) -> Result<()> {
        let authenticated = self.authenticated.as_deref().unwrap_or_default();
        if let Some((overseer, restricted)) = &self.page {
            if agent == overseer {
                return Ok(());
            }
            if *restricted {
                page_may_act_as(overseer, Some(agent), authenticated)?;
            }
        }
        match &self.authenticated {
            None => Ok(()),
            Some(authenticated) => authorize(tx, Some(agent), authenticated),
        }
    }

    /// May this call do `what` (`change the permission policy`), which is the lead's and
    /// the admins' ([`roles`])?
    pub fn check_role(&self, tx: &dyn Tx, what: &str) -> Result<()> {
        roles::authorize(tx, self.authenticated.as_deref(), what)
    }

    /// May this call act on `what`, which belongs to `owner`: as `owner`, the lead or an
    /// admin ([`roles::authorize_owner`])?
    pub fn check_owner(&self, tx: &dyn Tx, owner: &str, what: &str) -> Result<()> {
        roles::authorize_owner(tx, self.authenticated.as_deref(), owner, what)
    }

    /// Does this call hold the lead's authority over others' objects: the daemon's own
    /// work, a project that does not require credentials, or a connection authenticated as
    /// the lead or an admin?
    pub fn is_lead(&self, tx: &dyn Tx) -> Result<bool> {
        let Some(authenticated) = &self.authenticated else { return Ok(true) };
        Ok(!required(tx)? || roles::load(tx)?.held_by(authenticated))
    }

    /// Is this call's connection authenticated as the lead or an admin, with credentials
    /// required (the only time anyone proves it)?
    pub fn holds_role(&self, tx: &dyn Tx) -> Result<bool> {
        Ok(required(tx)? && roles::load(tx)?.held_by(self.agents()))
    }

    /// Is this call the dashboard's page acting as its overseer, `agent`?
    pub fn is_overseer(&self, agent: &str) -> bool {
        self.page.as_ref().is_some_and(|(overseer, _)| overseer == agent)
    }

    /// The agents this call's connection proved it acts for (none for the daemon's work).
    pub fn agents(&self) -> &[String] {
        self.authenticated.as_deref().unwrap_or_default()
    }

    /// May `actor` (the agent the call acts as, already proven: see [`Need`]) act on an
    /// object that is `parties`': as one of them, or holding the lead's authority
    /// ([`Acting::is_lead`]). `what` completes "only …, the lead or an admin may": say
    /// "claim thread 'thr_…'". Refused `1121 not_permitted`.
    pub fn check_party(&self, tx: &dyn Tx, actor: &str, parties: &[&str], what: &str) -> Result<()> {
        if parties.contains(&actor) || self.is_lead(tx)? {
            return Ok(());
        }
        let named = match parties {
            [] => "its owner".to_string(),
            many => many.iter().map(|p| format!("'{p}'")).collect::<Vec<_>>().join(" or "),
        };
        Err(not_permitted(&named, what, actor))
    }
}

/// `1121 not_permitted`: only `who` (`'w-b'`, "the task's worker"), the lead or an admin
/// may do `what`, and the call acts as `actor`.
pub fn not_permitted(who: &str, what: &str, actor: &str) -> Error {
    Error::app(
        ErrorCode::NotPermitted,
        format!(
            "credentials are required in this project, and only {who}, the lead or an admin may {what} \
             (this call acts as '{actor}')"
        ),
    )
}

/// May a dashboard page that acts only as `overseer`, and authenticated as
/// `authenticated`, write as `agent` (`None`: a write that names no one)? As its overseer,
/// and as an agent whose secret it presented; a write that names no one is left to the
/// credentials rule.
pub fn page_may_act_as(overseer: &str, agent: Option<&str>, authenticated: &[String]) -> Result<()> {
    match agent.filter(|a| !a.is_empty()) {
        Some(a) if a != overseer && !authenticated.iter().any(|x| x == a) => Err(Error::app(
            ErrorCode::PageActsAsOverseer,
            format!(
                "the dashboard acts as the overseer '{overseer}', not as '{a}' \
                 (start the daemon with --dashboard-acts-as-anyone to allow it)"
            ),
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::sqlite::testing::Memory;

    #[test]
    fn a_secret_is_stored_hashed_and_checked() {
        let m = Memory::new();
        let secret = m.write(|tx, now| issue(tx, "w-one", now)).unwrap();
        assert_eq!(secret_agent(&secret), Some("w-one"));
        let stored = m.read(|tx, _| tx.agents().credential_hash("w-one")).unwrap().unwrap();
        assert_ne!(stored, secret);
        assert!(!stored.contains(secret.rsplit('_').next().unwrap()), "only a hash is kept");
        assert!(m.read(|tx, _| verify(tx, "w-one", &secret)).is_ok());
        let wrong = m.read(|tx, _| verify(tx, "w-one", &secret.replace('a', "b"))).unwrap_err();
        assert_eq!(wrong.code(), Some(ErrorCode::Unauthenticated));
        let unknown = m.read(|tx, _| verify(tx, "nobody", &secret)).unwrap_err();
        assert_eq!(unknown.code(), Some(ErrorCode::Unauthenticated));
    }

    #[test]
    fn required_credentials_bind_writes_to_authenticated_agents() {
        let m = Memory::new();
        let me = vec!["w-one".to_string()];
        assert!(m.read(|tx, _| authorize(tx, Some("w-two"), &[])).is_ok(), "off by default");
        m.write(|tx, now| set_required(tx, now, Some(true))).unwrap();
        assert!(m.read(|tx, _| authorize(tx, Some("w-one"), &me)).is_ok());
        let other = m.read(|tx, _| authorize(tx, Some("w-two"), &me)).unwrap_err();
        assert_eq!(other.code(), Some(ErrorCode::Unauthenticated));
        assert!(m.read(|tx, _| authorize(tx, None, &me)).is_ok());
        assert!(m.read(|tx, _| authorize(tx, None, &[])).is_err());
    }
}
