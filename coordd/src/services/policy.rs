//! The permission policy's snapshot file (`coord_ipc::paths::policy_file`): the daemon
//! writes it after every `policy.set` and when it starts, so the permission hooks can tell
//! that a tool call is not gated without a round trip. It is written beside and renamed,
//! under a lock that makes the last writer write the newest policy.

use std::path::PathBuf;
use std::sync::Arc;

use coord_proto::ErrorCode;
use tokio::sync::Mutex;

use super::blocking;
use crate::core::Core;
use crate::domain::policy;
use crate::error::{Error, Result};

/// Serializes snapshot writes.
#[derive(Default)]
pub struct Snapshots(Mutex<()>);

/// Where the snapshot of this daemon's policy lives.
pub fn file(core: &Core) -> PathBuf {
    coord_ipc::paths::policy_file(&core.db_path)
}

/// Write the stored policy's snapshot; returns its path.
pub async fn write(core: &Arc<Core>, lock: &Snapshots) -> Result<PathBuf> {
    let _guard = lock.0.lock().await;
    let p = core.read(|tx, _| policy::load(tx)).await?;
    let path = file(core);
    let target = path.clone();
    blocking(move || {
        let text = serde_json::to_string_pretty(&p).map_err(|e| Error::Internal(e.to_string()))? + "\n";
        let tmp = target.with_extension("json.tmp");
        let fail = |e: std::io::Error| Error::app(ErrorCode::IoWriteFailed, format!("{}: {e}", target.display()));
        std::fs::write(&tmp, text).map_err(fail)?;
        std::fs::rename(&tmp, &target).map_err(fail)
    })
    .await?;
    Ok(path)
}

/// At start: refresh the snapshot (a stale or deleted file is healed); failures are logged.
pub async fn at_start(core: Arc<Core>, lock: Arc<Snapshots>) {
    if let Err(e) = write(&core, &lock).await {
        tracing::warn!(error = %e, "could not write the permission policy snapshot");
    }
}
