//! Roles: who may change the rules. The project's **lead** (named by the first
//! `inbox.init` that names one) and its **admins** may change the permission policy, the
//! project's settings and the roster; every other agent is a worker, and a run belongs to
//! its creator (or the lead and admins). The check is on the agents the call's connection
//! authenticated as (`agents.authenticate`), never on a name in the params, and it applies
//! while credentials are required: without them no connection proves who it is. A person
//! at the dashboard (the overseer) is not an agent and holds no role.

use coord_proto::ErrorCode;
use coord_proto::types::*;
use serde_json::json;

use super::super::check;
use super::super::events::{self, Draft};
use crate::error::{Error, Result};
use crate::store::Tx;
use crate::time::Ts;

const LEAD_KEY: &str = "lead";
const ADMINS_KEY: &str = "admins";

/// The project's lead and admins.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Roles {
    pub lead: Option<String>,
    pub admins: Vec<String>,
}

impl Roles {
    /// Does one of `agents` hold the lead's authority?
    pub fn held_by(&self, agents: &[String]) -> bool {
        agents.iter().any(|a| self.lead.as_deref() == Some(a.as_str()) || self.admins.contains(a))
    }

    fn describe(&self) -> String {
        let lead = self.lead.as_deref().map_or("no lead is named".to_string(), |l| format!("the lead is '{l}'"));
        if self.admins.is_empty() { lead } else { format!("{lead}, the admins {}", self.admins.join(", ")) }
    }
}

/// The stored roles.
pub fn load(tx: &dyn Tx) -> Result<Roles> {
    let lead = tx.agents().setting(LEAD_KEY)?.filter(|l| !l.is_empty());
    let admins = match tx.agents().setting(ADMINS_KEY)? {
        Some(text) => serde_json::from_str(&text).map_err(|e| Error::Storage(format!("stored admins: {e}")))?,
        None => Vec::new(),
    };
    Ok(Roles { lead, admins })
}

/// May a call whose connection authenticated as `authenticated` (`None`: the daemon's own
/// work) do `what` (`change the permission policy`), which is the lead's and the admins'?
/// Always while credentials are not required.
pub fn authorize(tx: &dyn Tx, authenticated: Option<&[String]>, what: &str) -> Result<()> {
    let Some(authed) = authenticated else { return Ok(()) };
    if !super::required(tx)? {
        return Ok(());
    }
    if authed.is_empty() {
        return Err(Error::app(
            ErrorCode::Unauthenticated,
            format!(
                "credentials are required in this project, and only its lead or an admin may {what}: \
                 authenticate this connection with the lead's or an admin's secret (agents.authenticate)"
            ),
        ));
    }
    let roles = load(tx)?;
    if roles.held_by(authed) {
        return Ok(());
    }
    Err(Error::app(
        ErrorCode::NotPermitted,
        format!(
            "only the project's lead or an admin may {what} ({}); this connection is authenticated as {}",
            roles.describe(),
            authed.join(", ")
        ),
    ))
}

/// May a call from `authenticated` act on what belongs to `owner` (a run's creator)? As
/// `owner` itself, or as the lead or an admin; always while credentials are not required.
pub fn authorize_owner(tx: &dyn Tx, authenticated: Option<&[String]>, owner: &str, what: &str) -> Result<()> {
    let Some(authed) = authenticated else { return Ok(()) };
    if !super::required(tx)? || authed.iter().any(|a| a == owner) || load(tx)?.held_by(authed) {
        return Ok(());
    }
    super::authorize(tx, Some(owner), authed).map_err(|e| match e.code() {
        Some(ErrorCode::Unauthenticated) => Error::app(
            ErrorCode::Unauthenticated,
            format!(
                "credentials are required in this project, and {what} is '{owner}''s: authenticate this \
                 connection as '{owner}', the lead or an admin (agents.authenticate)"
            ),
        ),
        _ => e,
    })
}

/// Would `lead`/`admins` (as `inbox.init` gives them) change the stored roles?
pub fn changes(tx: &dyn Tx, lead: Option<&str>, admins: Option<&[String]>) -> Result<bool> {
    let now = load(tx)?;
    let lead_changes = lead.is_some_and(|l| now.lead.as_deref().unwrap_or("") != l);
    Ok(lead_changes || admins.is_some_and(|a| now.admins != a))
}

