//! The payloads of the known typed message types, with the seed's JSON field names exactly,
//! and [`TypedPayload`], which ties each to its [`MessageType`].

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::*;

/// A typed payload: knows its message type.
pub trait TypedPayload: Serialize {
    const TYPE: MessageType;
}

macro_rules! typed {
    ($t:ty, $v:ident) => {
        impl TypedPayload for $t {
            const TYPE: MessageType = MessageType::$v;
        }
    };
}

pub(crate) fn empty_object() -> Value {
    Value::Object(Default::default())
}

/// `permission_request`: a worker asks before a tool call.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PermissionRequestPayload {
    /// Chosen by the requester; when empty, the request's message id serves.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub request_id: String,
    pub tool_name: String,
    #[serde(default)]
    pub tool_use_id: String,
    #[serde(default)]
    pub description: String,
    /// The tool's input, as the session would run it.
    #[serde(default = "empty_object")]
    pub input: Value,
}
typed!(PermissionRequestPayload, PermissionRequest);

/// `permission_response`: allow or deny, with a reason and, when the approver changed it,
/// the whole input to run instead.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PermissionResponsePayload {
    pub request_id: String,
    pub approved: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_input: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}
typed!(PermissionResponsePayload, PermissionResponse);

string_enum!(
    /// Why a worker went idle.
    IdleReason {
        /// It finished and can take more work.
        Available = "available",
        Interrupted = "interrupted",
        Failed = "failed",
        /// It approved a shutdown request and stopped (its task's thread is blocked with
        /// "worker stopped" and its lease released).
        Shutdown = "shutdown",
    }
);

/// `idle_notification`: a worker tells the lead it went idle, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IdleNotificationPayload {
    pub idle_reason: IdleReason,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_task_id: Option<String>,
    /// `resolved`, `blocked` or `failed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_status: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_reason: Option<String>,
}
typed!(IdleNotificationPayload, IdleNotification);

/// `task_assignment`: the lead hands a worker a task.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TaskAssignmentPayload {
    pub task_id: String,
    pub subject: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub assigned_by: String,
}
typed!(TaskAssignmentPayload, TaskAssignment);

/// `shutdown_request`: the lead asks a worker to stop.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ShutdownRequestPayload {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub request_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// How long the request stays open (default [`SHUTDOWN_EXPIRES_SECONDS`]); the daemon
    /// turns it into `expires_at`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_in_seconds: Option<u64>,
    /// When the request expires (set by the daemon): past it, no session honours it and it
    /// can no longer be answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
}

/// How long a shutdown request stays open by default: a request nobody answered within
/// this never stops a later session.
pub const SHUTDOWN_EXPIRES_SECONDS: u64 = 300;
/// The longest a shutdown request may stay open.
pub const SHUTDOWN_EXPIRES_MAX_SECONDS: u64 = 86_400;
typed!(ShutdownRequestPayload, ShutdownRequest);

/// `shutdown_approved`: the worker agrees and stops.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ShutdownApprovedPayload {
    pub request_id: String,
}
typed!(ShutdownApprovedPayload, ShutdownApproved);

/// `shutdown_rejected`: the worker refuses, saying why.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ShutdownRejectedPayload {
    pub request_id: String,
    pub reason: String,
}
typed!(ShutdownRejectedPayload, ShutdownRejected);

/// `mode_set_request`: switch to a permission mode (`default`, `acceptEdits`, `plan`, ...).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModeSetRequestPayload {
    pub mode: String,
}
typed!(ModeSetRequestPayload, ModeSetRequest);

/// `team_permission_update`: permission rules that change for the team.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TeamPermissionUpdatePayload {
    /// Claude Code rules such as `Bash(git push*)`.
    #[serde(default)]
    pub rules: Vec<String>,
    /// `allow`, `deny` or `ask`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub behavior: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_mode: Option<String>,
}
typed!(TeamPermissionUpdatePayload, TeamPermissionUpdate);

/// `plan_approval_request`: a worker asks the lead to approve its plan.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PlanApprovalRequestPayload {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub request_id: String,
    pub plan: String,
}
typed!(PlanApprovalRequestPayload, PlanApprovalRequest);

/// `plan_approval_response`: approved or not, with feedback (and the mode to work in).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PlanApprovalResponsePayload {
    pub request_id: String,
    pub approved: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_mode: Option<String>,
}
typed!(PlanApprovalResponsePayload, PlanApprovalResponse);
