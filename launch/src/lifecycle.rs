//! A session's life as the bridge sees it: started (its id chosen first, so its processes
//! carry it in `COORD_SESSION`) and recorded; re-attached after a bridge restart, or, when
//! its process is gone, marked lost and what it left behind cleaned up; ended and
//! recorded, failing its attempt when it left the thread open; and started afresh for an
//! attempt whose stopped worker's question the lead answered.

use std::path::PathBuf;
use std::time::Duration;

use coord_proto::types::*;
use tokio::time::Instant;

use crate::bridge::{Bridge, BridgeError, Pending, work_of};
use crate::client::{self, Context, Work};
use crate::config::ClientKind;
use crate::session::{self, Report, StopWhy};
use crate::{feed, gate, process};

/// A session that ran this long before failing resets its task's crash count.
const HEALTHY_RUN: Duration = Duration::from_secs(60);

impl Bridge {
    pub(crate) async fn start(&mut self, w: Work) -> anyhow::Result<()> {
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
        let session_id = coord_client::ids::new_id("ses");
        let reuse = layer.reuse_sessions == Some(true);
        let live = (layer.live == Some(true) || reuse) && feed_format(kind).is_some();
        let ctx = Context {
            db: &self.o.db,
            cwd: &cwd,
            inbox: &self.o.inbox,
            session_id: &session_id,
            me: &self.o.me,
            live,
            agents_dir: &self.o.agents_dir,
            socket: &self.o.connect.paths.socket,
        };
        let mut spec = client::build(kind, &layer, &w, &ctx)?;
        spec.secret = self.credentials.for_agent(&mut self.rpc, &w.agent, w.role.as_deref()).await?;
        if let (ClientKind::Codex | ClientKind::Command, false, Some(f)) = (kind, live, spec.filter.as_mut()) {
            // One-shot Codex and command: their raw output beside the log too.
            f.push(log.with_extension("jsonl").display().to_string());
        }
        if live {
            spec.stdin = Some(feed::make(&log, &session_id)?.fifo);
            // Readable lines in the log, the raw stream beside it.
            let raw = log.with_extension("jsonl");
            match kind {
                ClientKind::Codex => crate::codex_live::wrap(&mut spec, &self.o.me, &raw),
                ClientKind::Gemini => crate::gemini_live::wrap(&mut spec, &self.o.me, &self.o.inbox, &raw),
                ClientKind::Opencode => crate::opencode_live::wrap(&mut spec, &self.o.me, &raw),
                _ => {
                    let flag = if kind == ClientKind::Claude { "--claude-log" } else { "--command-log" };
                    spec.filter = Some(vec![self.o.me.clone(), flag.into(), raw.display().to_string()]);
                }
            }
        }
        let held = !self.o.tmux;
        let (pid, mut waiter, tmux_window) = if self.o.tmux {
            let (pid, waiter, window) = crate::tmux::spawn(&self.o.run_id, &w, &spec, &log, &self.bridge_log())?;
            (pid, waiter, Some(window))
        } else {
            gate::hold(&mut spec);
            let (pid, waiter) = process::spawn(&spec, &log)?;
            gate::until_held(pid).await?;
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
            tmux_window: tmux_window.clone(),
            host: Some(self.o.host.clone()),
            session_id: Some(session_id.clone()),
            mode: Some(if live { SessionMode::Live } else { SessionMode::OneShot }),
        };
        let p_window = tmux_window;
        let s = match self.rpc.session_start(p).await {
            Ok(s) => s,
            Err(e) if held => {
                // Unrecorded, it would be invisible and unsupervised: it goes, having run
                // nothing. Another bridge's session runs this attempt: that is expected when
                // several bridges follow a run, and nothing to report.
                gate::discard(pid, &mut waiter).await;
                return if e.code() == "session_running" { Ok(()) } else { Err(e.into()) };
            }
            Err(e) => {
                process::stop(pid, &session_id, &mut waiter, self.o.grace).await;
                return if e.code() == "session_running" { Ok(()) } else { Err(e.into()) };
            }
        };
        if held {
            gate::release(pid);
        }
        self.session_budget(&s.session_id, &layer).await;
        let label = format!("{} a{}", w.task_id, w.attempt);
        self.say.line(&format!("{label} started: {} @{}, pid {pid}, log {}", kind.name(), w.agent, log.display()));
        let mut watch = self.watch_of(&s, label, waiter, false);
        watch.wall_clock = layer.wall_clock_minutes.map(|m| Duration::from_secs_f64(m * 60.0));
        if live {
            let format = feed_format(kind).expect("live clients have a format");
            let mut writer = feed::Writer::open(&feed::fifo_of(&log), format, feed::seed_of(&session_id))?;
            // Subscribed before the task is written: what is sent to a worker that has
            // its task is fed to it.
            let events = self.feed_events(&w.agent).await?;
            writer.write(&feed::task_turn(&w, client::prompt(&w, &self.o.inbox, true), writer.seed)).await?;
            watch.live = Some(session::Live { writer, events, work: w.clone() });
        }
        let mut h = session::watch(watch, self.ends_tx.clone());
        if live {
            // What a new attempt handed to it repeats (reuse.rs, parked.rs).
            h.place = Some(session::Place {
                layer,
                client: kind,
                cwd,
                worktree: w.worktree.clone(),
                log,
                pid,
                tmux_window: p_window,
                session_id: s.session_id.clone(),
            });
        }
        self.running.insert(w.thread_id.clone(), h);
        Ok(())
    }

