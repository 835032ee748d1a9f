//! The async work around the store: steps that combine git and the database (dispatch,
//! retry, reassign, merges into a run's integration branch and its merge queue, sending
//! work back to its worker, a task's diff and its review, worktree listing and pruning),
//! search with its off-the-send-path index, and the daemon's background duties (automatic
//! retries and merges, lease-expiry events, the idle timeout), and the permission policy's
//! snapshot file. Blocking work (git, files) runs in
//! `spawn_blocking`, never inside a write transaction.

pub mod background;
pub mod diff;
pub mod dispatch;
pub mod merge;
pub mod merge_queue;
pub mod policy;
pub mod returns;
pub mod review;
pub mod search;
pub mod worktrees;

use crate::error::{Error, Result};

/// Run blocking work (git, files) off the executor threads.
pub(crate) async fn blocking<T: Send + 'static>(f: impl FnOnce() -> Result<T> + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(f).await.map_err(|e| Error::Internal(format!("blocking task failed: {e}")))?
}
