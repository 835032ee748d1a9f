//! Session reuse (`--reuse-sessions`, `reuse_sessions = true` in launch.toml): when a live
//! session's attempt is done (or failed) and its agent's next task is ready where the
//! session can work (a thread task, or a task on the same worktree) with the same client
//! settings, the running session gets that task as a new `task` turn instead of a new
//! process starting from nothing.
//!
//! Records: each attempt keeps its own session record. The new attempt's session is
//! recorded first (`launch.sessionStart`, same `pid`, `cwd` and `log_path`, mode `live`),
//! then the finished attempt's session is ended (`exited`, no exit status, its reason
//! naming the attempt it was handed to). So at any time one running record names the
//! process, and `orch status` shows the chain. The process keeps the environment of its
//! first attempt (`COORD_SESSION`, `COORD_TASK`, `COORD_THREAD`): each `task` turn names
//! its own task and thread, which are the ones to work on. The same hand-over
//! ([`Bridge::hand_over`]) gives a parked session its task come back (parked.rs).

use coord_proto::types::*;

use crate::bridge::{Bridge, BridgeError, work_of};
use crate::client::{self, Work};
use crate::feed;
use crate::session::{Next, Place};

/// Can the session at `place` work on `w`: a thread task anywhere, a code task only on
/// the session's own worktree.
fn fits(place: &Place, w: &Work) -> bool {
    w.worktree.is_none() || w.worktree == place.worktree
}

impl Bridge {
    /// The live session on `thread` finished its attempt: hand it its agent's next ready
    /// attempt, if there is one it can take. False: nothing was handed.
    pub(crate) async fn reuse(&mut self, thread: &str) -> Result<bool, BridgeError> {
        // A session whose process ended (its last lines on their way to the log) takes nothing.
        let Some(place) = self.running.get(thread).filter(|h| !h.ended()).and_then(|h| h.place.clone()) else {
            return Ok(false);
        };
        if place.layer.reuse_sessions != Some(true) {
            return Ok(false);
        }
        let agent = self.running[thread].agent.clone();
        let Some(work) = self.next_for(&agent, &place).await? else { return Ok(false) };
        let text = client::prompt(&work, &self.o.inbox, true);
        self.hand_over(thread, work, text, "session reuse").await
    }

    /// Hand `work` to the running live session on `thread` (which has a [`Place`]) as a
    /// task turn saying `text`: the new attempt's session record is started, the current
    /// one ended as handed over (`why`: by what), and the session reports for the new
    /// attempt from then on. False: the attempt already has a session elsewhere (nothing
    /// was handed). True also when the process ended as it was handed the task (the new
    /// attempt's record is then lost, failing it).
    pub(crate) async fn hand_over(
        &mut self,
        thread: &str,
        work: Work,
        text: String,
        why: &str,
    ) -> Result<bool, BridgeError> {
        let Some((agent, place)) = self.running.get(thread).and_then(|h| Some((h.agent.clone(), h.place.clone()?)))
        else {
            return Ok(false);
        };
        let session_id = coord_client::ids::new_id("ses");
        let p = SessionStartParams {
            run_id: work.run_id.clone(),
            task_id: work.task_id.clone(),
            thread_id: work.thread_id.clone(),
            client: place.client.name().to_string(),
            pid: i64::from(place.pid),
            launcher: self.launcher.clone(),
            cwd: place.cwd.display().to_string(),
            log_path: place.log.display().to_string(),
            tmux_window: place.tmux_window.clone(),
            host: Some(self.o.host.clone()),
            session_id: Some(session_id.clone()),
            mode: Some(SessionMode::Live),
        };
        if let Err(e) = self.rpc.session_start(p).await {
            // Another bridge runs that attempt (or it ended meanwhile): nothing to hand.
            if e.code() != "session_running" {
                self.say.warn(&format!("cannot hand {} to a running session: {e}", work.task_id));
            }
            return Ok(false);
        }
        let label = format!("{} a{}", work.task_id, work.attempt);
        let ended = SessionExitParams {
            session_id: place.session_id.clone(),
            state: Some(SessionState::Exited),
            reason: Some(format!("handed over: the same process goes on with {label} ({why})")),
            ..Default::default()
        };
        self.record_end(ended).await?;
        let mut h = self.running.remove(thread).expect("looked up above");
        let turn = feed::task_turn(&work, text, feed::seed_of(&session_id));
        h.task_id = work.task_id.clone();
        h.parked = false;
        h.place = Some(Place { session_id: session_id.clone(), ..place.clone() });
        let next = Next { session_id: session_id.clone(), label: label.clone(), work: work.clone(), turn };
        if !h.hand(next) {
            // Its process ended as it was handed the task: the new attempt has no session.
            let lost = SessionExitParams {
                session_id,
                state: Some(SessionState::Lost),
                reason: Some("its reused process ended before it took the task".into()),
                fail_attempt: true,
                ..Default::default()
            };
            self.record_end(lost).await?;
            return Ok(true);
        }
        self.session_budget(&session_id, &place.layer).await;
        self.say.line(&format!("{label} handed to the running session of @{agent} (pid {}): a new turn", place.pid));
        self.running.insert(work.thread_id.clone(), h);
        Ok(true)
    }

    /// The agent's next attempt the session can take: one waiting to start, else (with
    /// `--dispatch`) a ready task assigned to the agent, dispatched now.
    async fn next_for(&mut self, agent: &str, place: &Place) -> Result<Option<Work>, BridgeError> {
        let now = tokio::time::Instant::now();
        let same = |b: &Bridge, w: &Work| {
            w.agent == agent
                && fits(place, w)
                && b.o.config.resolve(agent, w.role.as_deref(), &b.o.flags) == place.layer
        };
        if let Some(i) = self.pending.iter().position(|p| p.not_before <= now && same(self, &p.work)) {
            return Ok(self.pending.remove(i).map(|p| p.work));
        }
        if !self.o.dispatch || self.budgets.over {
            return Ok(None);
        }
        let view = self.rpc.run_show(&self.o.run_id).await?;
        for t in view.tasks.iter().filter(|t| t.status == TaskStatus::Ready && t.assign_to.as_deref() == Some(agent)) {
            let p = DispatchParams {
                run_id: self.o.run_id.clone(),
                task_id: Some(t.task_id.clone()),
                repo: self.repo.clone(),
                ..Default::default()
            };
            // Refused (another bridge or the lead dispatched it first): its event starts it.
            let Ok(r) = self.rpc.dispatch(p).await else { continue };
            for d in r.dispatches.into_iter().filter(|d| d.assigned_to == agent) {
                let w = work_of(t, d.attempt, &d.thread_id, &d.assigned_to, d.worktree_path);
                if same(self, &w) {
                    return Ok(Some(w));
                }
            }
        }
        Ok(None)
    }
}
