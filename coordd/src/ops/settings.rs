//! `inbox.init`: the project's settings (strict agents, required credentials) and roles
//! (the lead, the admins) changed together, in one transaction. While credentials are
//! required, a change needs the lead's or an admin's connection, checked against the
//! roles as they were before the call; afterwards a lead that can prove itself must be
//! named, so the rules can always be changed again.

use coord_proto::types::*;

use crate::domain::agents;
use crate::domain::credentials::{self, Acting, roles};
use crate::error::Result;
use crate::store::Tx;
use crate::time::Ts;

/// What `inbox.init` leaves in force.
pub struct Settings {
    pub strict_agents: bool,
    pub require_credentials: bool,
    pub roles: roles::Roles,
}

/// `inbox.init`.
pub fn init(tx: &mut dyn Tx, now: Ts, p: &InitParams, acting: &Acting) -> Result<Settings> {
    let (strict, required) = (agents::strict(&*tx)?, credentials::required(&*tx)?);
    let strict_changes = p.strict_agents.is_some_and(|on| on != strict);
    let required_changes = p.require_credentials.is_some_and(|on| on != required);
    if strict_changes || required_changes || roles::changes(&*tx, p.lead.as_deref(), p.admins.as_deref())? {
        acting.check_role(&*tx, "change the project's settings and roles")?;
    }
    let strict_agents = agents::init(tx, now, p.clone())?;
    let roles = roles::set(tx, now, p.lead.as_deref(), p.admins.as_deref())?;
    let require_credentials = credentials::set_required(tx, now, p.require_credentials)?;
    roles::check_lead(&*tx)?;
    Ok(Settings { strict_agents, require_credentials, roles })
}
