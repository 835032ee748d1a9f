//! The daemon's error type: a domain error with a stable code, or a failure of storage or
//! of the daemon itself. It becomes a JSON-RPC error object in exactly one place
//! ([`From<Error>`] for `ErrorObjectOwned`, below). Backends convert their own errors into
//! [`Error::Storage`] (see `store::sqlite`).

use coord_proto::{AppError, ErrorCode};
use jsonrpsee::types::ErrorObjectOwned;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A domain error the caller caused: invalid input, a conflict, a missing object.
    #[error(transparent)]
    App(#[from] AppError),
    /// The storage failed (a query, a commit, the connection pool).
    #[error("storage error: {0}")]
    Storage(String),
    /// The storage could not write: the disk is full, the file or file system is read-only,
    /// an I/O error. Nothing of the call was written; it can be retried once the cause is
    /// fixed. Reported as `io_write_failed`.
    #[error("{0}")]
    WriteFailed(String),
    /// The daemon runs read-only (it started on a full disk) and the database still cannot
    /// be opened for writing. Reported as `read_only`.
    #[error("{0}")]
    ReadOnly(String),
    #[error("internal error: {0}")]
    Internal(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn invalid(msg: impl Into<String>) -> Self {
        Error::App(AppError::invalid(msg))
    }

    pub fn not_found(msg: impl Into<String>) -> Self {
        Error::App(AppError::not_found(msg))
    }

    pub fn app(code: ErrorCode, msg: impl Into<String>) -> Self {
        Error::App(AppError::new(code, msg))
    }

    /// A wait's cursor past the latest id it could follow (`cursor_ahead`, exit 30): such a
    /// wait could never wake. `what` is "event" or "progress line"; the details name the
    /// latest id.
    pub fn cursor_ahead(field: &str, what: &str, cursor: i64, latest: i64) -> Self {
        let message = format!(
            "{field} {cursor} is past the latest {what} ({latest}): wait after an id you were given, \
             or give no cursor to wait for what comes next"
        );
        Error::App(AppError::new(ErrorCode::CursorAhead, message).with_details(serde_json::json!({"latest": latest})))
    }

    /// The application error the caller caused, if it is one.
    pub fn code(&self) -> Option<ErrorCode> {
        match self {
            Error::App(e) => Some(e.code),
            _ => None,
        }
    }

    /// The error as the protocol reports it.
    pub fn to_app(&self) -> AppError {
        match self {
            Error::App(e) => e.clone(),
            Error::Storage(m) => AppError::new(ErrorCode::Storage, m.clone()),
            Error::WriteFailed(m) => AppError::new(ErrorCode::IoWriteFailed, m.clone()),
            Error::ReadOnly(m) => AppError::new(ErrorCode::ReadOnly, m.clone()),
            Error::Internal(m) => AppError::new(ErrorCode::Internal, m.clone()),
        }
    }

    /// Storage failures of the agents layer carry the seed's I/O codes (`io_write_failed`
    /// for writes, `io_read_failed` for reads); domain errors stay as they are.
    pub fn as_io(self, write: bool) -> Error {
        match self {
            Error::App(_) | Error::ReadOnly(_) => self,
            other => {
                tracing::error!(error = %other, "request failed");
                let code = if write { ErrorCode::IoWriteFailed } else { ErrorCode::IoReadFailed };
                Error::app(code, other.to_string())
            }
        }
    }
}

impl Error {
    /// The same failure, for another caller of a batch that failed as a whole.
    pub fn shared(&self) -> Error {
        match self {
            Error::WriteFailed(m) => Error::WriteFailed(m.clone()),
            Error::ReadOnly(m) => Error::ReadOnly(m.clone()),
            other => Error::Storage(format!("commit failed: {other}")),
        }
    }
}

impl From<Error> for ErrorObjectOwned {
    fn from(e: Error) -> Self {
        if !matches!(e, Error::App(_)) {
            tracing::error!(error = %e, "request failed");
        }
        e.to_app().into()
    }
}
