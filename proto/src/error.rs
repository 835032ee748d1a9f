//! Error codes of the protocol: the JSON-RPC standard ones and coordd's stable application
//! codes, with the string names the CLIs print and the exit codes they map to.

use serde::{Deserialize, Serialize};

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

/// Stable application error codes. The numeric value travels as the JSON-RPC error `code`;
/// the snake_case name travels in `error.data.code` and is what the CLIs print.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// A parameter is missing, malformed or out of range.
    InvalidInput,
    /// The requested state change is not allowed from the current state.
    InvalidTransition,
    /// The named thread, message or other object does not exist.
    NotFound,
    /// Another agent holds an active lease on the thread.
    LeaseConflict,
    /// The caller does not hold the thread's lease.
    NotLeaseHolder,
    /// The caller's lease has expired; claim again.
    LeaseExpired,
    /// The given lease token is not the current one (a stale holder).
    StaleLease,
    /// The database failed.
    Storage,
    /// The daemon is shutting down or hit an internal error.
    Internal,
    // ---- the `bb agent` registry (agents, mail, reservations) ----------------------------
    /// An argument of an agents, mail or reservations method is missing or out of range
    /// (an agent id that breaks the id rule, a TTL outside 5..1440 minutes).
    InvalidArgs,
    /// A mail category other than HANDOFF, BLOCKED, DECISION or INFO.
    InvalidCategory,
    /// No agent has this id.
    AgentNotFound,
    /// Registering an id that is already registered (without `force_update`).
    DuplicateAgentId,
    /// Strict agents: the sender is not a registered agent.
    UnknownSender,
    /// Strict agents: the recipient is not a registered agent.
    UnknownRecipient,
    /// A task id (the seed's bead) is required here and was not given.
    MissingBeadId,
    /// No such message in this agent's mail.
    MessageNotFound,
    /// Only a recipient of a message may acknowledge it.
    AckForbidden,
    /// The scope overlaps another agent's active reservation.
    ReservationConflict,
    /// The scope overlaps another agent's expired reservation; retry with `takeover_stale`.
    ReservationStaleFound,
    /// No active reservation has this scope.
    ReservationNotFound,
    /// Only the owner may release a reservation.
    ReleaseForbidden,
    /// Only the sender may withdraw a message.
    WithdrawForbidden,
    /// Writing coordination data (or a file such as a hook) failed.
    IoWriteFailed,
    /// Reading coordination data (or a file) failed.
    IoReadFailed,
}

impl ErrorCode {
    /// All application codes, for documentation and exhaustive tests.
    pub const ALL: [ErrorCode; 25] = [
        ErrorCode::InvalidInput,
        ErrorCode::InvalidTransition,
        ErrorCode::NotFound,
        ErrorCode::LeaseConflict,
        ErrorCode::NotLeaseHolder,
        ErrorCode::LeaseExpired,
        ErrorCode::StaleLease,
        ErrorCode::Storage,
        ErrorCode::Internal,
        ErrorCode::InvalidArgs,
        ErrorCode::InvalidCategory,
        ErrorCode::AgentNotFound,
        ErrorCode::DuplicateAgentId,
        ErrorCode::UnknownSender,
        ErrorCode::UnknownRecipient,
        ErrorCode::MissingBeadId,
        ErrorCode::MessageNotFound,
        ErrorCode::AckForbidden,
        ErrorCode::ReservationConflict,
        ErrorCode::ReservationStaleFound,
        ErrorCode::ReservationNotFound,
        ErrorCode::ReleaseForbidden,
        ErrorCode::WithdrawForbidden,
        ErrorCode::IoWriteFailed,
        ErrorCode::IoReadFailed,
    ];

    /// The numeric JSON-RPC error code.
    pub const fn rpc_code(self) -> i32 {
        match self {
            ErrorCode::InvalidInput => 1001,
            ErrorCode::InvalidTransition => 1002,
            ErrorCode::NotFound => 1003,
            ErrorCode::LeaseConflict => 1004,
            ErrorCode::NotLeaseHolder => 1005,
            ErrorCode::LeaseExpired => 1006,
            ErrorCode::StaleLease => 1007,
            ErrorCode::Storage => 1050,
            ErrorCode::Internal => 1051,
            ErrorCode::InvalidArgs => 1101,
            ErrorCode::InvalidCategory => 1102,
            ErrorCode::AgentNotFound => 1103,
            ErrorCode::DuplicateAgentId => 1104,
            ErrorCode::UnknownSender => 1105,
            ErrorCode::UnknownRecipient => 1106,
            ErrorCode::MissingBeadId => 1107,
            ErrorCode::MessageNotFound => 1108,
            ErrorCode::AckForbidden => 1109,
            ErrorCode::ReservationConflict => 1110,
            ErrorCode::ReservationStaleFound => 1111,
            ErrorCode::ReservationNotFound => 1112,
            ErrorCode::ReleaseForbidden => 1113,
            ErrorCode::WithdrawForbidden => 1114,
            ErrorCode::IoWriteFailed => 1150,
            ErrorCode::IoReadFailed => 1151,
        }
    }

