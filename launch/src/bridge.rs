//! The bridge: follows a run's events and keeps one session per dispatched attempt. It
//! starts sessions (at most `max_sessions` at once, backing off a task whose sessions keep
//! crashing), records them through `launch.*`, stops them on cancel, reassign, shutdown
//! ([`crate::shutdown`]) or the wall-clock limit, and reports each end
//! ([`crate::lifecycle`]). It waits on two event subscriptions, its sessions' ends, the
//! stop signal and, when a start or a shutdown grace is due, the one instant it waits for:
//! never a poll.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::path::PathBuf;
use std::time::Duration;

use coord_client::{Client, ClientError, ConnectOptions, EventStream};
use coord_proto::types::*;
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::client::Work;
use crate::config::{self, Layer};
use crate::rpc::Rpc;
use crate::say::{self, Say};
use crate::session::{Handle, Report, StopWhy};
use crate::shutdown::Shutdowns;

/// How the bridge runs.
pub struct Options {
    pub run_id: String,
    pub db: PathBuf,
    pub agents_dir: PathBuf,
    pub dispatch: bool,
    pub max_sessions: usize,
    pub until_done: bool,
    pub tmux: bool,
    pub quiet: bool,
    pub flags: Layer,
    pub config: config::File,
    /// SIGTERM to SIGKILL.
    pub grace: Duration,
    /// How long an ended session's output filter gets to write its last lines to the log
    /// (it ends at once at the end of the session's output, unless a process the stop
    /// could not reach still holds that output open).
    pub output_wait: Duration,
    /// How long a worker has to answer a shutdown request before it is stopped.
    pub shutdown_grace: Duration,
    /// The `inbox` binary named in prompts.
    pub inbox: String,
    /// This `coord-launch` (the filter of Codex's output).
    pub me: String,
    pub host: String,
    /// The run's budget to set (`--max-cost-usd`, `--max-tokens`).
    pub limits: crate::limits::RunLimits,
    /// At the run's budget, stop the running sessions too.
    pub hard: bool,
    pub connect: ConnectOptions,
}

/// How the run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finish {
    Done,
    Failed,
    Cancelled,
}

/// Why the bridge returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// With `--until-done`: the run finished and no session runs.
    Finished(Finish),
    /// Stopped by a signal; how the run stood then (`None`: still active).
    Stopped(Option<Finish>),
}

/// The longest a crash-looping task waits before its next session.
const BACKOFF_MAX: Duration = Duration::from_secs(60);

pub(crate) struct Pending {
    pub work: Work,
    pub not_before: Instant,
}

/// The bridge's state.
pub struct Bridge {
    pub(crate) o: Options,
    pub(crate) rpc: Rpc,
    pub(crate) launcher: String,
    /// Running sessions by thread.
    pub(crate) running: HashMap<String, Handle>,
    pub(crate) pending: VecDeque<Pending>,
    pub(crate) crashes: HashMap<String, u32>,
    pub(crate) shutdowns: Shutdowns,
    /// Each worker agent's secret, minted with the bridge's (the lead's) authority.
    pub(crate) credentials: crate::credentials::Credentials,
    pub(crate) finished: Option<Finish>,
    /// The repository code tasks are dispatched in (the run's, else the project's).
    pub(crate) repo: Option<String>,
    pub(crate) say: Say,
    pub(crate) budgets: crate::limits::Budgets,
    pub(crate) ends_tx: mpsc::UnboundedSender<Report>,
    ends_rx: mpsc::UnboundedReceiver<Report>,
}

/// The bridge could not go on.
#[derive(Debug, thiserror::Error)]
pub enum BridgeError {
    #[error(transparent)]
    Client(#[from] ClientError),
    #[error("tmux: {0}")]
    Tmux(std::io::Error),
}

impl Bridge {
    pub async fn new(o: Options) -> Result<Bridge, BridgeError> {
        let rpc = Rpc::connect(o.connect.clone()).await?;
        let launcher = format!("coord-launch:{}", o.run_id);
        let (ends_tx, ends_rx) = mpsc::unbounded_channel();
        let say = Say::new(o.quiet, &say::log_path(&o.agents_dir.join("launch").join(&o.run_id)));
        let budgets = crate::limits::Budgets::new(o.hard);
        Ok(Bridge {
            o,
            rpc,
            launcher,
            running: HashMap::new(),
            pending: VecDeque::new(),
            crashes: HashMap::new(),
            shutdowns: Shutdowns::default(),
            credentials: Default::default(),
            finished: None,
            repo: None,
            say,
            budgets,
            ends_tx,
            ends_rx,
        })
    }

