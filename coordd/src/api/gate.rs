//! The entry of every call: who may make it, from the one authority table
//! (`coord_proto::authority`). [`guard`] wraps each method of the table the socket and the
//! dashboard's WebSocket serve, so no call reaches its handler unchecked:
//!
//! - the dashboard's page (the overseer) is refused what its [`Page`] rule denies it
//!   (`1420 page_acts_as_overseer`), unless the daemon lets it act as anyone; writing as
//!   its overseer needs nothing more (the URL's token is its credential);
//! - the [`Caller`] rule becomes a [`Need`] (authenticated as the agent the params name,
//!   as any agent, as the lead or an admin). A need the connection's agents meet by
//!   themselves passes at once; otherwise it depends on the stored settings: a call whose
//!   whole effect is one write ([`CHECKED_IN_WRITE`]) has it checked in that write's
//!   transaction (`Core::write`), every other call by a read here, before its handler runs.
//!
//! The object rules (whose thread, run, mail or request it is) are the domain's, checked
//! where the object is read. Reads pass untouched.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use coord_proto::ErrorCode;
use coord_proto::authority::{self, Authority, Caller, Page};
use jsonrpsee::core::server::{MethodCallback, MethodResponse, Methods};
use jsonrpsee::types::ErrorObjectOwned;
use serde_json::value::RawValue;

use crate::core::Core;
use crate::domain::credentials::{self, Need};
use crate::error::{Error, Result};
use crate::net::caller;

/// Methods whose whole effect is one write through `Core` (`write`, `write_as`,
/// `write_acting`), which checks the call's [`Need`] inside its transaction: the hot paths
/// need no read of their own. Every other method is checked by a read at its entry; a new
/// method is, until it is listed here.
pub const CHECKED_IN_WRITE: &[&str] = &[
    "agents.heartbeat",
    "agents.register",
    "control.send",
    "inbox.cancel",
    "inbox.claim",
    "inbox.done",
    "inbox.fail",
    "inbox.markRead",
    "inbox.renew",
    "inbox.reply",
    "inbox.send",
    "inbox.update",
    "launch.sessionExit",
    "launch.sessionStart",
    "launch.sessionTail",
    "launch.usage",
    "launch.budgetSet",
    "mail.ack",
    "mail.check",
    "mail.pending",
    "mail.read",
    "mail.withdraw",
    "orch.answer",
    "orch.cancel",
    "orch.reconcile",
    "orch.runCreate",
    "peers.link",
    "reservations.release",
    "reservations.reserve",
];

/// `methods` with every call checked at its entry. Panics on a method without an entry in
/// the authority table, or a subscription that is not a read: the daemon does not start
/// with a method nobody decided about.
pub fn guard(methods: Methods, core: Arc<Core>) -> Methods {
    let mut out = Methods::new();
    for name in methods.method_names() {
        let callback = methods.method(name).expect("listed").clone();
        let checked = match callback {
            MethodCallback::Unsubscription(_) => callback,
            MethodCallback::Async(inner) => {
                let rule = entry(name);
                if rule.caller == Caller::Read {
                    MethodCallback::Async(inner)
                } else {
                    let core = core.clone();
                    MethodCallback::Async(Arc::new(move |id, params, conn, max, ext| {
                        let (inner, core) = (inner.clone(), core.clone());
                        Box::pin(async move {
                            match admit(&core, rule, params.as_str()).await {
                                Ok(need) => caller::with_need(need, inner(id, params, conn, max, ext)).await,
                                Err(e) => MethodResponse::error(id, ErrorObjectOwned::from(e)),
                            }
                        })
                    }))
                }
            }
            MethodCallback::Subscription(_) | MethodCallback::Sync(_) => {
                let rule = entry(name);
                assert_eq!(rule.caller, Caller::Read, "{name}: only reads may be subscriptions or synchronous methods");
                callback
            }
        };
        out.verify_and_insert(name, checked).expect("method names are unique");
    }
    out
}

fn entry(name: &str) -> &'static Authority {
    authority::of(name).unwrap_or_else(|| panic!("{name} has no entry in coord_proto::authority::TABLE"))
}

/// Check the call at its entry; what it still needs, to be checked in its write.
async fn admit(core: &Core, rule: &'static Authority, params: Option<&str>) -> Result<Option<Need>> {
    // The daemon's own work is not a connection.
    let Some(authenticated) = caller::current() else { return Ok(None) };
    let named = rule.caller.field().and_then(|f| named_agent(params, f)).filter(|a| !a.is_empty());
    if let Some(page) = caller::page() {
        if named.as_deref() == Some(page.overseer.as_str()) && rule.page == Page::AsOverseer {
            // The URL's token is the overseer's credential.
            return Ok(None);
        }
        if !page.anyone {
            match rule.page {
                Page::Never => return Err(page_refused(rule.method)),
                Page::AsOverseer => credentials::page_may_act_as(&page.overseer, named.as_deref(), &authenticated)?,
                Page::AsConnection | Page::Reads => {}
            }
        }
    }
    let need = match rule.caller {
        Caller::Read | Caller::Anyone => return Ok(None),
        Caller::Agent => Need { agent: None, lead: None },
        Caller::AsAgent(_) => Need { agent: named, lead: None },
        Caller::Lead(_) => Need { agent: named, lead: Some(rule.method) },
    };
    if need.met_by(&authenticated) {
        return Ok(None);
    }
    if CHECKED_IN_WRITE.contains(&rule.method) {
        return Ok(Some(need));
    }
    core.read(move |tx, _| credentials::admit(tx, &need, &authenticated)).await?;
    Ok(None)
}

/// The string in field `field` of a call's params object (bare, or the one element of an
/// array), if it has one.
fn named_agent(params: Option<&str>, field: &str) -> Option<String> {
    type Object<'a> = HashMap<Cow<'a, str>, &'a RawValue>;
    let params = params?.trim_start();
    let object: Object = if params.starts_with('[') {
        let [one]: [Object; 1] = serde_json::from_str(params).ok()?;
        one
    } else {
        serde_json::from_str(params).ok()?
    };
    serde_json::from_str(object.get(field)?.get()).ok()
}

/// What a page that acts only as its overseer may not call.
fn page_refused(method: &str) -> Error {
    Error::app(
        ErrorCode::PageActsAsOverseer,
        format!(
            "the dashboard's page may not call {method} (start the daemon with --dashboard-acts-as-anyone to allow it)"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_agent_named_is_read_from_a_bare_or_wrapped_object() {
        assert_eq!(named_agent(Some(r#"{"from":"w1","x":[1,{"a":2}]}"#), "from").as_deref(), Some("w1"));
        assert_eq!(named_agent(Some(r#"[{"agent":"w\u0031"}]"#), "agent").as_deref(), Some("w1"));
        assert_eq!(named_agent(Some(r#"[{"agent":7}]"#), "agent"), None);
        assert_eq!(named_agent(Some("[1]"), "agent"), None);
        assert_eq!(named_agent(None, "agent"), None);
    }

    #[test]
    fn every_method_checked_in_its_write_names_its_caller_rule() {
        for m in CHECKED_IN_WRITE {
            let rule = authority::of(m).unwrap_or_else(|| panic!("{m} is no method"));
            assert!(
                matches!(rule.caller, Caller::Agent | Caller::AsAgent(_)),
                "{m}: a lead's method is checked at its entry, never deferred to its write"
            );
        }
    }
}
