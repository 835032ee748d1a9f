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
}

impl ErrorCode {
    /// All application codes, for documentation and exhaustive tests.
    pub const ALL: [ErrorCode; 9] = [
        ErrorCode::InvalidInput,
        ErrorCode::InvalidTransition,
        ErrorCode::NotFound,
        ErrorCode::LeaseConflict,
        ErrorCode::NotLeaseHolder,
        ErrorCode::LeaseExpired,
        ErrorCode::StaleLease,
        ErrorCode::Storage,
        ErrorCode::Internal,
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
        }
    }

    /// The process exit code the CLIs use for this error: 20 conflict, 30 invalid,
    /// 40 not found, 50 storage or internal.
    pub const fn exit_code(self) -> i32 {
        match self {
            ErrorCode::LeaseConflict | ErrorCode::NotLeaseHolder | ErrorCode::LeaseExpired | ErrorCode::StaleLease => {
                20
            }
            ErrorCode::InvalidInput | ErrorCode::InvalidTransition => 30,
            ErrorCode::NotFound => 40,
            ErrorCode::Storage | ErrorCode::Internal => 50,
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
