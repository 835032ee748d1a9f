//! Typed control messages (the seed's message types; their payloads are in `payloads.rs`) and
//! the requests they open. The policy and progress lines are in `policy.rs`.
//!
//! A typed message is an ordinary message with a `type` and a payload whose JSON field names
//! are the seed's. Known types have a [`TypeRole`]: a *request* opens a thread of its own
//! that its *response* closes; a *task assignment* opens a pending work thread; every other
//! type (unknown ones included, which pass through untouched) is a *notice*, a thread that
//! is complete at birth unless the sender names a thread to add it to.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::*;

/// The type of a typed message: one of the known types, or any other name, which passes
/// through untouched so that newer senders do not break older readers.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MessageType {
    /// A worker asks for permission to run a tool call.
    PermissionRequest,
    /// The approver allows or denies it, possibly changing the input.
    PermissionResponse,
    /// A worker went idle: available, interrupted or failed.
    IdleNotification,
    /// The lead hands a worker a task.
    TaskAssignment,
    /// The lead asks a worker to shut down.
    ShutdownRequest,
    /// The worker agrees to shut down.
    ShutdownApproved,
    /// The worker refuses, with a reason.
    ShutdownRejected,
    /// Asks an agent to switch its permission mode.
    ModeSetRequest,
    /// Changes the team's permission rules.
    TeamPermissionUpdate,
    /// A worker asks the lead to approve its plan.
    PlanApprovalRequest,
    /// The lead approves or rejects the plan, with feedback.
    PlanApprovalResponse,
    /// Any other type, kept as given.
    Other(String),
}

/// What a type does to its thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeRole {
    /// Opens a thread of its own, pending until one of these response types closes it.
    Request(&'static [&'static str]),
    /// Answers (and closes) the open request named by its payload's `request_id`.
    Response(&'static str),
    /// Opens a pending work thread for the recipient (the worker protocol takes it on).
    Assignment,
    /// Complete at birth: a thread of its own that is `done` at once, or a message added to
    /// the thread the sender names.
    Notice,
}

macro_rules! message_types {
    ($($var:ident = $s:literal,)+) => {
        impl MessageType {
            /// Every known type.
            pub const KNOWN: &'static [MessageType] = &[$(MessageType::$var),+];

            /// The wire name.
            pub fn as_str(&self) -> &str {
                match self { $(MessageType::$var => $s,)+ MessageType::Other(s) => s }
            }

            /// The type for a wire name; unknown names become [`MessageType::Other`].
            pub fn from_name(s: &str) -> MessageType {
                match s { $($s => MessageType::$var,)+ other => MessageType::Other(other.to_string()) }
            }
        }
    };
}

message_types! {
    PermissionRequest = "permission_request",
    PermissionResponse = "permission_response",
    IdleNotification = "idle_notification",
    TaskAssignment = "task_assignment",
    ShutdownRequest = "shutdown_request",
    ShutdownApproved = "shutdown_approved",
    ShutdownRejected = "shutdown_rejected",
    ModeSetRequest = "mode_set_request",
    TeamPermissionUpdate = "team_permission_update",
    PlanApprovalRequest = "plan_approval_request",
    PlanApprovalResponse = "plan_approval_response",
}

impl MessageType {
    /// What this type does to its thread.
    pub fn role(&self) -> TypeRole {
        use MessageType::*;
        match self {
            PermissionRequest => TypeRole::Request(&["permission_response"]),
            ShutdownRequest => TypeRole::Request(&["shutdown_approved", "shutdown_rejected"]),
            PlanApprovalRequest => TypeRole::Request(&["plan_approval_response"]),
            PermissionResponse => TypeRole::Response("permission_request"),
            ShutdownApproved | ShutdownRejected => TypeRole::Response("shutdown_request"),
            PlanApprovalResponse => TypeRole::Response("plan_approval_request"),
            TaskAssignment => TypeRole::Assignment,
            IdleNotification | ModeSetRequest | TeamPermissionUpdate | Other(_) => TypeRole::Notice,
        }
    }

