//! Mail and reservation calls that strict mode limits to registered agents: the agents
//! layer's check, then the mail or reservations rule.

use coord_proto::types::*;

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
