//! The permission policy's snapshot file (`coord_ipc::paths::policy_file`): the daemon
//! writes it when it starts, after every `policy.set` it serves (before answering), and on
//! every `policy.changed` event its bus publishes (a change made through another daemon on
//! the same PostgreSQL store), so the permission hooks can tell that a tool call is not
//! gated without a round trip. It is written beside and renamed, under a lock that makes
//! the last writer write the newest policy.

use std::path::PathBuf;
use std::sync::Arc;

use coord_proto::ErrorCode;
use coord_proto::types::EventType;
use tokio::sync::Mutex;

use super::blocking;
use crate::bus::Missed;
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
        crate::private::write_file(&tmp, text.as_bytes()).map_err(fail)?;
        std::fs::rename(&tmp, &target).map_err(fail)
    })
    .await?;
    Ok(path)
}

/// Keep the snapshot current for the daemon's life: refresh it at start (a stale or
/// deleted file is healed), then whenever a `policy.changed` event is published, whoever
/// committed it; after a lag, refresh anyway. Failures are logged.
pub async fn keep_current(core: Arc<Core>, lock: Arc<Snapshots>) {
    let mut bus = core.bus.subscribe();
    loop {
        if let Err(e) = write(&core, &lock).await {
            tracing::warn!(error = %e, "could not write the permission policy snapshot");
        }
        loop {
            match bus.recv().await {
                Ok(p) if p.event.event_type == EventType::PolicyChanged => break,
                Ok(_) => {}
                Err(Missed::Lagged(_)) => break,
                Err(Missed::Closed) => return,
            }
        }
    }
}
