//! Mail and reservation calls that strict mode limits to registered agents: the agents
//! layer's check, then the mail or reservations rule.

use coord_proto::types::*;

use crate::domain::credentials::{self, roles};
use crate::domain::mail::copies as mail;
use crate::domain::{agents, reservations};
use crate::error::Result;
use crate::store::Tx;
use crate::time::Ts;

/// `mail.read`.
pub fn mail_read(tx: &mut dyn Tx, now: Ts, p: MailRef) -> Result<MailItemResult> {
    agents::check_known(tx, &p.agent)?;
    mail::read(tx, now, p)
}

/// `mail.ack`.
pub fn mail_ack(tx: &mut dyn Tx, now: Ts, p: MailRef) -> Result<MailItemResult> {
    agents::check_known(tx, &p.agent)?;
    mail::ack(tx, now, p)
}

/// `reservations.reserve`.
pub fn reserve(tx: &mut dyn Tx, now: Ts, p: ReserveParams) -> Result<ReserveResult> {
    crate::domain::check::agent_name("agent", &p.agent)?;
    agents::check_known(tx, &p.agent)?;
    reservations::reserve(tx, now, p)
}

/// `reservations.release`.
pub fn release(tx: &mut dyn Tx, now: Ts, p: ReleaseParams) -> Result<ReleaseResult> {
    crate::domain::check::agent_name("agent", &p.agent)?;
    agents::check_known(tx, &p.agent)?;
    reservations::release(tx, now, p)
}

/// `agents.register`, with its credential: a new registration (or that of an agent only
/// recorded so far) gets a secret, as does a force update that asks to rotate it or of an
/// agent that has none. With credentials required, the roster is the lead's and the
/// admins' ([`roles`]): an agent may update (or rotate the secret of) its own
/// registration, and only the lead or an admin may register or update another
/// (`authenticated`: `None` for the daemon itself).
pub fn register(tx: &mut dyn Tx, now: Ts, p: RegisterParams, authenticated: Option<&[String]>) -> Result<AgentResult> {
    let was_registered = tx.agents().agent(&p.agent_id)?.is_some_and(|a| a.registered);
    let itself = authenticated.is_some_and(|a| a.contains(&p.agent_id));
    if !(was_registered && itself) {
        roles::authorize(tx, authenticated, "the roster (agents.register)")?;
    }
    let rotate = p.rotate_secret;
    let mut r = agents::register(tx, now, p)?;
    if !was_registered || rotate || !credentials::has_secret(tx, &r.agent.agent_id)? {
        r.secret = Some(credentials::issue(tx, &r.agent.agent_id, now)?);
    }
    Ok(r)
}
