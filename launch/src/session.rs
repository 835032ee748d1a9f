//! One running session: a task that waits for the process to end, for a stop order, or
//! for its wall-clock limit, whichever comes first, and then tells the bridge. A live
//! session's task also writes each event committed for its worker into the session's
//! input as a turn (`crate::feed`), and ends the session cleanly (end of input, then the
//! grace, then a stop) when the bridge says its attempt is finished, or takes a new
//! attempt as a new turn when the bridge hands it one ([`Handle::hand`]): the agent's next
//! task (session reuse, reuse.rs), or its own task come back from the merge queue
//! to a session that was *parked* while it waited there (parked.rs).
//!
//! Once the process ended, the task removes the session's feed and waits (at most the
//! bridge's output wait, `--output-wait-seconds`) for the session's output filter to end,
//! so that its report's log holds the last lines (a crash's last tool call). That wait is
//! the session's own: a process the stop could not reach, holding the output open, holds
//! up this report alone, never the bridge's loop or the other sessions.

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
    /// Where a live session this bridge started runs: set for the sessions a new attempt
    /// can be handed to (reuse.rs, parked.rs).
    pub place: Option<Place>,
    /// A live session whose attempt is done and waits for its merge: it stays open for
    /// what may come back (parked.rs).
    pub parked: bool,
    stop: Option<oneshot::Sender<StopWhy>>,
    next: mpsc::UnboundedSender<Next>,
}

/// Where a live session runs and what it was started with: what a next attempt must
/// match, and what the new attempt's session record repeats.
#[derive(Debug, Clone)]
pub struct Place {
    pub layer: crate::config::Layer,
    pub client: crate::config::ClientKind,
    pub cwd: std::path::PathBuf,
    /// The worktree of the session's first attempt (none for a thread task).
    pub worktree: Option<String>,
    pub log: std::path::PathBuf,
    pub pid: i32,
    pub tmux_window: Option<String>,
    /// The running session record (the current attempt's).
    pub session_id: String,
}

/// A new attempt handed to a running live session (the agent's next task, or its task come
/// back): it becomes the attempt the session's task reports for, and its task turn is
/// written into the session.
#[derive(Debug)]
pub struct Next {
    /// The new attempt's session record.
    pub session_id: String,
    pub label: String,
    pub work: Work,
    pub turn: feed::Turn,
}

impl Handle {
    /// Hand the session its next attempt; false if its task has already ended.
    pub fn hand(&self, n: Next) -> bool {
        self.next.send(n).is_ok()
    }

    /// Its process has ended: its report is on its way (once its last lines are in the
    /// log), and nothing can be handed to it any more.
    pub fn ended(&self) -> bool {
        self.next.is_closed()
    }

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
    /// The `COORD_SESSION` its processes carry (the first session's id when the process
    /// was reused), by which they are found and stopped.
    pub proc_session: String,
    pub task_id: String,
    pub thread_id: String,
    pub label: String,
    pub agent: String,
    pub pid: i32,
    pub log: PathBuf,
    pub waiter: Waiter,
    pub wall_clock: Option<Duration>,
    pub grace: Duration,
    /// How long its output filter gets, once the process ended, to write the last lines to
    /// the log before the report goes (with the log as it is then).
    pub output_wait: Duration,
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
    let (next, next_rx) = mpsc::unbounded_channel();
    let live = w.live.is_some();
    let handle = Handle {
        agent: w.agent.clone(),
        task_id: w.task_id.clone(),
        live,
        place: None,
        parked: false,
        stop: Some(tx),
        next,
    };
    tokio::spawn(run(w, rx, next_rx, done));
    handle
}

/// The wall-clock limit from now (`None`: never).
fn deadline(d: Option<Duration>) -> tokio::time::Instant {
    // Far enough to be never, near enough not to overflow.
    let never = Duration::from_secs(100 * 365 * 24 * 3600);
    tokio::time::Instant::now() + d.unwrap_or(never)
}

async fn run(
    mut w: Watch,
    mut stop: oneshot::Receiver<StopWhy>,
    mut next: mpsc::UnboundedReceiver<Next>,
    done: mpsc::UnboundedSender<Report>,
) {
    let mut started = Instant::now();
    let limit = tokio::time::sleep_until(deadline(w.wall_clock));
    tokio::pin!(limit);
    let mut stopped = None;
    let mut live = w.live.take();
    let ended = loop {
        let next_event = async {
            match live.as_mut() {
                Some(l) => l.events.next().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            e = w.waiter.wait() => {
                // The leader ended; whatever it left behind goes with it.
                process::signal_session(w.pid, &w.proc_session, libc::SIGKILL).await;
                break e;
            }
            Some(n) = next.recv() => {
                // The agent's next attempt, in this process: reported for from now on,
                // with its own wall-clock limit.
                (w.session_id, w.task_id, w.thread_id, w.label) =
                    (n.session_id, n.work.task_id.clone(), n.work.thread_id.clone(), n.label);
                started = Instant::now();
                limit.as_mut().reset(deadline(w.wall_clock));
                if let Some(l) = live.as_mut() {
                    l.work = n.work;
                    if let Err(e) = l.writer.write(&n.turn).await {
                        eprintln!("coord-launch: {}: cannot write its next task into the session: {e}", w.label);
                    }
                }
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
            why = &mut stop => {
                let why = why.unwrap_or(StopWhy::Cancelled);
                if let (StopWhy::Finished, Some(l)) = (why, live.as_mut()) {
                    l.writer.close();
                    if let Ok(e) = tokio::time::timeout(w.grace, w.waiter.wait()).await {
                        process::signal_session(w.pid, &w.proc_session, libc::SIGKILL).await;
                        break e;
                    }
                }
                stopped = Some(why);
                break process::stop(w.pid, &w.proc_session, &mut w.waiter, w.grace).await;
            }
            _ = &mut limit => {
                stopped = Some(StopWhy::WallClock);
                break process::stop(w.pid, &w.proc_session, &mut w.waiter, w.grace).await;
            }
        }
    };
    // How long it ran: to its process's end, not its output's.
    let ran_for = started.elapsed();
    // Its input ends with it: the feed is closed (a process left reading it gets its end)
    // and removed.
    drop(live);
    feed::remove(&w.log);
    // Nothing more is handed to it ([`Handle::hand`] says so); an attempt handed as the
    // process ended is the one the report is for.
    next.close();
    while let Ok(n) = next.try_recv() {
        (w.session_id, w.task_id, w.thread_id, w.label) = (n.session_id, n.work.task_id, n.work.thread_id, n.label);
    }
    // The last lines (a crash's last tool call) may still be on their way to the log.
    if let Some(output) = w.waiter.output()
        && tokio::time::timeout(w.output_wait, output).await.is_err()
    {
        eprintln!(
            "coord-launch: {}: its output was still open {}s after it ended (held by a process its stop \
             could not reach?): its end is recorded with its log as it is",
            w.label,
            w.output_wait.as_secs()
        );
    }
    let _ = done.send(Report {
        session_id: w.session_id,
        task_id: w.task_id,
        thread_id: w.thread_id,
        label: w.label,
        log: w.log,
        ended,
        stopped,
        ran_for,
        reattached: w.reattached,
    });
}