    /// The run's bridge log (`say.rs`), which the tmux `bridge` window follows.
    pub(crate) fn bridge_log(&self) -> PathBuf {
        say::log_path(&self.o.agents_dir.join("launch").join(&self.o.run_id))
    }

    /// Follow the run until it finishes (with `until_done`), or until `stop` (a signal).
    pub async fn run(mut self, stop: impl Future<Output = ()>) -> Result<Outcome, BridgeError> {
        if self.o.tmux {
            crate::tmux::open(&self.o.run_id, &self.bridge_log()).map_err(BridgeError::Tmux)?;
        }
        let r = self.follow(stop).await;
        if self.o.tmux {
            crate::tmux::close(&self.o.run_id);
        }
        r
    }

    async fn follow(&mut self, stop: impl Future<Output = ()>) -> Result<Outcome, BridgeError> {
        let client = self.rpc.client().await?;
        let cursor = client.server_info().last_event_id;
        let mut events = subscribe_run(client, &self.o.run_id, cursor).await?;
        let mut control = subscribe_shutdowns(client, cursor).await?;
        self.reattach().await?;
        self.budget_catch_up(self.o.limits).await?;
        self.catch_up().await?;
        tokio::pin!(stop);
        loop {
            self.start_what_fits().await;
            if let (true, Some(f), true) = (self.o.until_done, self.finished, self.running.is_empty()) {
                return Ok(Outcome::Finished(f));
            }
            let next_start = self.next_start();
            let next_shutdown = self.shutdowns.next_deadline();
            tokio::select! {
                ev = events.next() => self.on_event(ev.expect("a stream never ends")?).await?,
                ev = control.next() => {
                    let ev = ev.expect("a stream never ends")?;
                    let stops = self.shutdowns.on_event(&ev, &self.o.run_id, &self.running, self.o.shutdown_grace);
                    self.stop_sessions(stops);
                }
                Some(r) = self.ends_rx.recv() => self.on_end(r).await?,
                _ = sleep_until(next_start) => {}
                _ = sleep_until(next_shutdown) => {
                    let stops = self.shutdowns.overdue();
                    self.stop_sessions(stops);
                }
                _ = &mut stop => {
                    let n = self.running.len();
                    self.say.warn(&format!(
                        "stopping; {n} running session(s) go on and are re-attached by the next coord-launch"
                    ));
                    return Ok(Outcome::Stopped(self.finished));
                }
            }
        }
    }

    fn stop_sessions(&mut self, stops: Vec<(String, StopWhy)>) {
        for (thread, why) in stops {
            if let Some(h) = self.running.get_mut(&thread) {
                h.stop(why);
            }
        }
    }

    /// Live attempts with no session get one; with `--dispatch`, ready tasks are dispatched.
    async fn catch_up(&mut self) -> Result<(), BridgeError> {
        let view = self.rpc.run_show(&self.o.run_id).await?;
        self.note_run(view.run.status);
        if let Some(f) = self.finished {
            self.say.line(&format!("run {} is {}", self.o.run_id, finish_name(f)));
        }
        self.repo = match view.run.repo.clone() {
            Some(r) => Some(r),
            None => git_root(self.o.agents_dir.parent().unwrap_or(&self.o.agents_dir)).await,
        };
        for t in &view.tasks {
            if !matches!(t.status, TaskStatus::Dispatched | TaskStatus::InProgress | TaskStatus::Blocked) {
                continue;
            }
            let tv = self.rpc.task_show(&self.o.run_id, &t.task_id).await?;
            let live = tv.attempts.iter().rev().find(|a| a.status == AttemptStatus::Live);
            if let Some(a) = live.filter(|a| !self.known(&a.thread_id) && self.launches_here(a)) {
                let work = work_of(t, a.attempt, &a.thread_id, &a.worker, a.worktree_path.clone());
                self.pending.push_back(Pending { work, not_before: Instant::now() });
            }
        }
        if self.o.dispatch && view.tasks.iter().any(|t| t.status == TaskStatus::Ready) {
            self.dispatch(None).await;
        }
        Ok(())
    }

    /// Is the attempt this host's to launch? A code task's worktree lives on the host whose
    /// daemon made it, and only that host's bridge launches it; a thread task (no worktree)
    /// goes to any bridge, and `launch.sessionStart` lets exactly one of them run it.
    pub(crate) fn launches_here(&self, a: &Attempt) -> bool {
        a.worktree_path.is_none() || a.host.as_deref().is_none_or(|h| h == self.o.host)
    }

    /// Does this bridge run, or mean to start, a session for this thread?
    pub(crate) fn known(&self, thread: &str) -> bool {
        self.running.contains_key(thread) || self.pending.iter().any(|p| p.work.thread_id == thread)
    }

