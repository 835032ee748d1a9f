//! Mail and reservation calls that strict mode limits to registered agents: the agents
//! layer's check, then the mail or reservations rule.

use coord_proto::types::*;

use crate::domain::credentials::{self, Acting, roles};
use crate::domain::mail::copies as mail;
use crate::domain::mail::delivery;
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

/// `mail.check`, by the mailbox's owner: with credentials required, a task's mailbox is its
/// worker's (or the lead's or an admin's).
pub fn mail_check(tx: &mut dyn Tx, now: Ts, p: CheckParams, acting: &Acting) -> Result<CheckResult> {
    check_mailbox(tx, acting, p.agent.as_deref(), p.task_id.as_deref())?;
    delivery::check(tx, now, p)
}

/// `mail.pending` with `remind` (which marks what it hands out), by the mailbox's owner.
pub fn mail_remind(tx: &mut dyn Tx, now: Ts, p: PendingParams, acting: &Acting) -> Result<PendingResult> {
    check_mailbox(tx, acting, p.agent.as_deref(), p.task_id.as_deref())?;
    delivery::remind(tx, now, p)
}

/// May this call take `task`'s mail: as the agent named (or, none named, one its
/// connection proved) that runs the task, or with the lead's authority?
fn check_mailbox(tx: &dyn Tx, acting: &Acting, agent: Option<&str>, task: Option<&str>) -> Result<()> {
    let Some(task) = task else { return Ok(()) };
    if acting.is_lead(tx)? {
        return Ok(());
    }
    let candidates: Vec<&str> = match agent {
        Some(a) => vec![a],
        None => acting.agents().iter().map(String::as_str).collect(),
    };
    for a in &candidates {
        if delivery::runs_task(tx, a, task)? {
            return Ok(());
        }
    }
    let actor = candidates.join(", ");
    Err(credentials::not_permitted("the task's worker", &format!("take task '{task}''s mail"), &actor))
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
        roles::authorize(tx, authenticated, "change the roster (agents.register)")?;
    }
    let rotate = p.rotate_secret;
    let mut r = agents::register(tx, now, p)?;
    if !was_registered || rotate || !credentials::has_secret(tx, &r.agent.agent_id)? {
        r.secret = Some(credentials::issue(tx, &r.agent.agent_id, now)?);
    }
    Ok(r)
}