    /// Check a payload against this type's shape: a JSON object whose known fields have the
    /// right types and whose required fields are there. Extra fields are allowed; an
    /// unknown type only needs an object.
    pub fn check_payload(&self, payload: &Value) -> Result<(), String> {
        fn shape<T: serde::de::DeserializeOwned>(t: &MessageType, v: &Value) -> Result<(), String> {
            T::deserialize(v).map(|_| ()).map_err(|e| format!("{} payload: {e}", t.as_str()))
        }
        if !payload.is_object() {
            return Err(format!("{} payload must be a JSON object", self.as_str()));
        }
        use MessageType::*;
        match self {
            PermissionRequest => shape::<PermissionRequestPayload>(self, payload),
            PermissionResponse => shape::<PermissionResponsePayload>(self, payload),
            IdleNotification => shape::<IdleNotificationPayload>(self, payload),
            TaskAssignment => shape::<TaskAssignmentPayload>(self, payload),
            ShutdownRequest => shape::<ShutdownRequestPayload>(self, payload),
            ShutdownApproved => shape::<ShutdownApprovedPayload>(self, payload),
            ShutdownRejected => shape::<ShutdownRejectedPayload>(self, payload),
            ModeSetRequest => shape::<ModeSetRequestPayload>(self, payload),
            TeamPermissionUpdate => shape::<TeamPermissionUpdatePayload>(self, payload),
            PlanApprovalRequest => shape::<PlanApprovalRequestPayload>(self, payload),
            PlanApprovalResponse => shape::<PlanApprovalResponsePayload>(self, payload),
            Other(_) => Ok(()),
        }
    }

    /// The types `orch wait` wakes the lead on (a shutdown request of the run, and its
    /// answer, too).
    pub fn lead_actionable() -> Vec<String> {
        [
            MessageType::PermissionRequest,
            MessageType::IdleNotification,
            MessageType::PlanApprovalRequest,
            MessageType::ShutdownRequest,
            MessageType::ShutdownApproved,
            MessageType::ShutdownRejected,
        ]
        .iter()
        .map(|t| t.as_str().to_string())
        .collect()
    }
}

impl std::fmt::Display for MessageType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for MessageType {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(MessageType::from_name(s))
    }
}

impl From<&str> for MessageType {
    fn from(s: &str) -> MessageType {
        MessageType::from_name(s)
    }
}

impl From<String> for MessageType {
    fn from(s: String) -> MessageType {
        MessageType::from_name(&s)
    }
}

impl Serialize for MessageType {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl schemars::JsonSchema for MessageType {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "MessageType".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let known: Vec<&str> = MessageType::KNOWN.iter().map(|t| t.as_str()).collect();
        schemars::json_schema!({
            "type": "string",
            "description": format!("A known type ({}) or any other name, passed through untouched.", known.join(", ")),
        })
    }
}

impl<'de> Deserialize<'de> for MessageType {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(MessageType::from_name(&String::deserialize(d)?))
    }
}

/// A filter value that selects every typed message, whatever its type.
pub const ANY_TYPE: &str = "*";

/// The `request_id` of a request or response payload, if it has a non-empty one.
pub fn payload_request_id(payload: &Value) -> Option<&str> {
    payload.get("request_id").and_then(Value::as_str).filter(|s| !s.is_empty())
}

// ---------------------------------------------------------------------------------------
// control.*: params and results.
// ---------------------------------------------------------------------------------------

