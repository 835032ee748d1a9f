//! The client's error type: it tells a connection problem from a daemon that cannot be
//! started, a protocol mismatch, and an RPC error with its code.

use std::path::PathBuf;

use coord_proto::error::ErrorData;
use coord_proto::{ErrorCode, Exit};
use serde_json::Value;

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The socket exists but connecting or talking to it failed.
    #[error("cannot connect to coordd at {}: {source}", socket.display())]
    Connect { socket: PathBuf, source: std::io::Error },
    /// No daemon is listening and auto-start is off (or failed).
    #[error("coordd is not running for {} ({reason})", db.display())]
    DaemonUnavailable { db: PathBuf, reason: String },
    /// The daemon speaks another protocol version.
    #[error(
        "protocol mismatch: the daemon speaks protocol {server} (coordd {server_version}), this client speaks {client}; \
         restart the daemon with `coordd stop` so the matching version starts"
    )]
    ProtocolMismatch { server: u32, server_version: String, client: u32 },
    /// The daemon answered with a JSON-RPC error.
    #[error("{message}")]
    Rpc {
        /// The JSON-RPC error code.
        code: i32,
        /// The stable application code, when the error is one of coordd's own.
        app: Option<ErrorCode>,
        message: String,
        details: Option<Value>,
    },
    /// The connection broke mid-call, or the daemon sent something unreadable.
    #[error("connection to coordd failed: {0}")]
    Transport(String),
}

impl ClientError {
    /// The stable snake_case code for envelopes: the application code, or a name for the
    /// protocol and connection errors.
    pub fn code(&self) -> &'static str {
        match self {
            ClientError::Rpc { app: Some(c), .. } => c.as_str(),
            ClientError::Rpc { code, .. } => match *code {
                coord_proto::error::INVALID_PARAMS => "invalid_params",
                coord_proto::error::METHOD_NOT_FOUND => "method_not_found",
                coord_proto::error::INVALID_REQUEST => "invalid_request",
                coord_proto::error::PARSE_ERROR => "parse_error",
                coord_proto::error::REQUEST_TOO_LARGE => "request_too_large",
                _ => "rpc_error",
            },
            ClientError::Connect { .. } => "connect_failed",
            ClientError::DaemonUnavailable { .. } => "daemon_unavailable",
            ClientError::ProtocolMismatch { .. } => "protocol_mismatch",
            ClientError::Transport(_) => "transport",
        }
    }

    /// The exit status the CLIs use: the application code's, invalid for a request the
    /// daemon could not accept, internal for everything else (connection, protocol).
    pub fn exit(&self) -> Exit {
        match self {
            ClientError::Rpc { app: Some(c), .. } => c.exit(),
            ClientError::Rpc { code, .. }
                if [
                    coord_proto::error::INVALID_PARAMS,
                    coord_proto::error::INVALID_REQUEST,
                    coord_proto::error::REQUEST_TOO_LARGE,
                ]
                .contains(code) =>
            {
                Exit::Invalid
            }
            _ => Exit::Internal,
        }
    }
}

impl From<jsonrpsee::core::client::Error> for ClientError {
    fn from(e: jsonrpsee::core::client::Error) -> Self {
        use jsonrpsee::core::client::Error as E;
        match e {
            E::Call(obj) => {
                let data: Option<ErrorData> = obj.data().and_then(|d| serde_json::from_str(d.get()).ok());
                let app = ErrorCode::from_rpc_code(obj.code()).filter(|_| data.is_some());
                ClientError::Rpc {
                    code: obj.code(),
                    app,
                    message: obj.message().to_string(),
                    details: data.and_then(|d| d.details),
                }
            }
            other => ClientError::Transport(other.to_string()),
        }
    }
}