/// Apply `inbox.init`'s `lead` (an empty string removes it) and `admins` (replacing the
/// list), recording a `settings.changed` event for each change; the roles now stored.
pub fn set(tx: &mut dyn Tx, now: Ts, lead: Option<&str>, admins: Option<&[String]>) -> Result<Roles> {
    let current = load(tx)?;
    if let Some(lead) = lead.filter(|l| current.lead.as_deref().unwrap_or("") != *l) {
        if !lead.is_empty() {
            check::agent("lead", lead)?;
        }
        tx.agents_mut().setting_put(LEAD_KEY, lead)?;
        let summary = if lead.is_empty() { "no lead".to_string() } else { format!("lead {lead}") };
        changed(tx, now, &summary, json!({ LEAD_KEY: lead }))?;
    }
    if let Some(admins) = admins.filter(|a| current.admins != *a) {
        for a in admins {
            check::agent("admins", a)?;
        }
        let text = serde_json::to_string(admins).map_err(|e| Error::Internal(e.to_string()))?;
        tx.agents_mut().setting_put(ADMINS_KEY, &text)?;
        let summary = if admins.is_empty() { "no admins".to_string() } else { format!("admins {}", admins.join(", ")) };
        changed(tx, now, &summary, json!({ ADMINS_KEY: admins }))?;
    }
    load(tx)
}

fn changed(tx: &mut dyn Tx, now: Ts, summary: &str, payload: serde_json::Value) -> Result<()> {
    events::record(tx, &Draft::about(EventType::SettingsChanged, "", "", "", summary, &payload, now))?;
    Ok(())
}

/// While credentials are required, a lead that can prove itself (a registered agent with
/// a secret) must be named, or nobody could ever change the rules again.
pub fn check_lead(tx: &dyn Tx) -> Result<()> {
    if !super::required(tx)? {
        return Ok(());
    }
    let lead_required = |msg: String| Err(Error::app(ErrorCode::LeadRequired, msg));
    match load(tx)?.lead {
        None => lead_required(
            "credentials cannot be required without a lead: name the project's lead (inbox.init's lead), \
             a registered agent with a secret"
                .into(),
        ),
        Some(l) if !super::has_secret(tx, &l)? => lead_required(format!(
            "the lead '{l}' has no secret, so it could never prove itself: register it first (agents.register)"
        )),
        Some(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::sqlite::testing::Memory;

    fn on(m: &Memory) {
        m.write(|tx, now| {
            super::super::issue(tx, "boss", now)?;
            set(tx, now, Some("boss"), Some(&["deputy".to_string()]))?;
            super::super::set_required(tx, now, Some(true))
        })
        .unwrap();
    }

    #[test]
    fn only_the_lead_and_admins_may_change_the_rules_once_credentials_are_required() {
        let m = Memory::new();
        let worker = vec!["w-one".to_string()];
        assert!(m.read(|tx, _| authorize(tx, Some(&worker), "change the policy")).is_ok(), "off: no check");
        on(&m);
        let refused = m.read(|tx, _| authorize(tx, Some(&worker), "change the policy")).unwrap_err();
        assert_eq!(refused.code(), Some(ErrorCode::NotPermitted));
        let anonymous = m.read(|tx, _| authorize(tx, Some(&[]), "change the policy")).unwrap_err();
        assert_eq!(anonymous.code(), Some(ErrorCode::Unauthenticated));
        for agent in ["boss", "deputy"] {
            assert!(m.read(move |tx, _| authorize(tx, Some(&[agent.to_string()]), "change the policy")).is_ok());
        }
        assert!(m.read(|tx, _| authorize(tx, None, "change the policy")).is_ok(), "the daemon's own work");
    }

    #[test]
    fn a_run_is_its_creators_and_the_leads() {
        let m = Memory::new();
        on(&m);
        let owner = |who: &str| {
            let who = vec![who.to_string()];
            m.read(move |tx, _| authorize_owner(tx, Some(&who), "w-one", "run R1"))
        };
        assert!(owner("w-one").is_ok() && owner("boss").is_ok());
        assert_eq!(owner("w-two").unwrap_err().code(), Some(ErrorCode::Unauthenticated));
    }

    #[test]
    fn credentials_need_a_lead_with_a_secret() {
        let m = Memory::new();
        m.write(|tx, now| super::super::set_required(tx, now, Some(true))).unwrap();
        assert_eq!(m.read(|tx, _| check_lead(tx)).unwrap_err().code(), Some(ErrorCode::LeadRequired));
        m.write(|tx, now| set(tx, now, Some("ghost"), None)).unwrap();
        assert_eq!(m.read(|tx, _| check_lead(tx)).unwrap_err().code(), Some(ErrorCode::LeadRequired));
        m.write(|tx, now| super::super::issue(tx, "ghost", now)).unwrap();
        assert!(m.read(|tx, _| check_lead(tx)).is_ok());
        assert!(m.read(|tx, _| changes(tx, Some("ghost"), None)).is_ok_and(|c| !c));
        assert!(m.read(|tx, _| changes(tx, Some("other"), None)).is_ok_and(|c| c));
    }
}
