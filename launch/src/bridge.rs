//! The bridge: follows a run's events and keeps one session per dispatched attempt. It
//! starts sessions (at most `max_sessions` at once, backing off a task whose sessions keep
//! crashing), records them through `launch.*`, stops them on cancel, reassign, shutdown or
//! the wall-clock limit, and reports each end. It waits on two event subscriptions, its
//! sessions' ends and, when a start is held back, the one instant it waits for: never a poll.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::time::Duration;

use coord_client::{Client, ClientError, ConnectOptions, EventStream};
use coord_proto::types::*;
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::client::{self, Context, Work};
use crate::config::{self, ClientKind, Layer};
use crate::process;
use crate::rpc::Rpc;
use crate::session::{self, Handle, Report, StopWhy};

/// How the bridge runs.
pub struct Options {
    pub run_id: String,
    pub db: PathBuf,
    pub agents_dir: PathBuf,
    pub dispatch: bool,
    pub max_sessions: usize,
    pub until_done: bool,
    pub tmux: bool,
    pub flags: Layer,
    pub config: config::File,
    /// SIGTERM to SIGKILL.
    pub grace: Duration,
    /// How long a worker has to answer a shutdown request before it is stopped.
    pub shutdown_grace: Duration,
    /// The `inbox` binary named in prompts.
    pub inbox: String,
    pub host: String,
    pub connect: ConnectOptions,
}

/// How a bridge with `--until-done` ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finish {
    Done,
    Failed,
    Cancelled,
}

/// The longest a crash-looping task waits before its next session.
const BACKOFF_MAX: Duration = Duration::from_secs(60);
/// A session that ran this long before failing resets its task's crash count.
const HEALTHY_RUN: Duration = Duration::from_secs(60);

struct Pending {
    work: Work,
    not_before: Instant,
}

/// The bridge's state.
pub struct Bridge {
    o: Options,
    rpc: Rpc,
    launcher: String,
    running: HashMap<String, Handle>,
    pending: VecDeque<Pending>,
    crashes: HashMap<String, u32>,
    /// Agents asked to shut down, and when they are stopped if they do not answer.
    shutdowns: HashMap<String, Instant>,
    finished: Option<Finish>,
    /// The repository code tasks are dispatched in (the run's, else the project's).
    repo: Option<String>,
    ends_tx: mpsc::UnboundedSender<Report>,
    ends_rx: mpsc::UnboundedReceiver<Report>,
}

/// The bridge could not go on.
#[derive(Debug, thiserror::Error)]
pub enum BridgeError {
    #[error(transparent)]
    Client(#[from] ClientError),
}

impl Bridge {
    pub async fn new(o: Options) -> Result<Bridge, BridgeError> {
        let rpc = Rpc::connect(o.connect.clone()).await?;
        let launcher = format!("coord-launch:{}", o.run_id);
        let (ends_tx, ends_rx) = mpsc::unbounded_channel();
        Ok(Bridge {
            o,
            rpc,
            launcher,
            running: HashMap::new(),
            pending: VecDeque::new(),
            crashes: HashMap::new(),
            shutdowns: HashMap::new(),
            finished: None,
            repo: None,
            ends_tx,
            ends_rx,
        })
    }

    /// Follow the run until it finishes (with `until_done`) or forever.
    pub async fn run(mut self) -> Result<Option<Finish>, BridgeError> {
        let client = self.rpc.client().await?;
        let cursor = client.server_info().last_event_id;
        let mut events = subscribe_run(client, &self.o.run_id, cursor).await?;
        let mut control = subscribe_shutdowns(client, cursor).await?;
        self.reattach().await?;
        self.catch_up().await?;
        loop {
            self.start_what_fits().await;
            if self.o.until_done && self.finished.is_some() && self.running.is_empty() {
                return Ok(self.finished);
            }
            let next_start = self.next_start();
            let next_shutdown = self.shutdowns.values().min().copied();
            tokio::select! {
                ev = events.next() => self.on_event(ev.expect("a stream never ends")?).await?,
                ev = control.next() => self.on_shutdown_event(ev.expect("a stream never ends")?),
                Some(r) = self.ends_rx.recv() => self.on_end(r).await?,
                _ = sleep_until(next_start) => {}
                _ = sleep_until(next_shutdown) => self.shutdown_overdue(),
            }
        }
    }

