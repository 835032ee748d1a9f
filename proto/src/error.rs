//! Error codes of the protocol: the JSON-RPC standard ones and coordd's stable application
//! codes. Each application code is declared once, in the [`error_codes!`] table below: its
//! number (the JSON-RPC `code`), its snake_case name (in `error.data.code`, and what the CLIs
//! print) and the [`Exit`] status the CLIs map it to.

use serde::{Deserialize, Serialize};

use crate::Exit;

/// JSON-RPC: invalid JSON was received.
pub const PARSE_ERROR: i32 = -32700;
/// JSON-RPC: the JSON sent is not a valid request object.
pub const INVALID_REQUEST: i32 = -32600;
/// JSON-RPC: the method does not exist.
pub const METHOD_NOT_FOUND: i32 = -32601;
/// JSON-RPC: invalid method parameters.
pub const INVALID_PARAMS: i32 = -32602;
/// JSON-RPC: internal error.
pub const INTERNAL_ERROR: i32 = -32603;
/// A request line longer than [`crate::MAX_REQUEST_BYTES`] (server error range).
pub const REQUEST_TOO_LARGE: i32 = -32001;
/// Too many open subscriptions on one connection.
pub const TOO_MANY_SUBSCRIPTIONS: i32 = -32002;
/// The daemon holds too many bytes of unfinished request lines across its connections;
/// this line was discarded (retry later). `data.code`: `request_budget_exceeded`.
pub const REQUEST_BUDGET_EXCEEDED: i32 = -32003;
/// An unfinished request line waited too long for its next byte and was discarded.
/// `data.code`: `partial_line_timeout`.
pub const PARTIAL_LINE_TIMEOUT: i32 = -32004;
/// In the last notification of a subscription the daemon ended because its client did not
/// read its events: resubscribe after `data.details.cursor`. `data.code`:
/// `subscriber_too_slow`.
pub const SUBSCRIBER_TOO_SLOW: i32 = -32005;