    fn watch_of(&self, s: &LaunchSession, label: String, waiter: process::Waiter, reattached: bool) -> session::Watch {
        session::Watch {
            session_id: s.session_id.clone(),
            // A re-attached process may have been reused: its processes carry its first
            // session's id.
            proc_session: if reattached { process::session_of(s.pid as i32) } else { None }
                .unwrap_or_else(|| s.session_id.clone()),
            task_id: s.task_id.clone(),
            thread_id: s.thread_id.clone(),
            label,
            agent: s.agent.clone(),
            pid: s.pid as i32,
            log: PathBuf::from(&s.log_path),
            waiter,
            wall_clock: None,
            grace: self.o.grace,
            output_wait: self.o.output_wait,
            reattached,
            live: None,
        }
    }

    /// What a live session of `agent` is fed: every message committed for it from now on.
    async fn feed_events(&mut self, agent: &str) -> Result<coord_client::EventStream, BridgeError> {
        let f = EventFilter { to: Some(agent.to_string()), ..Default::default() };
        Ok(self.rpc.client().await?.subscribe(f).await?)
    }

    /// A re-attached session that was live: its feed, opened again.
    async fn reopen_feed(&mut self, s: &LaunchSession) -> Option<session::Live> {
        let kind: ClientKind = s.client.parse().ok()?;
        let fifo = feed::fifo_of(&PathBuf::from(&s.log_path));
        let writer = feed::Writer::open(&fifo, feed_format(kind)?, feed::seed_of(&s.session_id)).ok()?;
        let events = self.feed_events(&s.agent).await.ok()?;
        let work = Work {
            run_id: s.run_id.clone(),
            task_id: s.task_id.clone(),
            attempt: s.attempt,
            thread_id: s.thread_id.clone(),
            agent: s.agent.clone(),
            title: String::new(),
            role: None,
            worktree: None,
        };
        Some(session::Live { writer, events, work })
    }