    /// The application code for a numeric JSON-RPC code, if it is one of ours.
    pub fn from_rpc_code(code: i32) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.rpc_code() == code)
    }

    /// The stable snake_case name.
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidInput => "invalid_input",
            ErrorCode::InvalidTransition => "invalid_transition",
            ErrorCode::NotFound => "not_found",
            ErrorCode::LeaseConflict => "lease_conflict",
            ErrorCode::NotLeaseHolder => "not_lease_holder",
            ErrorCode::LeaseExpired => "lease_expired",
            ErrorCode::StaleLease => "stale_lease",
            ErrorCode::Storage => "storage",
            ErrorCode::Internal => "internal",
            ErrorCode::InvalidArgs => "invalid_args",
            ErrorCode::InvalidCategory => "invalid_category",
            ErrorCode::AgentNotFound => "agent_not_found",
            ErrorCode::DuplicateAgentId => "duplicate_agent_id",
            ErrorCode::UnknownSender => "unknown_sender",
            ErrorCode::UnknownRecipient => "unknown_recipient",
            ErrorCode::MissingBeadId => "missing_bead_id",
            ErrorCode::MessageNotFound => "message_not_found",
            ErrorCode::AckForbidden => "ack_forbidden",
            ErrorCode::ReservationConflict => "reservation_conflict",
            ErrorCode::ReservationStaleFound => "reservation_stale_found",
            ErrorCode::ReservationNotFound => "reservation_not_found",
            ErrorCode::ReleaseForbidden => "release_forbidden",
            ErrorCode::WithdrawForbidden => "withdraw_forbidden",
            ErrorCode::IoWriteFailed => "io_write_failed",
            ErrorCode::IoReadFailed => "io_read_failed",
        }
    }

    /// The process exit code the CLIs use for this error: 20 conflict, 30 invalid,
    /// 40 not found, 50 storage or internal.
    pub const fn exit_code(self) -> i32 {
        use ErrorCode::*;
        match self {
            LeaseConflict
            | NotLeaseHolder
            | LeaseExpired
            | StaleLease
            | DuplicateAgentId
            | AckForbidden
            | ReservationConflict
            | ReservationStaleFound
            | ReleaseForbidden
            | WithdrawForbidden => 20,
            InvalidInput | InvalidTransition | InvalidArgs | InvalidCategory => 30,
            NotFound | AgentNotFound | UnknownSender | UnknownRecipient | MessageNotFound | ReservationNotFound
            | MissingBeadId => 40,
            Storage | Internal | IoWriteFailed | IoReadFailed => 50,
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The `data` member of an application error object: `{"code": "<name>", ...details}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorData {
    /// The stable snake_case name of the error.
    pub code: ErrorCode,
    /// Optional machine-readable details (for example the current lease holder).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<serde_json::Value>,
}

/// An application error: a code, a human-readable message and optional details.
#[derive(Debug, Clone, PartialEq)]
pub struct AppError {
    pub code: ErrorCode,
    pub message: String,
    pub details: Option<serde_json::Value>,
}

impl AppError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        AppError { code, message: message.into(), details: None }
    }

    pub fn with_details(mut self, details: serde_json::Value) -> Self {
        self.details = Some(details);
        self
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidInput, message)
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::NotFound, message)
    }
}

impl std::fmt::Display for AppError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for AppError {}

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
        for c in ErrorCode::ALL {
            assert_eq!(ErrorCode::from_rpc_code(c.rpc_code()), Some(c));
            let json = serde_json::to_string(&c).unwrap();
            assert_eq!(json, format!("\"{}\"", c.as_str()));
        }
        let mut codes: Vec<_> = ErrorCode::ALL.iter().map(|c| c.rpc_code()).collect();
        codes.sort();
        codes.dedup();
        assert_eq!(codes.len(), ErrorCode::ALL.len());
    }
}
