//! [`ProgressReporter`]: progress lines from a tool subprocess to its session, lossy by
//! design. `report` never blocks: lines go into a small bounded queue that one background
//! task sends to the daemon (`progress.report`); when the queue is full, or there is no
//! daemon, lines are dropped and counted.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use coord_client::Client;
use coord_proto::api::ControlApiClient;
use coord_proto::types::{ProgressParams, ProgressType};
use serde_json::Value;
use tokio::sync::mpsc;

/// The environment variable that tells a tool subprocess where to report: the daemon's
/// socket. `inbox hook install` sets it for the session (with `COORD_AGENT` and
/// `COORD_TASK`), so every tool the session runs inherits it.
pub const PROGRESS_ENV: &str = "COORD_PROGRESS";

/// Lines queued before new ones are dropped.
const QUEUE: usize = 256;

/// Sends progress lines for one agent (and task) without ever waiting.
///
/// ```no_run
/// use coord_inbox::ProgressReporter;
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// // In a tool started by a session: COORD_PROGRESS and COORD_AGENT are set.
/// if let Some(progress) = ProgressReporter::from_env() {
///     progress.progress("compiled 12/40 crates");
///     progress.flush().await;
/// }
/// # }
/// ```
pub struct ProgressReporter {
    queue: mpsc::Sender<ProgressParams>,
    agent: String,
    task_id: Option<String>,
    dropped: Arc<AtomicU64>,
    idle: Arc<tokio::sync::Notify>,
    queued: Arc<AtomicU64>,
}

impl ProgressReporter {
    /// Report to the daemon listening on `socket` (never started for this) as `agent`.
    pub fn spawn(socket: PathBuf, agent: impl Into<String>, task_id: Option<String>) -> ProgressReporter {
        let (queue, mut rx) = mpsc::channel::<ProgressParams>(QUEUE);
        let dropped = Arc::new(AtomicU64::new(0));
        let idle = Arc::new(tokio::sync::Notify::new());
        let queued = Arc::new(AtomicU64::new(0));
        let (d, i, q) = (dropped.clone(), idle.clone(), queued.clone());
        tokio::spawn(async move {
            let mut client: Option<Client> = None;
            while let Some(line) = rx.recv().await {
                if client.is_none() {
                    client = Client::connect_socket(&socket).await.ok();
                }
                let sent = match &client {
                    Some(c) => c.progress_report(line).await.is_ok(),
                    None => false,
                };
                if !sent {
                    d.fetch_add(1, Ordering::Relaxed);
                    client = None;
                }
                q.fetch_sub(1, Ordering::SeqCst);
                i.notify_waiters();
            }
        });
        ProgressReporter { queue, agent: agent.into(), task_id, dropped, idle, queued }
    }

    /// A reporter from the environment: `COORD_PROGRESS` (the socket), `COORD_AGENT`, and
    /// `COORD_TASK` if set. `None` when either of the first two is missing.
    pub fn from_env() -> Option<ProgressReporter> {
        let socket = std::env::var_os(PROGRESS_ENV).filter(|s| !s.is_empty())?;
        let agent = std::env::var("COORD_AGENT").ok().filter(|a| !a.is_empty())?;
        let task = std::env::var("COORD_TASK").ok().filter(|t| !t.is_empty());
        Some(ProgressReporter::spawn(PathBuf::from(socket), agent, task))
    }

    /// A `progress` line. False when it was dropped (the queue was full).
    pub fn progress(&self, text: impl Into<String>) -> bool {
        self.report(ProgressType::Progress, text, None, None)
    }

    /// Any line: `progress`, `log` or `result`, for a tool call if known, with metadata.
    pub fn report(
        &self,
        line_type: ProgressType,
        data: impl Into<String>,
        tool_use_id: Option<String>,
        meta: Option<Value>,
    ) -> bool {
        let line = ProgressParams {
            agent: self.agent.clone(),
            task_id: self.task_id.clone(),
            line_type,
            tool_use_id,
            data: data.into(),
            meta,
        };
        self.queued.fetch_add(1, Ordering::SeqCst);
        if self.queue.try_send(line).is_ok() {
            return true;
        }
        self.queued.fetch_sub(1, Ordering::SeqCst);
        self.dropped.fetch_add(1, Ordering::Relaxed);
        false
    }

    /// Lines dropped so far (queue full, or no daemon to take them).
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Wait until every queued line was sent or dropped (before a short-lived tool exits).
    pub async fn flush(&self) {
        loop {
            let idle = self.idle.notified();
            tokio::pin!(idle);
            idle.as_mut().enable();
            if self.queued.load(Ordering::SeqCst) == 0 {
                return;
            }
            idle.await;
        }
    }
}