/// The one table of application error codes: `Variant = number, "name", Exit;`.
macro_rules! error_codes {
    ($( $(#[$doc:meta])* $var:ident = $num:literal, $name:literal, $exit:ident; )+) => {
        /// Stable application error codes. The number travels as the JSON-RPC error
        /// `code`; the snake_case name travels in `error.data.code`.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
        pub enum ErrorCode {
            $( $(#[$doc])* #[serde(rename = $name)] $var, )+
        }

        impl ErrorCode {
            /// All application codes, for documentation and exhaustive tests.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$var),+];

            /// The numeric JSON-RPC error code.
            pub const fn rpc_code(self) -> i32 {
                match self { $(ErrorCode::$var => $num),+ }
            }

            /// The application code for a numeric JSON-RPC code, if it is one of ours.
            pub const fn from_rpc_code(code: i32) -> Option<Self> {
                match code { $($num => Some(ErrorCode::$var),)+ _ => None }
            }

            /// The stable snake_case name.
            pub const fn as_str(self) -> &'static str {
                match self { $(ErrorCode::$var => $name),+ }
            }

            /// The exit status the CLIs use for this error.
            pub const fn exit(self) -> Exit {
                match self { $(ErrorCode::$var => Exit::$exit),+ }
            }
        }
    };
}

error_codes! {
    /// A parameter is missing, malformed or out of range.
    InvalidInput = 1001, "invalid_input", Invalid;
    /// The requested state change is not allowed from the current state.
    InvalidTransition = 1002, "invalid_transition", Invalid;
    /// The named thread, message or other object does not exist.
    NotFound = 1003, "not_found", NotFound;
    /// Another agent holds an active lease on the thread.
    LeaseConflict = 1004, "lease_conflict", Conflict;
    /// The caller does not hold the thread's lease.
    NotLeaseHolder = 1005, "not_lease_holder", Conflict;
    /// The caller's lease has expired; claim again.
    LeaseExpired = 1006, "lease_expired", Conflict;
    /// The given lease token is not the current one (a stale holder).
    StaleLease = 1007, "stale_lease", Conflict;
    /// The database failed.
    Storage = 1050, "storage", Internal;
    /// The daemon is shutting down or hit an internal error.
    Internal = 1051, "internal", Internal;
    /// An argument of an agents, mail or reservations method is missing or out of range
    /// (an agent id that breaks the id rule, a TTL outside 5..1440 minutes).
    InvalidArgs = 1101, "invalid_args", Invalid;
    /// A mail category other than HANDOFF, BLOCKED, DECISION or INFO.
    InvalidCategory = 1102, "invalid_category", Invalid;
    /// No agent has this id.
    AgentNotFound = 1103, "agent_not_found", NotFound;
    /// Registering an id that is already registered (without `force_update`).
    DuplicateAgentId = 1104, "duplicate_agent_id", Conflict;
    /// Strict agents: the sender is not a registered agent.
    UnknownSender = 1105, "unknown_sender", NotFound;
    /// Strict agents: the recipient is not a registered agent.
    UnknownRecipient = 1106, "unknown_recipient", NotFound;
    /// A task id is required here and was not given (a categorised message, a
    /// reservation).
    MissingTaskId = 1107, "missing_task_id", Invalid;
    /// No such message in this agent's mail.
    MessageNotFound = 1108, "message_not_found", NotFound;
    /// Only a recipient of a message may acknowledge it.
    AckForbidden = 1109, "ack_forbidden", Conflict;
    /// The scope overlaps another agent's active reservation.
    ReservationConflict = 1110, "reservation_conflict", Conflict;
    /// The scope overlaps another agent's expired reservation; retry with `takeover_stale`.
    ReservationStaleFound = 1111, "reservation_stale_found", Conflict;
    /// No active reservation has this scope.
    ReservationNotFound = 1112, "reservation_not_found", NotFound;
    /// Only the owner may release a reservation.
    ReleaseForbidden = 1113, "release_forbidden", Conflict;
    /// Only the sender may withdraw a message.
    WithdrawForbidden = 1114, "withdraw_forbidden", Conflict;
    /// Credentials are required and this connection is not authenticated as the agent the
    /// call acts for, or a secret is wrong.
    Unauthenticated = 1120, "unauthenticated", Conflict;
    /// Credentials are required and this connection's agents hold no role that may make
    /// this change: the policy, the project's settings and the roster are the lead's and
    /// the admins'; a run is its creator's.
    NotPermitted = 1121, "not_permitted", Conflict;
    /// Credentials cannot be required without a lead that can prove itself: a registered
    /// agent with a secret (`inbox.init`'s `lead`).
    LeadRequired = 1122, "lead_required", Invalid;
    /// Only the agent a request was addressed to may answer it.
    ResponseForbidden = 1201, "response_forbidden", Conflict;
    /// A sender-chosen message id is already used by a different message.
    DuplicateMessageId = 1202, "duplicate_message_id", Conflict;
    /// Writing coordination data (or a file such as a hook) failed.
    IoWriteFailed = 1150, "io_write_failed", Internal;
    /// Reading coordination data (or a file) failed.
    IoReadFailed = 1151, "io_read_failed", Internal;
    /// The daemon runs read-only: it started while the database could not be written (a
    /// full disk). Reads work; every write is refused with this code until space returns,
    /// when the next write reopens the database for writing. `system.hello`'s `read_only`
    /// says why.
    ReadOnly = 1323, "read_only", Internal;
    /// The dashboard could not listen on the port asked for (in use, or not allowed).
    PortUnavailable = 1160, "port_unavailable", Conflict;
    /// Merging a branch conflicts (orch: a run's integration branch into its base branch).
    MergeConflict = 1203, "merge_conflict", Conflict;
    /// A wait or subscription's cursor (`after_event`, `after_seq`) is past the latest
    /// event or progress line: nothing could ever wake it. `data.details.latest` names the
    /// latest id.
    CursorAhead = 1301, "cursor_ahead", Invalid;
    /// No launched session has that id (`launch.*`).
    SessionNotFound = 1400, "session_not_found", NotFound;
    /// The launched session's end was already recorded.
    SessionEnded = 1401, "session_ended", Conflict;
    /// The dashboard's page acts as its overseer (a person) only: it may not write as an
    /// agent or change the policy unless the daemon was started with
    /// `--dashboard-acts-as-anyone`.
    PageActsAsOverseer = 1420, "page_acts_as_overseer", Conflict;
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The `data` member of an application error object: `{"code": "<name>", ...details}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ErrorData {
    /// The stable snake_case name of the error.
    pub code: ErrorCode,
    /// Optional machine-readable details (for example the current lease holder).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<serde_json::Value>,
}

/// An application error: a code, a human-readable message and optional details.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct AppError {
    /// Stable error name (`snake_case`).
    pub code: ErrorCode,
    /// Human-readable message; the code, not this text, is stable.
    pub message: String,
    /// Structured details of the error, when it has some.
    pub details: Option<serde_json::Value>,
}

impl AppError {
    /// An error with this code and message and no details.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        AppError { code, message: message.into(), details: None }
    }

    /// The same error carrying structured details.
    pub fn with_details(mut self, details: serde_json::Value) -> Self {
        self.details = Some(details);
        self
    }

    /// An `invalid_input` error.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidInput, message)
    }

    /// A `not_found` error.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::NotFound, message)
    }
}

impl From<AppError> for jsonrpsee::types::ErrorObjectOwned {
    fn from(e: AppError) -> Self {
        let data = ErrorData { code: e.code, details: e.details };
        jsonrpsee::types::ErrorObject::owned(e.code.rpc_code(), e.message, Some(data))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_are_unique() {
        for &c in ErrorCode::ALL {
            assert_eq!(ErrorCode::from_rpc_code(c.rpc_code()), Some(c));
            let json = serde_json::to_string(&c).unwrap();
            assert_eq!(json, format!("\"{}\"", c.as_str()));
            assert_eq!(serde_json::from_str::<ErrorCode>(&json).unwrap(), c);
        }
        let mut codes: Vec<_> = ErrorCode::ALL.iter().map(|c| c.rpc_code()).collect();
        codes.sort();
        codes.dedup();
        assert_eq!(codes.len(), ErrorCode::ALL.len());
    }

    #[test]
    fn exit_statuses_follow_the_documented_classes() {
        assert_eq!(ErrorCode::LeaseConflict.exit(), Exit::Conflict);
        assert_eq!(ErrorCode::InvalidArgs.exit(), Exit::Invalid);
        assert_eq!(ErrorCode::MissingTaskId.exit(), Exit::Invalid);
        assert_eq!(ErrorCode::IoReadFailed.exit(), Exit::Internal);
    }
}
