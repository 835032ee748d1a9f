//! One running session: a task that waits for the process to end, for a stop order, or
//! for its wall-clock limit, whichever comes first, and then tells the bridge.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot};

use crate::process::{self, Ended, Waiter};

/// Why the bridge stops a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopWhy {
    /// The attempt's thread was cancelled (task or run cancelled).
    Cancelled,
    /// The task was reassigned (its old thread is cancelled too).
    Reassigned,
    /// The worker approved a shutdown request.
    Shutdown,
    /// The worker did not answer a shutdown request within the shutdown grace.
    ShutdownUnanswered,
    /// The session ran past its wall-clock limit.
    WallClock,
    /// The session reached its budget ([`crate::budget`]).
    SessionBudget,
    /// The run reached its budget and the bridge runs with `--hard`.
    RunBudget,
}

impl StopWhy {
    pub fn reason(self) -> &'static str {
        match self {
            StopWhy::Cancelled => "stopped: the attempt was cancelled",
            StopWhy::Reassigned => "stopped: the task was reassigned",
            StopWhy::Shutdown => "stopped: shutdown approved",
            StopWhy::ShutdownUnanswered => "stopped: shutdown request not answered in time",
            StopWhy::WallClock => "stopped: past its wall-clock limit",
            StopWhy::SessionBudget => "stopped: the session reached its budget",
            StopWhy::RunBudget => "stopped: the run reached its budget",
        }
    }

    /// Whether the attempt should fail if its thread is still open.
    pub fn fails_attempt(self) -> bool {
        matches!(self, StopWhy::WallClock | StopWhy::SessionBudget | StopWhy::RunBudget)
    }
}

/// What a session task reports when its process has ended.
#[derive(Debug)]
pub struct Report {
    pub session_id: String,
    pub task_id: String,
    pub thread_id: String,
    /// `T1 a2`: how the bridge's lines name the session.
    pub label: String,
    pub log: PathBuf,
    pub ended: Ended,
    pub stopped: Option<StopWhy>,
    pub ran_for: Duration,
    /// Re-attached after a bridge restart: its exit status was not ours to read (unless a
    /// tmux status file kept it).
    pub reattached: bool,
}

/// The bridge's handle on a running session.
pub struct Handle {
    pub agent: String,
    pub task_id: String,
    stop: Option<oneshot::Sender<StopWhy>>,
}

impl Handle {
    /// Order the session to stop (once; later orders are ignored).
    pub fn stop(&mut self, why: StopWhy) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(why);
        }
    }
}

/// What a session task needs.
pub struct Watch {
    pub session_id: String,
    pub task_id: String,
    pub thread_id: String,
    pub label: String,
    pub agent: String,
    pub pid: i32,
    pub log: PathBuf,
    pub waiter: Waiter,
    pub wall_clock: Option<Duration>,
    pub grace: Duration,
    pub reattached: bool,
}

/// Start watching a session; its report goes to `done`.
pub fn watch(w: Watch, done: mpsc::UnboundedSender<Report>) -> Handle {
    let (tx, rx) = oneshot::channel();
    let handle = Handle { agent: w.agent.clone(), task_id: w.task_id.clone(), stop: Some(tx) };
    tokio::spawn(run(w, rx, done));
    handle
}

async fn run(mut w: Watch, stop: oneshot::Receiver<StopWhy>, done: mpsc::UnboundedSender<Report>) {
    let started = Instant::now();
    let limit = async {
        match w.wall_clock {
            Some(d) => tokio::time::sleep(d).await,
            None => std::future::pending().await,
        }
    };
    let mut stopped = None;
    let ended = tokio::select! {
        e = w.waiter.wait() => {
            // The leader ended; whatever it left behind goes with it.
            process::signal_session(w.pid, &w.session_id, libc::SIGKILL).await;
            e
        }
        why = stop => {
            let why = why.unwrap_or(StopWhy::Cancelled);
            stopped = Some(why);
            process::stop(w.pid, &w.session_id, &mut w.waiter, w.grace).await
        }
        _ = limit => {
            stopped = Some(StopWhy::WallClock);
            process::stop(w.pid, &w.session_id, &mut w.waiter, w.grace).await
        }
    };
    let _ = done.send(Report {
        session_id: w.session_id,
        task_id: w.task_id,
        thread_id: w.thread_id,
        label: w.label,
        log: w.log,
        ended,
        stopped,
        ran_for: started.elapsed(),
        reattached: w.reattached,
    });
}
