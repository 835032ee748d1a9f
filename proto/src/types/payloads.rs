//! The payloads of the known typed message types, with the seed's JSON field names exactly,
//! and [`TypedPayload`], which ties each to its [`MessageType`].

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::*;

/// A typed payload: knows its message type.
pub trait TypedPayload: Serialize {
    /// The message type this payload belongs to.
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
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PermissionRequestPayload {
    /// Chosen by the requester; when empty, the request's message id serves.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub request_id: String,
    /// The tool to be called.
    pub tool_name: String,
    /// The tool call this is about.
    #[serde(default)]
    pub tool_use_id: String,
    /// What it is about, in words.
    #[serde(default)]
    pub description: String,
    /// The tool's input, as the session would run it.
    #[serde(default = "empty_object")]
    pub input: Value,
}
typed!(PermissionRequestPayload, PermissionRequest);

/// `permission_response`: allow or deny, with a reason and, when the approver changed it,
/// the whole input to run instead.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PermissionResponsePayload {
    /// The request this answers (its `request_id`).
    pub request_id: String,
    /// Whether it is approved.
    pub approved: bool,
    /// The tool input to run instead, if changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_input: Option<Value>,
    /// Why, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}
typed!(PermissionResponsePayload, PermissionResponse);

string_enum!(
    /// Why a worker went idle.
    IdleReason {
        /// It finished and can take more work.
        Available = "available",
        /// The worker was interrupted.
        Interrupted = "interrupted",
        /// The worker's turn failed.
        Failed = "failed",
        /// It approved a shutdown request and stopped (its task's thread is blocked with
        /// "worker stopped" and its lease released).
        Shutdown = "shutdown",
    }
);

/// `idle_notification`: a worker tells the lead it went idle, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct IdleNotificationPayload {
    /// Why the worker is idle: `available`, `interrupted` or `failed`.
    pub idle_reason: IdleReason,
    /// One-line summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// The task it just finished, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_task_id: Option<String>,
    /// `resolved`, `blocked` or `failed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_status: Option<String>,
    /// Why it failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_reason: Option<String>,
}
typed!(IdleNotificationPayload, IdleNotification);

/// `task_assignment`: the lead hands a worker a task.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TaskAssignmentPayload {
    /// The task id, unique within its run.
    pub task_id: String,
    /// The subject.
    pub subject: String,
    /// What it is about, in words.
    #[serde(default)]
    pub description: String,
    /// Who assigned it.
    #[serde(default)]
    pub assigned_by: String,
}
typed!(TaskAssignmentPayload, TaskAssignment);

/// `shutdown_request`: the lead asks a worker to stop.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ShutdownRequestPayload {
    /// The request this answers (its `request_id`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub request_id: String,
    /// Why, in words.
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
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ShutdownApprovedPayload {
    /// The request this answers (its `request_id`).
    pub request_id: String,
}
typed!(ShutdownApprovedPayload, ShutdownApproved);

/// `shutdown_rejected`: the worker refuses, saying why.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ShutdownRejectedPayload {
    /// The request this answers (its `request_id`).
    pub request_id: String,
    /// Why, in words.
    pub reason: String,
}
typed!(ShutdownRejectedPayload, ShutdownRejected);

/// `mode_set_request`: switch to a permission mode (`default`, `acceptEdits`, `plan`, ...).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ModeSetRequestPayload {
    /// Permission mode to switch to.
    pub mode: String,
}
typed!(ModeSetRequestPayload, ModeSetRequest);

/// `team_permission_update`: permission rules that change for the team.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TeamPermissionUpdatePayload {
    /// Claude Code rules such as `Bash(git push*)`.
    #[serde(default)]
    pub rules: Vec<String>,
    /// `allow`, `deny` or `ask`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub behavior: Option<String>,
    /// Permission mode to switch to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_mode: Option<String>,
}
typed!(TeamPermissionUpdatePayload, TeamPermissionUpdate);

/// `plan_approval_request`: a worker asks the lead to approve its plan.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PlanApprovalRequestPayload {
    /// The request this answers (its `request_id`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub request_id: String,
    /// The plan, in words.
    pub plan: String,
}
typed!(PlanApprovalRequestPayload, PlanApprovalRequest);

/// `plan_approval_response`: approved or not, with feedback (and the mode to work in).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PlanApprovalResponsePayload {
    /// The request this answers (its `request_id`).
    pub request_id: String,
    /// Whether it is approved.
    pub approved: bool,
    /// The lead's feedback.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<String>,
    /// Permission mode to switch to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_mode: Option<String>,
}
typed!(PlanApprovalResponsePayload, PlanApprovalResponse);