    /// Sessions this launcher started on this host that are still recorded as running:
    /// re-attach to the live ones; mark the dead ones lost (failing their attempts) and
    /// clean up what they left running, as a stop would have.
    pub(crate) async fn reattach(&mut self) -> Result<(), BridgeError> {
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
            let label = format!("{} a{}", s.task_id, s.attempt);
            let status = s.tmux_window.as_ref().map(|_| crate::tmux::status_file(&PathBuf::from(&s.log_path)));
            let waiter = if process::alive(pid) { process::attach(pid, status).ok() } else { None };
            match waiter {
                Some(waiter) => {
                    self.credentials.found(&s.agent, process::of_session(&s.session_id));
                    let mut watch = self.watch_of(&s, label.clone(), waiter, true);
                    watch.live = self.reopen_feed(&s).await;
                    let h = session::watch(watch, self.ends_tx.clone());
                    self.running.insert(s.thread_id.clone(), h);
                    self.say.line(&format!("re-attached to {label} (pid {pid})"));
                }
                None => {
                    process::clean_up(pid, &s.session_id).await;
                    let p = SessionExitParams {
                        session_id: s.session_id.clone(),
                        state: Some(SessionState::Lost),
                        reason: Some("the session's process was gone when coord-launch restarted".into()),
                        log_tail: Some(process::log_tail(&PathBuf::from(&s.log_path), 20)),
                        fail_attempt: true,
                        ..Default::default()
                    };
                    let Some(r) = self.record_end(p).await? else { continue };
                    let failed = if r.failed_attempt { "; attempt failed" } else { "" };
                    self.say
                        .line(&format!("{label} lost: pid {pid} was gone; what it left running is stopped{failed}"));
                }
            }
        }
        Ok(())
    }

    /// A session ended: record it (failing its attempt if it left the thread open), with
    /// its log's last lines. Its task sends the report once its output filter has written
    /// them (`session.rs`): nothing here waits for them.
    pub(crate) async fn on_end(&mut self, r: Report) -> Result<(), BridgeError> {
        self.running.remove(&r.thread_id);
        let unanswered = self.shutdowns.ended(&r.thread_id).filter(|_| r.stopped == Some(StopWhy::ShutdownUnanswered));
        let tail = process::log_tail(&r.log, 20);
        let fail = r.stopped.is_none_or(StopWhy::fails_attempt);
        let no_status = r.reattached && r.ended.code.is_none() && r.ended.signal.is_none();
        let reason = match (r.stopped, no_status) {
            (Some(why), _) => Some(self.budgets.reason(&r.session_id).unwrap_or_else(|| why.reason().to_string())),
            (None, true) => Some(NO_STATUS.to_string()),
            (None, false) => None,
        };
        let p = SessionExitParams {
            session_id: r.session_id.clone(),
            state: Some(if r.stopped.is_some() { SessionState::Stopped } else { SessionState::Exited }),
            exit_code: r.ended.code,
            signal: r.ended.signal,
            reason,
            log_tail: Some(tail).filter(|t| !t.is_empty()),
            fail_attempt: fail,
            shutdown_request_id: unanswered,
        };
        let Some(res) = self.record_end(p).await? else { return Ok(()) };
        let failed = if res.failed_attempt { "; ended without done or fail: attempt failed" } else { "" };
        self.say.line(&format!("{} ended: {}{failed}", r.label, res.session.how_it_ended()));
        if res.failed_attempt {
            let n = if r.ran_for >= HEALTHY_RUN { 1 } else { self.crashes.get(&r.task_id).copied().unwrap_or(0) + 1 };
            self.crashes.insert(r.task_id.clone(), n);
        } else if r.stopped.is_none() {
            self.crashes.remove(&r.task_id);
        }
        if matches!(r.stopped, Some(StopWhy::Shutdown | StopWhy::ShutdownUnanswered)) {
            // The lead may have answered the stopped worker while its session was ending.
            self.resume_if_answered(&r.task_id).await?;
        }
        Ok(())
    }

    /// Record a session's end. One already recorded (`session_ended`: someone else reported
    /// it) is said and passed over, never the end of the bridge.
    pub(crate) async fn record_end(&mut self, p: SessionExitParams) -> Result<Option<SessionExitResult>, BridgeError> {
        match self.rpc.session_exit(p).await {
            Ok(r) => Ok(Some(r)),
            Err(e) if e.code() == "session_ended" => {
                self.say.warn(&format!("{e}; passed over"));
                Ok(None)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// The task is in progress with a live attempt that has no running session: its worker
    /// was stopped (a shutdown blocked its task) and the lead answered, which resumes the
    /// task. A fresh session is started for the same attempt: it claims the thread again
    /// and finds the answer there, in the worktree its predecessor left.
    pub(crate) async fn resume_if_answered(&mut self, task_id: &str) -> Result<(), BridgeError> {
        let tv = self.rpc.task_show(&self.o.run_id, task_id).await?;
        if tv.task.status != TaskStatus::InProgress {
            return Ok(());
        }
        let Some(a) = tv.attempts.iter().rev().find(|a| a.status == AttemptStatus::Live) else { return Ok(()) };
        if self.known(&a.thread_id) || !self.launches_here(a) {
            return Ok(());
        }
        let q = SessionListParams {
            run_id: Some(self.o.run_id.clone()),
            task_id: Some(task_id.to_string()),
            running_only: true,
            ..Default::default()
        };
        if self.rpc.session_list(q).await?.sessions.iter().any(|s| s.thread_id == a.thread_id) {
            return Ok(());
        }
        self.say.line(&format!(
            "{task_id} a{} was answered after its worker was stopped: a fresh session goes on with it",
            a.attempt
        ));
        let work = work_of(&tv.task, a.attempt, &a.thread_id, &a.worker, a.worktree_path.clone());
        self.pending.push_back(Pending { work, not_before: Instant::now() });
        Ok(())
    }
}

/// How a client's live session takes its turns (`None`: the client has no live mode).
fn feed_format(kind: ClientKind) -> Option<feed::Format> {
    match kind {
        ClientKind::Command => Some(feed::Format::Lines),
        ClientKind::Claude => Some(feed::Format::ClaudeStream),
        // The driver (codex_live.rs) reads the JSON lines and writes them as app-server turns.
        ClientKind::Codex => Some(feed::Format::Lines),
        // The same for Gemini CLI's driver (gemini_live.rs): a `session/prompt` per turn.
        ClientKind::Gemini => Some(feed::Format::Lines),
        // The driver (opencode_live.rs) writes them as prompts into its `opencode serve`.
        ClientKind::Opencode => Some(feed::Format::Lines),
    }
}

/// Why a session re-attached after a restart has no exit status.
const NO_STATUS: &str =
    "re-attached after a bridge restart: its exit status belongs to its first bridge, which was gone";