    /// Sessions this launcher started on this host that are still recorded as running:
    /// re-attach to the live ones, mark the dead ones lost (failing their attempts).
    async fn reattach(&mut self) -> Result<(), BridgeError> {
        let q = SessionListParams {
            run_id: Some(self.o.run_id.clone()),
            launcher: Some(self.launcher.clone()),
            running_only: true,
            ..Default::default()
        };
        for s in self.rpc.session_list(q).await?.sessions {
            if s.host != self.o.host {
                continue;
            }
            let pid = s.pid as i32;
            let status = s.tmux_window.as_ref().map(|_| crate::tmux::status_file(&PathBuf::from(&s.log_path)));
            let waiter = if process::alive(pid) { process::attach(pid, status).ok() } else { None };
            match waiter {
                Some(waiter) => {
                    let log = PathBuf::from(&s.log_path);
                    let w = self.watch_of(&s.session_id, &s.task_id, &s.thread_id, &s.agent, pid, log, waiter);
                    let h = session::watch(w, self.ends_tx.clone());
                    self.running.insert(s.thread_id.clone(), h);
                    eprintln!("coord-launch: re-attached to {} (pid {pid})", s.task_id);
                }
                None => {
                    let p = SessionExitParams {
                        session_id: s.session_id.clone(),
                        state: Some(SessionState::Lost),
                        reason: Some("the session's process was gone when coord-launch restarted".into()),
                        log_tail: Some(process::log_tail(&PathBuf::from(&s.log_path), 20)),
                        fail_attempt: true,
                        ..Default::default()
                    };
                    self.rpc.session_exit(p).await?;
                    eprintln!("coord-launch: {} (pid {pid}) was gone: marked lost", s.task_id);
                }
            }
        }
        Ok(())
    }

    /// Live attempts with no session get one; with `--dispatch`, ready tasks are dispatched.
    async fn catch_up(&mut self) -> Result<(), BridgeError> {
        let view = self.rpc.run_show(&self.o.run_id).await?;
        self.note_run(view.run.status);
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
            let known =
                |thr: &str| self.running.contains_key(thr) || self.pending.iter().any(|p| p.work.thread_id == thr);
            if let Some(a) = live.filter(|a| !known(&a.thread_id)) {
                let work = work_of(t, a.attempt, &a.thread_id, &a.worker, a.worktree_path.clone());
                self.pending.push_back(Pending { work, not_before: Instant::now() });
            }
        }
        if self.o.dispatch && view.tasks.iter().any(|t| t.status == TaskStatus::Ready) {
            self.dispatch(None).await;
        }
        Ok(())
    }

