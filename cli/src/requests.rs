//! Answering a team-control request (a permission, a plan approval, a shutdown): which
//! message answers it and with what payload. `inbox mcp`'s `respond` and `orch mcp`'s
//! `respond` both send what [`response`] builds, so a worker and the lead answer the same
//! request the same way.

use coord_proto::types::*;
use serde_json::{Value, json};

/// How to answer a request: approve (allow / approve / agree) or not, and the optional
/// texts and replacement tool input.
#[derive(Debug, Clone, Default)]
pub struct Answer {
    /// Allow the permission, approve the plan, agree to shut down (false: deny, reject, refuse).
    pub approve: bool,
    /// Why; the requester sees it.
    pub reason: Option<String>,
    /// For a plan: what to change (falls back to `reason`).
    pub feedback: Option<String>,
    /// For an allowed permission: the tool input to run instead.
    pub updated_input: Option<Value>,
}

/// The message type and payload that answer the request `request_id` of type `request_type`
/// (`RequestView::msg_type`). Err: the request is of a type nobody answers this way.
pub fn response(request_type: &str, request_id: &str, a: Answer) -> Result<(MessageType, Value), String> {
    let id = request_id.to_string();
    Ok(match MessageType::from_name(request_type) {
        MessageType::PermissionRequest => (
            MessageType::PermissionResponse,
            json!(PermissionResponsePayload {
                request_id: id,
                approved: a.approve,
                updated_input: a.updated_input.filter(|_| a.approve),
                reason: a.reason,
            }),
        ),
        MessageType::PlanApprovalRequest => (
            MessageType::PlanApprovalResponse,
            json!(PlanApprovalResponsePayload {
                request_id: id,
                approved: a.approve,
                feedback: a.feedback.or(a.reason),
                permission_mode: None,
            }),
        ),
        MessageType::ShutdownRequest if a.approve => {
            (MessageType::ShutdownApproved, json!(ShutdownApprovedPayload { request_id: id }))
        }
        MessageType::ShutdownRequest => (
            MessageType::ShutdownRejected,
            json!(ShutdownRejectedPayload { request_id: id, reason: a.reason.unwrap_or_default() }),
        ),
        other => return Err(format!("{other} is not a request that can be answered")),
    })
}
