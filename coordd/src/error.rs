//! The daemon's error type: a domain error with a stable code, or a storage failure.
//! Converted to a JSON-RPC error object in exactly one place ([`From<Error>`] below).

use coord_proto::{AppError, ErrorCode};
use jsonrpsee::types::ErrorObjectOwned;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A domain error the caller caused: invalid input, a conflict, a missing object.
    #[error(transparent)]
    App(#[from] AppError),
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("database pool error: {0}")]
    Pool(#[from] r2d2::Error),
    /// A storage failure shared by several callers (a failed group commit).
    #[error("storage error: {0}")]
    Storage(String),
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

    /// The error as the protocol reports it.
    pub fn to_app(&self) -> AppError {
        match self {
            Error::App(e) => e.clone(),
            Error::Sqlite(e) => AppError::new(ErrorCode::Storage, e.to_string()),
            Error::Pool(e) => AppError::new(ErrorCode::Storage, e.to_string()),
            Error::Storage(m) => AppError::new(ErrorCode::Storage, m.clone()),
            Error::Internal(m) => AppError::new(ErrorCode::Internal, m.clone()),
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