    async fn dispatch(&mut self, task_id: Option<String>) {
        let p = DispatchParams {
            run_id: self.o.run_id.clone(),
            all_ready: task_id.is_none(),
            task_id,
            repo: self.repo.clone(),
            ..Default::default()
        };
        // The dispatches come back as `task.dispatched` events, which start the sessions.
        if let Err(e) = self.rpc.dispatch(p).await {
            eprintln!("coord-launch: dispatch failed: {e}");
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
                let work = work_of(&tv.task, d.attempt, &d.thread_id, &d.assigned_to, d.worktree_path);
                if self.running.contains_key(&d.thread_id) {
                    return Ok(());
                }
                let delay = self.backoff(&d.task_id);
                self.pending.retain(|p| p.work.task_id != d.task_id);
                self.pending.push_back(Pending { work, not_before: Instant::now() + delay });
            }
            EventType::ThreadCancelled => {
                self.pending.retain(|p| p.work.thread_id != ev.thread_id);
                let why = if ev.summary.contains("reassign") { StopWhy::Reassigned } else { StopWhy::Cancelled };
                if let Some(h) = self.running.get_mut(&ev.thread_id) {
                    h.stop(why);
                }
            }
            EventType::TaskReady if self.o.dispatch => self.dispatch(Some(ev.task_id.clone())).await,
            EventType::RunDone => self.note_run(RunStatus::Done),
            EventType::RunFailed => self.note_run(RunStatus::Failed),
            EventType::RunCancelled => self.note_run(RunStatus::Cancelled),
            EventType::RunResumed => self.note_run(RunStatus::Active),
            _ => {}
        }
        Ok(())
    }

    /// A shutdown request to an agent with a session starts its grace period; its approval
    /// stops the session at once, a rejection keeps it.
    fn on_shutdown_event(&mut self, ev: Event) {
        let Some(m) = &ev.message else { return };
        let agent_runs = |a: &str| self.running.values().any(|h| h.agent == a);
        match m.msg_type.as_deref() {
            Some("shutdown_request") if agent_runs(&m.to_agent) => {
                self.shutdowns.insert(m.to_agent.clone(), Instant::now() + self.o.shutdown_grace);
            }
            Some("shutdown_approved") if agent_runs(&m.from_agent) => {
                self.shutdowns.remove(&m.from_agent);
                self.stop_agent(&m.from_agent.clone());
            }
            Some("shutdown_rejected") => {
                self.shutdowns.remove(&m.from_agent);
            }
            _ => {}
        }
    }

    fn shutdown_overdue(&mut self) {
        let now = Instant::now();
        let due: Vec<String> = self.shutdowns.iter().filter(|(_, t)| **t <= now).map(|(a, _)| a.clone()).collect();
        for a in due {
            self.shutdowns.remove(&a);
            self.stop_agent(&a);
        }
    }

    fn stop_agent(&mut self, agent: &str) {
        for h in self.running.values_mut().filter(|h| h.agent == agent) {
            h.stop(StopWhy::Shutdown);
        }
    }

    /// How long a task waits before its next session ([`backoff_after`] its crashes).
    fn backoff(&self, task_id: &str) -> Duration {
        backoff_after(self.crashes.get(task_id).copied().unwrap_or(0))
    }

    fn next_start(&self) -> Option<Instant> {
        if self.running.len() >= self.o.max_sessions {
            return None;
        }
        self.pending.iter().map(|p| p.not_before).min().filter(|t| *t > Instant::now())
    }

    async fn start_what_fits(&mut self) {
        let now = Instant::now();
        while self.running.len() < self.o.max_sessions {
            let Some(i) = self.pending.iter().position(|p| p.not_before <= now) else { return };
            let p = self.pending.remove(i).expect("found");
            if let Err(e) = self.start(p.work.clone()).await {
                eprintln!("coord-launch: cannot start a session for {}: {e}", p.work.task_id);
            }
        }
    }

    async fn start(&mut self, w: Work) -> anyhow::Result<()> {
        let layer = self.o.config.resolve(&w.agent, w.role.as_deref(), &self.o.flags);
        let kind =
            layer.client.unwrap_or(if layer.command.is_some() { ClientKind::Command } else { ClientKind::Claude });
        let base = self.o.agents_dir.join("launch").join(&w.run_id);
        let cwd = match w.worktree.as_deref().map(PathBuf::from).filter(|p| p.is_dir()) {
            Some(p) => p,
            None => base.join("scratch").join(format!("{}-a{}", w.task_id, w.attempt)),
        };
        std::fs::create_dir_all(&cwd)?;
        let log = base.join("logs").join(format!("{}-a{}.log", w.task_id, w.attempt));
        let ctx = Context { db: &self.o.db, cwd: &cwd, inbox: &self.o.inbox };
        let spec = client::build(kind, &layer, &w, &ctx)?;
        let (pid, waiter, tmux_window) = if self.o.tmux {
            let (pid, waiter, window) = crate::tmux::spawn(&self.o.run_id, &w, &spec, &log)?;
            (pid, waiter, Some(window))
        } else {
            let (pid, waiter) = process::spawn(&spec, &log)?;
            (pid, waiter, None)
        };
        let p = SessionStartParams {
            run_id: w.run_id.clone(),
            task_id: w.task_id.clone(),
            thread_id: w.thread_id.clone(),
            client: kind.name().to_string(),
            pid: i64::from(pid),
            launcher: self.launcher.clone(),
            cwd: cwd.display().to_string(),
            log_path: log.display().to_string(),
            tmux_window,
            host: Some(self.o.host.clone()),
        };
        let s = match self.rpc.session_start(p).await {
            Ok(s) => s,
            Err(e) => {
                // Unrecorded, it would be invisible and unsupervised: stop it.
                let mut waiter = waiter;
                process::stop(pid, &w.thread_id, &mut waiter, self.o.grace).await;
                return Err(e.into());
            }
        };
        let mut watch = self.watch_of(&s.session_id, &w.task_id, &w.thread_id, &w.agent, pid, log, waiter);
        watch.wall_clock = layer.wall_clock_minutes.map(|m| Duration::from_secs_f64(m * 60.0));
        let h = session::watch(watch, self.ends_tx.clone());
        self.running.insert(w.thread_id.clone(), h);
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn watch_of(
        &self,
        session_id: &str,
        task_id: &str,
        thread_id: &str,
        agent: &str,
        pid: i32,
        log: PathBuf,
        waiter: process::Waiter,
    ) -> session::Watch {
        session::Watch {
            session_id: session_id.to_string(),
            task_id: task_id.to_string(),
            thread_id: thread_id.to_string(),
            agent: agent.to_string(),
            pid,
            log,
            waiter,
            wall_clock: None,
            grace: self.o.grace,
        }
    }

    /// A session ended: record it (failing its attempt if it left the thread open).
    async fn on_end(&mut self, r: Report) -> Result<(), BridgeError> {
        self.running.remove(&r.thread_id);
        let tail = process::log_tail(&r.log, 20);
        let fail = r.stopped.is_none_or(StopWhy::fails_attempt);
        let p = SessionExitParams {
            session_id: r.session_id.clone(),
            state: Some(if r.stopped.is_some() { SessionState::Stopped } else { SessionState::Exited }),
            exit_code: r.ended.code,
            signal: r.ended.signal,
            reason: r.stopped.map(|w| w.reason().to_string()),
            log_tail: Some(tail).filter(|t| !t.is_empty()),
            fail_attempt: fail,
        };
        let res = self.rpc.session_exit(p).await?;
        if res.failed_attempt {
            let n = if r.ran_for >= HEALTHY_RUN { 1 } else { self.crashes.get(&r.task_id).copied().unwrap_or(0) + 1 };
            self.crashes.insert(r.task_id.clone(), n);
            eprintln!("coord-launch: {} (pid {}) ended without done or fail: attempt failed", r.task_id, r.pid);
        } else if r.stopped.is_none() {
            self.crashes.remove(&r.task_id);
        }
        Ok(())
    }
}

fn work_of(t: &Task, attempt: u32, thread_id: &str, agent: &str, worktree: Option<String>) -> Work {
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
            EventType::ThreadCancelled,
            EventType::RunDone,
            EventType::RunFailed,
            EventType::RunCancelled,
            EventType::RunResumed,
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
fn backoff_after(crashes: u32) -> Duration {
    match crashes {
        0 => Duration::ZERO,
        n => Duration::from_secs(1u64 << (n - 1).min(6)).min(BACKOFF_MAX),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_crash_loop_backs_off_doubling_up_to_a_minute() {
        let pauses: Vec<u64> = (0..10).map(|n| backoff_after(n).as_secs()).collect();
        assert_eq!(pauses, [0, 1, 2, 4, 8, 16, 32, 60, 60, 60]);
    }
}
