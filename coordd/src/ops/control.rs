//! `control.send`: a typed control message. The recipient, when not given, is the run's
//! creator (its lead) or the permission policy's lead; then the inbox rules decide what the
//! message appends ([`control::send`]), the message is written and delivered like any other
//! ([`messages::typed`]; an answer gets no mail copy: its requester waits on the thread),
//! and the request it opens is recorded. A send retried with the
//! same sender-chosen message id returns what the first one wrote.

use coord_proto::types::*;

use super::messages;
use crate::domain::agents;
use crate::domain::inbox::control::{self, RequestEffect};
use crate::domain::inbox::thread;
use crate::domain::mail::copies::Delivering;
use crate::domain::policy;
use crate::error::{Error, Result};
use crate::store::Tx;
use crate::time::Ts;

/// `overseer`: the person the call comes from (the dashboard's page), who may answer, as
/// themselves, a request sent to the lead.
pub fn send(tx: &mut dyn Tx, now: Ts, mut p: ControlSendParams, overseer: Option<&str>) -> Result<ControlSendResult> {
    if let Some(m) = control::existing(tx, &p)? {
        let (thread, _) = thread::load(tx, &m.thread_id, now)?;
        let request_id = tx
            .requests()
            .request_of_thread(&m.thread_id)?
            .filter(|r| r.message_id == m.message_id || payload_request_id(&m.payload_json) == Some(&r.request_id))
            .map(|r| r.request_id);
        return Ok(ControlSendResult { thread, event_id: m.event_id, message: m, request_id, duplicate: true });
    }
    agents::check_parties(tx, &p.from, p.to.as_deref())?;
    let to = match (&p.to, MessageType::from_name(&p.msg_type).role()) {
        (_, TypeRole::Response(_)) => None,
        (Some(to), _) => Some(to.clone()),
        (None, _) => lead(tx, p.run_id.as_deref())?,
    };
    let msg_type = MessageType::from_name(&p.msg_type);
    if msg_type == MessageType::ShutdownRequest {
        super::shutdown::prepare(tx, now, &mut p)?;
    }
    let stand_in = match overseer {
        Some(o) if o == p.from => lead_of_request(tx, &p)?,
        _ => None,
    };
    let typed = control::send(tx, now, p, to, stand_in.as_deref())?;
    // An answer goes to whoever waits on the request's thread; it is not mail to deliver.
    let how = match typed.request {
        RequestEffect::Answers(_) => Delivering { recipients: Some(Vec::new()), ..Delivering::plain(typed.priority) },
        _ => Delivering::plain(typed.priority),
    };
    let result = messages::typed(tx, now, typed.append, how)?;
    let request_id = match typed.request {
        RequestEffect::None => None,
        RequestEffect::Opens(id) => Some(control::record_request(tx, &result.message, &result.thread, id)?),
        RequestEffect::Answers(r) => {
            messages::settle_request(tx, now, &r.thread_id)?;
            if msg_type == MessageType::ShutdownApproved {
                let idle = super::shutdown::approved(tx, now, &r)?;
                send(tx, now, idle, None)?;
            }
            Some(r.request_id)
        }
    };
    let MessageResult { thread, message, event_id } = result;
    Ok(ControlSendResult { thread, message, event_id, request_id, duplicate: false })
}

/// The lead a response's request was sent to, if it was sent to the lead (its run's
/// creator, else the policy's lead).
fn lead_of_request(tx: &dyn Tx, p: &ControlSendParams) -> Result<Option<String>> {
    let Some(request) = payload_request_id(&p.payload).map(|id| tx.requests().request(id)).transpose()?.flatten()
    else {
        return Ok(None);
    };
    let lead = lead(tx, Some(&request.run_id))?;
    Ok(lead.filter(|l| *l == request.to_agent))
}

/// Who leads: the run's creator, else the policy's lead.
fn lead(tx: &dyn Tx, run_id: Option<&str>) -> Result<Option<String>> {
    if let Some(run_id) = run_id.filter(|r| !r.is_empty()) {
        let run = tx.runs().run(run_id)?.ok_or_else(|| Error::not_found(format!("run '{run_id}' not found")))?;
        return Ok(Some(run.created_by));
    }
    policy::lead(tx)
}