/// Params of `control.send`: one typed message.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(extend("anyOf" = [
    {"required": ["to"], "properties": {"to": {"type": "string"}}},
    {"required": ["run_id"], "properties": {"run_id": {"type": "string"}}},
    {"properties": {"type": {"enum": ["permission_response", "plan_approval_response", "shutdown_approved", "shutdown_rejected"]}}}
]))]
pub struct ControlSendParams {
    /// The sender (the event's actor).
    pub from: String,
    /// A type of §4.21, or any other name (no whitespace, ≤ 200 characters).
    #[serde(rename = "type")]
    pub msg_type: String,
    /// The recipient. Optional for a response (it goes to the requester) and when a run or
    /// the policy's lead names the recipient (see `docs/protocol.md`).
    #[serde(default)]
    pub to: Option<String>,
    /// Stored as given; `{}` when absent.
    #[serde(default = "empty_object")]
    pub payload: Value,
    /// A message id chosen by the sender (`msg_` + 26 lowercase base32hex characters): a
    /// send retried with the same id returns the first result instead of writing twice.
    #[serde(default)]
    pub message_id: Option<String>,
    /// Defaults to a line made from the type and payload.
    #[serde(default)]
    pub summary: Option<String>,
    /// Full text, `""` if none. Default: `""`.
    #[serde(default)]
    pub body: Option<String>,
    /// Add a notice to this open thread instead of opening one.
    #[serde(default)]
    pub thread_id: Option<String>,
    /// The new thread's run and task. Default: `""`.
    #[serde(default)]
    pub run_id: Option<String>,
    /// The new thread's task.
    #[serde(default)]
    pub task_id: Option<String>,
    /// Priority. Default: by role.
    #[serde(default)]
    pub priority: Option<Priority>,
}

/// Result of `control.send`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ControlSendResult {
    /// The thread.
    pub thread: Thread,
    /// The message.
    pub message: Message,
    /// The event that recorded the change; usable as an `after_event` cursor.
    pub event_id: i64,
    /// The request this message opened or answered.
    #[serde(default)]
    pub request_id: Option<String>,
    /// True when `message_id` was already stored: nothing was written again.
    #[serde(default)]
    pub duplicate: bool,
}

string_enum!(
    /// Where a request stands: open until answered (its response closes the thread) or
    /// cancelled (`inbox.cancel` on its thread, e.g. when the requester gave up).
    RequestStatus {
        /// No response yet.
        Open = "open",
        /// A response closed it.
        Answered = "answered",
        /// Its thread was cancelled.
        Cancelled = "cancelled",
        /// A shutdown request past its `expires_at`, never answered.
        Expired = "expired",
    }
);

/// Params of `control.requests`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RequestsParams {
    /// Only this request.
    #[serde(default)]
    pub request_id: Option<String>,
    /// Requests addressed to this agent.
    #[serde(default)]
    pub to: Option<String>,
    /// Requests made by this agent.
    #[serde(default)]
    pub from: Option<String>,
    /// Only this run.
    #[serde(default)]
    pub run_id: Option<String>,
    /// Request types (empty: all).
    #[serde(default)]
    pub types: Vec<String>,
    /// Also answered and cancelled requests (newest first); by default only open ones,
    /// oldest first.
    #[serde(default)]
    pub include_closed: bool,
    /// Most rows to return (1 to 10000).
    #[serde(default)]
    pub limit: Option<u32>,
    /// Only requests after this one in the list's order (a `next_after` of an earlier page).
    #[serde(default)]
    pub after: Option<String>,
}

/// One request with its state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RequestView {
    /// The request this answers (its `request_id`).
    pub request_id: String,
    /// Typed message type.
    #[serde(rename = "type")]
    pub msg_type: String,
    /// Life-cycle state.
    pub status: RequestStatus,
    /// Sender.
    pub from: String,
    /// Recipient.
    pub to: String,
    /// The run (`run_…`).
    pub run_id: String,
    /// The task id, unique within its run.
    pub task_id: String,
    /// The thread (`thr_…`).
    pub thread_id: String,
    /// The message (`msg_…`).
    pub message_id: String,
    /// One-line summary.
    pub summary: String,
    /// The typed payload, a JSON object.
    pub payload: Value,
    /// When it was created.
    pub created_at: String,
    /// The answer, once there is one.
    #[serde(default)]
    pub response: Option<Message>,
}

/// Result of `control.requests`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RequestsResult {
    /// The requests.
    pub requests: Vec<RequestView>,
    /// The list stopped early, before its `limit`, to keep the reply under
    /// [`crate::MAX_REPLY_BYTES`] (protocol §1.7): continue with `after` = `next_after`.
    #[serde(default)]
    pub truncated: bool,
    /// Where to continue when `truncated`: the `request_id` of the last request returned.
    #[serde(default)]
    pub next_after: Option<String>,
}

// ---------------------------------------------------------------------------------------
// policy.*: which tool calls need whose approval.
// ---------------------------------------------------------------------------------------
