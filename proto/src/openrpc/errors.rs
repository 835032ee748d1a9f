//! Which errors each method can answer: the OpenRPC method's own `errors` (each a
//! reference into `components.errors`). A method lists its own application codes here;
//! those every call can meet are added by [`method_errors`]: `invalid_params` for a method
//! with params, `storage` and `internal` for all, and for a write the codes of a failed
//! save (`io_write_failed`, `read_only`) and of credentials (`unauthenticated`,
//! `not_permitted`, and `page_acts_as_overseer` for a call from the dashboard's page). A
//! subscription adds `too_many_subscriptions` and `internal_error` (a stream the daemon
//! could not go on with); the event subscriptions also `subscriber_too_slow`.
//! `tests/tests/discover.rs` calls every method with params made from its schema and
//! holds each answer to this list.

use crate::ErrorCode::{self, *};
use crate::error::{INTERNAL_ERROR, INVALID_PARAMS, SUBSCRIBER_TOO_SLOW, TOO_MANY_SUBSCRIPTIONS};

/// Does the method change shared state (and so meet the errors of a write)?
#[derive(Clone, Copy, PartialEq, Eq)]
enum Does {
    Read,
    Write,
}
use Does::*;

/// The orch methods that read a run or a task: its id malformed, or unknown.
const ORCH_READ: &[ErrorCode] = &[InvalidInput, NotFound];
/// The orch writes on a run's tasks: besides [`ORCH_READ`], a status that does not allow it.
const ORCH_WRITE: &[ErrorCode] = &[InvalidInput, NotFound, InvalidTransition];
/// An inbox write by a lease holder.
const HOLDER: &[ErrorCode] =
    &[InvalidInput, InvalidTransition, NotFound, NotLeaseHolder, LeaseExpired, StaleLease, LeaseConflict];

