//! The command-line side of `coordd status` and `coordd stop`: one JSON-RPC call to the
//! daemon of a database, written and read as a raw line on its socket. (The daemon does not
//! link the client library; these two calls need none of it.)

use std::path::Path;

use coord_ipc::{Frame, LineCodec};
use futures::StreamExt;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio_util::codec::FramedRead;

#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    /// Nothing listens on the socket.
    #[error("no daemon is listening")]
    NotRunning,
    #[error("cannot talk to the daemon: {0}")]
    Io(#[from] std::io::Error),
    #[error("the daemon answered with error {code}: {message}")]
    Rpc { code: i64, message: String },
    #[error("the daemon's answer was not understood: {0}")]
    Protocol(String),
}

/// The longest reply line read (`system.hello` and `system.shutdown` answer in a few KB).
const MAX_REPLY_BYTES: usize = 16 * 1024 * 1024;

/// Call `method` with `params` on the daemon listening on `socket`.
pub async fn call<T: DeserializeOwned>(socket: &Path, method: &str, params: Value) -> Result<T, ControlError> {
    let stream = coord_ipc::socket::connect(socket).await.map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused => ControlError::NotRunning,
        _ => ControlError::Io(e),
    })?;
    let (read, mut write) = tokio::io::split(stream);
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    write.write_all(format!("{request}\n").as_bytes()).await?;
    write.flush().await?;
    // A reply to these control calls is small; a line past the client's own limit is refused.
    let mut lines = FramedRead::new(read, LineCodec::new(MAX_REPLY_BYTES));
    while let Some(frame) = lines.next().await {
        let Frame::Line(line) = frame? else { continue };
        let reply: Value = serde_json::from_slice(&line).map_err(|e| ControlError::Protocol(e.to_string()))?;
        if reply["id"] != json!(1) {
            continue;
        }
        if let Some(err) = reply.get("error") {
            return Err(ControlError::Rpc {
                code: err["code"].as_i64().unwrap_or_default(),
                message: err["message"].as_str().unwrap_or_default().to_string(),
            });
        }
        return serde_json::from_value(reply["result"].clone()).map_err(|e| ControlError::Protocol(e.to_string()));
    }
    Err(ControlError::Protocol("the daemon closed the connection without answering".into()))
}