    async fn dispatch(&mut self, task_id: Option<String>) {
        if self.budgets.over {
            let what = task_id.as_deref().unwrap_or("the ready tasks");
            self.say.line(&format!("{what} not dispatched: the run is at its budget"));
            return;
        }
        let p = DispatchParams {
            run_id: self.o.run_id.clone(),
            all_ready: task_id.is_none(),
            task_id,
            repo: self.repo.clone(),
            ..Default::default()
        };
        // The dispatches come back as `task.dispatched` events, which start the sessions.
        if let Err(e) = self.rpc.dispatch(p).await
            && let Some(line) = dispatch_failure(&e)
        {
            self.say.warn(&line);
        }
    }

    fn note_run(&mut self, status: RunStatus) {
        self.finished = match status {
            RunStatus::Done => Some(Finish::Done),
            RunStatus::Failed => Some(Finish::Failed),
            RunStatus::Cancelled => Some(Finish::Cancelled),
            RunStatus::Active => None,
        };
    }

    async fn on_event(&mut self, ev: Event) -> Result<(), BridgeError> {
        match ev.event_type {
            EventType::TaskDispatched => {
                let Ok(d) = serde_json::from_value::<Dispatch>(ev.payload_json.clone()) else { return Ok(()) };
                let tv = self.rpc.task_show(&self.o.run_id, &d.task_id).await?;
                let here =
                    tv.attempts.iter().find(|a| a.thread_id == d.thread_id).is_none_or(|a| self.launches_here(a));
                if self.running.contains_key(&d.thread_id) || !here {
                    return Ok(());
                }
                let work = work_of(&tv.task, d.attempt, &d.thread_id, &d.assigned_to, d.worktree_path.clone());
                if self.adopt_returned(&ev, &d, &work).await? {
                    return Ok(());
                }
                let delay = self.backoff(&d.task_id);
                self.pending.retain(|p| p.work.task_id != d.task_id);
                self.pending.push_back(Pending { work, not_before: Instant::now() + delay });
            }
            EventType::TaskInProgress if !self.known(&ev.thread_id) => self.resume_if_answered(&ev.task_id).await?,
            // A live session's attempt is over: it takes its agent's next task (session
            // reuse), or waits for its merge (parked.rs), or its input is closed; one-shot
            // sessions end by themselves.
            EventType::ThreadDone | EventType::ThreadFailed => self.live_thread_done(&ev).await?,
            EventType::ThreadCancelled => {
                self.pending.retain(|p| p.work.thread_id != ev.thread_id);
                let why = if ev.summary.contains("reassign") { StopWhy::Reassigned } else { StopWhy::Cancelled };
                if let Some(h) = self.running.get_mut(&ev.thread_id) {
                    h.stop(why);
                }
            }
            // A task handed to a running session (session reuse) was dispatched then; a
            // parked session's task that is ready again goes to a new session.
            EventType::TaskReady
                if self.o.dispatch && !self.running.values().any(|h| h.task_id == ev.task_id && !h.parked) =>
            {
                self.dispatch(Some(ev.task_id.clone())).await
            }
            EventType::TaskMerged | EventType::TaskMergeConflict => {
                if ev.event_type == EventType::TaskMerged {
                    self.end_parked(Some(&ev.task_id));
                }
                self.say.line(&ev.summary)
            }
            EventType::TaskFailed | EventType::TaskCancelled => self.end_parked(Some(&ev.task_id)),
            EventType::LaunchUsage | EventType::LaunchBudgetSet | EventType::RunBudgetReached => {
                let was = self.budgets.over;
                self.on_budget_event(&ev).await?;
                if was && !self.budgets.over {
                    self.catch_up().await?;
                }
            }
            EventType::RunDone | EventType::RunFailed | EventType::RunCancelled | EventType::RunResumed => {
                if ev.event_type != EventType::RunResumed {
                    self.end_parked(None);
                }
                self.note_run(match ev.event_type {
                    EventType::RunDone => RunStatus::Done,
                    EventType::RunFailed => RunStatus::Failed,
                    EventType::RunCancelled => RunStatus::Cancelled,
                    _ => RunStatus::Active,
                });
                self.say.line(&ev.summary);
            }
            _ => {}
        }
        Ok(())
    }

    /// How long a task waits before its next session ([`backoff_after`] its crashes).
    fn backoff(&self, task_id: &str) -> Duration {
        backoff_after(self.crashes.get(task_id).copied().unwrap_or(0))
    }

    fn next_start(&self) -> Option<Instant> {
        if self.running.len() >= self.o.max_sessions || self.budgets.over {
            return None;
        }
        self.pending.iter().map(|p| p.not_before).min().filter(|t| *t > Instant::now())
    }