/// Each method's own codes. Every method of `super::methods` has a row (a unit test
/// checks it).
const TABLE: &[(&str, Does, &[ErrorCode])] = &[
    ("agents.register", Write, &[InvalidArgs, DuplicateAgentId]),
    ("agents.list", Read, &[InvalidArgs, IoReadFailed]),
    ("agents.show", Read, &[InvalidArgs, AgentNotFound, IoReadFailed]),
    ("agents.authenticate", Write, &[InvalidArgs, AgentNotFound]),
    ("agents.heartbeat", Write, &[InvalidArgs, AgentNotFound]),
    (
        "reservations.reserve",
        Write,
        &[InvalidArgs, MissingTaskId, AgentNotFound, ReservationConflict, ReservationStaleFound],
    ),
    ("reservations.release", Write, &[InvalidArgs, AgentNotFound, ReservationNotFound, ReleaseForbidden]),
    ("reservations.list", Read, &[InvalidArgs, InvalidInput, IoReadFailed]),
    ("reservations.check", Read, &[InvalidArgs, IoReadFailed]),
    (
        "control.send",
        Write,
        &[
            InvalidInput,
            InvalidTransition,
            NotFound,
            ResponseForbidden,
            DuplicateMessageId,
            UnknownSender,
            UnknownRecipient,
        ],
    ),
    ("control.requests", Read, &[InvalidInput, NotFound]),
    ("policy.get", Read, &[]),
    ("policy.set", Write, &[InvalidInput, InvalidTransition]),
    ("policy.check", Read, &[InvalidInput]),
    ("progress.report", Read, &[InvalidInput]),
    ("progress.recent", Read, &[InvalidInput]),
    ("progress.subscribe", Read, &[InvalidInput, CursorAhead]),
    ("dashboard.start", Write, &[InvalidInput, PortUnavailable]),
    ("dashboard.status", Read, &[]),
    ("dashboard.stop", Write, &[]),
    ("events.list", Read, &[InvalidInput, NotFound]),
    ("events.subscribe", Read, &[InvalidInput, NotFound, CursorAhead]),
    ("events.subscribeBatched", Read, &[InvalidInput, NotFound, CursorAhead]),
    ("inbox.init", Write, &[InvalidInput, LeadRequired]),
    (
        "inbox.send",
        Write,
        &[InvalidInput, InvalidTransition, NotFound, InvalidCategory, MissingTaskId, UnknownSender, UnknownRecipient],
    ),
    ("inbox.fetch", Read, &[InvalidInput]),
    ("inbox.claim", Write, &[InvalidInput, InvalidTransition, NotFound, LeaseConflict]),
    ("inbox.renew", Write, HOLDER),
    ("inbox.update", Write, HOLDER),
    ("inbox.reply", Write, &[InvalidInput, InvalidTransition, NotFound, UnknownSender, UnknownRecipient]),
    ("inbox.done", Write, HOLDER),
    ("inbox.fail", Write, HOLDER),
    ("inbox.cancel", Write, &[InvalidInput, InvalidTransition, NotFound]),
    ("inbox.list", Read, &[InvalidInput, NotFound]),
    ("inbox.show", Read, &[InvalidInput, NotFound]),
    ("inbox.markRead", Write, &[InvalidInput, NotFound]),
    ("inbox.status", Read, &[InvalidInput]),
    ("launch.sessionStart", Write, &[InvalidInput, InvalidTransition, NotFound, SessionRunning]),
    ("launch.sessionExit", Write, &[InvalidInput, SessionNotFound, SessionEnded]),
    ("launch.sessionTail", Write, &[InvalidInput, SessionNotFound]),
    ("launch.sessionList", Read, &[InvalidInput, NotFound]),
    ("launch.usage", Write, &[InvalidInput, NotFound, SessionNotFound]),
    ("launch.budgetSet", Write, &[InvalidInput, NotFound, SessionNotFound]),
    ("launch.usageShow", Read, ORCH_READ),
    ("mail.list", Read, &[InvalidInput, InvalidArgs, IoReadFailed]),
    ("mail.read", Write, &[InvalidInput, InvalidArgs, AgentNotFound, MessageNotFound]),
    ("mail.ack", Write, &[InvalidInput, InvalidArgs, AgentNotFound, MessageNotFound, AckForbidden]),
    ("mail.check", Write, &[InvalidInput, InvalidArgs]),
    ("mail.pending", Write, &[InvalidInput, InvalidArgs]),
    ("mail.withdraw", Write, &[InvalidInput, InvalidTransition, MessageNotFound, WithdrawForbidden]),
    ("peers.link", Write, &[InvalidInput, NotFound]),
    ("peers.list", Read, &[InvalidInput]),
    ("session.installHooks", Write, &[InvalidInput, IoReadFailed]),
    ("orch.runCreate", Write, &[InvalidInput]),
    ("orch.runList", Read, &[InvalidInput]),
    ("orch.runShow", Read, ORCH_READ),
    ("orch.taskAdd", Write, ORCH_WRITE),
    ("orch.taskList", Read, ORCH_READ),
    ("orch.taskShow", Read, ORCH_READ),
    ("orch.depAdd", Write, ORCH_WRITE),
    ("orch.depRemove", Write, ORCH_WRITE),
    ("orch.ready", Read, ORCH_READ),
    ("orch.dispatch", Write, &[InvalidInput, NotFound, InvalidTransition, LeaseConflict]),
    ("orch.reconcile", Write, ORCH_WRITE),
    ("orch.blocked", Read, ORCH_READ),
    ("orch.answer", Write, &[InvalidInput, NotFound, InvalidTransition, UnknownSender, UnknownRecipient]),
    ("orch.retry", Write, &[InvalidInput, NotFound, InvalidTransition, LeaseConflict]),
    ("orch.reassign", Write, &[InvalidInput, NotFound, InvalidTransition, LeaseConflict]),
    ("orch.cancel", Write, ORCH_WRITE),
    ("orch.worktreeList", Read, ORCH_READ),
    ("orch.worktreePrune", Write, ORCH_WRITE),
    ("orch.councilStart", Write, ORCH_WRITE),
    ("orch.councilShow", Read, ORCH_READ),
    ("orch.councilList", Read, ORCH_READ),
    ("orch.taskEdit", Write, ORCH_WRITE),
    ("orch.taskRemove", Write, ORCH_WRITE),
    ("orch.merge", Write, &[InvalidInput, NotFound, InvalidTransition, MergeConflict]),
    ("orch.runFinish", Write, &[InvalidInput, NotFound, InvalidTransition, MergeConflict]),
    ("orch.runEdit", Write, ORCH_WRITE),
    ("orch.queueNext", Write, ORCH_WRITE),
    ("orch.queueReport", Write, ORCH_WRITE),
    ("orch.diff", Read, ORCH_READ),
    ("orch.reviewComment", Write, ORCH_WRITE),
    ("orch.reviewApprove", Write, ORCH_WRITE),
    ("orch.reviewRequestChanges", Write, ORCH_WRITE),
    ("messages.search", Read, &[InvalidInput]),
    ("system.hello", Read, &[]),
    ("system.shutdown", Write, &[]),
    ("rpc.discover", Read, &[]),
    ("view.agents", Read, &[InvalidInput]),
    ("view.run", Read, ORCH_READ),
    ("view.timeline", Read, &[InvalidInput, NotFound]),
];

/// One error a method can answer: the name of its entry in `components.errors`.
pub fn method_errors(name: &str, has_params: bool, subscription: bool) -> Option<Vec<&'static str>> {
    let &(_, does, own) = TABLE.iter().find(|(n, _, _)| *n == name)?;
    let mut out: Vec<&'static str> = Vec::new();
    if has_params {
        out.push(protocol_name(INVALID_PARAMS));
    }
    if subscription {
        out.push(protocol_name(TOO_MANY_SUBSCRIPTIONS));
        out.push(protocol_name(INTERNAL_ERROR));
        if name.starts_with("events.") {
            out.push(protocol_name(SUBSCRIBER_TOO_SLOW));
        }
    }
    let mut codes: Vec<ErrorCode> = own.to_vec();
    codes.extend([Storage, Internal]);
    if does == Write {
        codes.extend([IoWriteFailed, ReadOnly, Unauthenticated, NotPermitted, PageActsAsOverseer]);
    }
    for c in ErrorCode::ALL.iter().filter(|c| codes.contains(c)) {
        out.push(c.as_str());
    }
    Some(out)
}

fn protocol_name(code: i32) -> &'static str {
    crate::error::PROTOCOL_CODES.iter().find(|(c, _, _)| *c == code).map(|(_, n, _)| *n).expect("a protocol code")
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_method_has_a_row_and_no_row_names_a_method_that_is_gone() {
        let names: Vec<&str> = super::super::methods().iter().map(|m| m.name).collect();
        for n in &names {
            assert!(super::method_errors(n, true, false).is_some(), "{n} has no row in openrpc/errors.rs");
        }
        for (n, _, _) in super::TABLE {
            assert!(names.contains(n), "openrpc/errors.rs names {n}, which is not a method");
        }
    }
}
