//! One running session: a task that waits for the process to end, for a stop order, or
//! for its wall-clock limit, whichever comes first, and then tells the bridge. A live
//! session's task also writes each event committed for its worker into the session's
//! input as a turn (`crate::feed`), and ends the session cleanly (end of input, then the
//! grace, then a stop) when the bridge says its attempt is finished. A live session whose
//! attempt waits in the merge queue is *parked* (kept open); if the task comes back to its
//! worker (a failed verify, a conflict, requested changes), the bridge hands the new
//! attempt to it ([`Handle::adopt`]) and the failure is its next turn.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot};

use coord_client::EventStream;

use crate::client::Work;
use crate::feed;
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
    /// A live session's attempt is finished: its input is closed, and it is stopped if it
    /// has not ended within the grace.
    Finished,
    /// The session reached its budget (budget.rs).
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
            StopWhy::Finished => "stopped: its attempt was finished and it did not end when its input was closed",
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
    /// A live session (its attempt's end closes its input: [`StopWhy::Finished`]).
    pub live: bool,
    /// A live session whose attempt is done and waits for its merge: it stays open for
    /// what may come back.
    pub parked: bool,
    stop: Option<oneshot::Sender<StopWhy>>,
    adopt: Option<mpsc::UnboundedSender<Adopt>>,
}

/// A returned attempt handed to a parked live session: its work and the turn that says so.
pub struct Adopt {
    pub work: Work,
    pub text: String,
    /// The `task.dispatched` event's id (the turn's id is made from it).
    pub event_id: i64,
}

impl Handle {
    /// Order the session to stop (once; later orders are ignored).
    pub fn stop(&mut self, why: StopWhy) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(why);
        }
    }

    /// Hand a returned attempt to this (parked, live) session; false if it is gone.
    pub fn adopt(&mut self, a: Adopt) -> bool {
        self.parked = false;
        self.adopt.as_ref().is_some_and(|tx| tx.send(a).is_ok())
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
    /// A live session's feed.
    pub live: Option<Live>,
}

/// What a live session's task needs: where to write, and what to follow.
pub struct Live {
    pub writer: feed::Writer,
    /// Events committed for the worker (messages to it).
    pub events: EventStream,
    pub work: Work,
}

/// Start watching a session; its report goes to `done`.
pub fn watch(w: Watch, done: mpsc::UnboundedSender<Report>) -> Handle {
    let (tx, rx) = oneshot::channel();
    let (adopt_tx, adopt_rx) = mpsc::unbounded_channel();
    let live = w.live.is_some();
    let adopt = live.then_some(adopt_tx);
    let handle =
        Handle { agent: w.agent.clone(), task_id: w.task_id.clone(), live, parked: false, stop: Some(tx), adopt };
    tokio::spawn(run(w, rx, adopt_rx, done));
    handle
}

async fn run(
    mut w: Watch,
    mut stop: oneshot::Receiver<StopWhy>,
    mut adopt: mpsc::UnboundedReceiver<Adopt>,
    done: mpsc::UnboundedSender<Report>,
) {
    let started = Instant::now();
    let limit = async {
        match w.wall_clock {
            Some(d) => tokio::time::sleep(d).await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(limit);
    let mut stopped = None;
    let mut live = w.live.take();
    let ended = loop {
        let feeding = live.is_some();
        let next_event = async {
            match live.as_mut() {
                Some(l) => l.events.next().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            e = w.waiter.wait() => {
                // The leader ended; whatever it left behind goes with it.
                process::signal_session(w.pid, &w.session_id, libc::SIGKILL).await;
                break e;
            }
            ev = next_event => {
                let l = live.as_mut().expect("only live sessions have events");
                match ev {
                    Some(Ok(ev)) => {
                        if let Some(t) = feed::turn_of(&ev, &l.work, l.writer.seed)
                            && let Err(e) = l.writer.write(&t).await
                        {
                            eprintln!("coord-launch: {}: cannot write a turn into the session: {e}", w.label);
                        }
                    }
                    // The stream could not go on: the session runs on without a feed.
                    _ => live = None,
                }
            }
            Some(a) = adopt.recv(), if feeding => {
                let l = live.as_mut().expect("only live sessions adopt");
                // From here the session works on the returned attempt: its thread, its turns.
                (w.thread_id, w.label) = (a.work.thread_id.clone(), format!("{} a{}", a.work.task_id, a.work.attempt));
                let t = feed::task_turn(&a.work, a.text, l.writer.seed, a.event_id);
                l.work = a.work;
                if let Err(e) = l.writer.write(&t).await {
                    eprintln!("coord-launch: {}: cannot write the returned task into the session: {e}", w.label);
                }
            }
            why = &mut stop => {
                let why = why.unwrap_or(StopWhy::Cancelled);
                if let (StopWhy::Finished, Some(l)) = (why, live.as_mut()) {
                    l.writer.close();
                    if let Ok(e) = tokio::time::timeout(w.grace, w.waiter.wait()).await {
                        process::signal_session(w.pid, &w.session_id, libc::SIGKILL).await;
                        break e;
                    }
                }
                stopped = Some(why);
                break process::stop(w.pid, &w.session_id, &mut w.waiter, w.grace).await;
            }
            _ = &mut limit => {
                stopped = Some(StopWhy::WallClock);
                break process::stop(w.pid, &w.session_id, &mut w.waiter, w.grace).await;
            }
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