    async fn start_what_fits(&mut self) {
        let now = Instant::now();
        while self.running.len() < self.o.max_sessions && !self.budgets.over {
            let Some(i) = self.pending.iter().position(|p| p.not_before <= now) else { return };
            let p = self.pending.remove(i).expect("found");
            if let Err(e) = self.start(p.work.clone()).await {
                self.say.warn(&format!("cannot start a session for {}: {e}", p.work.task_id));
            }
        }
    }
}

fn finish_name(f: Finish) -> &'static str {
    match f {
        Finish::Done => "done",
        Finish::Failed => "failed",
        Finish::Cancelled => "cancelled",
    }
}

pub(crate) fn work_of(t: &Task, attempt: u32, thread_id: &str, agent: &str, worktree: Option<String>) -> Work {
    Work {
        run_id: t.run_id.clone(),
        task_id: t.task_id.clone(),
        attempt,
        thread_id: thread_id.to_string(),
        agent: agent.to_string(),
        title: t.title.clone(),
        role: t.role.clone(),
        worktree,
    }
}

/// The git repository around `dir`, if it is in one.
async fn git_root(dir: &std::path::Path) -> Option<String> {
    let out = tokio::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["rev-parse", "--show-toplevel"])
        .output()
        .await
        .ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

async fn sleep_until(t: Option<Instant>) {
    match t {
        Some(t) => tokio::time::sleep_until(t).await,
        None => std::future::pending().await,
    }
}

async fn subscribe_run(client: &Client, run_id: &str, after: i64) -> Result<EventStream, ClientError> {
    let f = EventFilter {
        run_id: Some(run_id.to_string()),
        after_event: Some(after),
        event_types: vec![
            EventType::TaskDispatched,
            EventType::TaskReady,
            EventType::TaskInProgress,
            EventType::TaskMerged,
            EventType::TaskMergeConflict,
            EventType::TaskFailed,
            EventType::TaskCancelled,
            EventType::ThreadCancelled,
            EventType::ThreadDone,
            EventType::ThreadFailed,
            EventType::RunDone,
            EventType::RunFailed,
            EventType::RunCancelled,
            EventType::RunResumed,
            EventType::LaunchUsage,
            EventType::LaunchBudgetSet,
            EventType::RunBudgetReached,
        ],
        ..Default::default()
    };
    client.subscribe(f).await
}

async fn subscribe_shutdowns(client: &Client, after: i64) -> Result<EventStream, ClientError> {
    let f = EventFilter {
        after_event: Some(after),
        message_types: vec!["shutdown_request".into(), "shutdown_approved".into(), "shutdown_rejected".into()],
        ..Default::default()
    };
    client.subscribe(f).await
}

/// The pause before a task's next session after `crashes` crashes in a row: nothing at
/// first, then doubling from a second, up to [`BACKOFF_MAX`].
pub(crate) fn backoff_after(crashes: u32) -> Duration {
    match crashes {
        0 => Duration::ZERO,
        n => Duration::from_secs(1u64 << (n - 1).min(6)).min(BACKOFF_MAX),
    }
}

/// The warning a failed dispatch is worth, if any. Another bridge (or the lead) dispatching
/// the same task first (`lease_conflict`, "changed while dispatching") is expected when
/// several bridges dispatch one run, and its `task.dispatched` comes all the same: quiet.
fn dispatch_failure(e: &coord_client::ClientError) -> Option<String> {
    (e.code() != "lease_conflict").then(|| format!("dispatch failed: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rpc_error(app: coord_proto::error::ErrorCode, message: &str) -> coord_client::ClientError {
        coord_client::ClientError::Rpc { code: app.rpc_code(), app: Some(app), message: message.into(), details: None }
    }

    #[test]
    fn losing_a_dispatch_race_to_another_bridge_is_quiet_and_other_failures_are_said() {
        use coord_proto::error::ErrorCode;
        let lost = rpc_error(ErrorCode::LeaseConflict, "task 'T1' changed while dispatching (now at attempt 1)");
        assert_eq!(dispatch_failure(&lost), None);
        let other = rpc_error(ErrorCode::NotFound, "no run 'R9'");
        assert!(dispatch_failure(&other).is_some_and(|l| l.starts_with("dispatch failed: ")));
    }

    #[test]
    fn a_crash_loop_backs_off_doubling_up_to_a_minute() {
        let pauses: Vec<u64> = (0..10).map(|n| backoff_after(n).as_secs()).collect();
        assert_eq!(pauses, [0, 1, 2, 4, 8, 16, 32, 60, 60, 60]);
    }
}
