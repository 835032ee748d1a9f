//! Shutdown requests to the workers of the bridge's sessions. A request names an agent
//! and, usually, the task whose session it stops (the run and task of the thread the agent
//! holds, or `--run`/`--task`): only the sessions of that agent for that task are its
//! targets (any session of the agent when it names no task). Its approval stops them at
//! once, a rejection keeps them, and when no answer comes within the shutdown grace they
//! are stopped anyway, and their end tells the daemon which request went unanswered
//! (`launch.sessionExit`'s `shutdown_request_id`).

use std::collections::HashMap;
use std::time::Duration;

use coord_proto::types::{Event, payload_request_id};
use tokio::time::Instant;

use crate::session::{Handle, StopWhy};

/// A request with sessions to stop, waiting for its answer.
struct Asked {
    /// The threads of its target sessions.
    threads: Vec<String>,
    deadline: Instant,
}

/// The open shutdown requests aimed at the bridge's sessions.
#[derive(Default)]
pub struct Shutdowns {
    asked: HashMap<String, Asked>,
    /// Sessions stopped because a request went unanswered: thread → request id.
    unanswered: HashMap<String, String>,
}

/// The sessions (by thread) of `agent` for `task` (any task when empty) in run `run` (the
/// bridge's own when empty).
fn targets(running: &HashMap<String, Handle>, our_run: &str, run: &str, agent: &str, task: &str) -> Vec<String> {
    if !run.is_empty() && run != our_run {
        return Vec::new();
    }
    running
        .iter()
        .filter(|(_, h)| h.agent == agent && (task.is_empty() || h.task_id == task))
        .map(|(thread, _)| thread.clone())
        .collect()
}

impl Shutdowns {
    /// A shutdown request, approval or rejection: the sessions to stop now, and why.
    pub fn on_event(
        &mut self,
        ev: &Event,
        our_run: &str,
        running: &HashMap<String, Handle>,
        grace: Duration,
    ) -> Vec<(String, StopWhy)> {
        let Some(m) = &ev.message else { return Vec::new() };
        let request_id = payload_request_id(&m.payload_json).map(str::to_string);
        match m.msg_type.as_deref() {
            Some("shutdown_request") => {
                let threads = targets(running, our_run, &ev.run_id, &m.to_agent, &ev.task_id);
                if !threads.is_empty() {
                    let id = request_id.unwrap_or_else(|| m.message_id.clone());
                    self.asked.insert(id, Asked { threads, deadline: Instant::now() + grace });
                }
                Vec::new()
            }
            Some("shutdown_approved") => {
                let threads = match request_id.and_then(|id| self.asked.remove(&id)) {
                    Some(a) => a.threads,
                    None => targets(running, our_run, &ev.run_id, &m.from_agent, &ev.task_id),
                };
                threads.into_iter().map(|t| (t, StopWhy::Shutdown)).collect()
            }
            Some("shutdown_rejected") => {
                if let Some(id) = request_id {
                    self.asked.remove(&id);
                }
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    /// When the next unanswered request's grace ends.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.asked.values().map(|a| a.deadline).min()
    }

    /// The sessions of requests whose grace has ended unanswered: stop them.
    pub fn overdue(&mut self) -> Vec<(String, StopWhy)> {
        let now = Instant::now();
        let due: Vec<String> = self.asked.iter().filter(|(_, a)| a.deadline <= now).map(|(id, _)| id.clone()).collect();
        let mut stop = Vec::new();
        for id in due {
            let Some(a) = self.asked.remove(&id) else { continue };
            for t in a.threads {
                self.unanswered.insert(t.clone(), id.clone());
                stop.push((t, StopWhy::ShutdownUnanswered));
            }
        }
        stop
    }

    /// A session ended: it is no request's target any more. Returns the request it was
    /// stopped for going unanswered, if it was.
    pub fn ended(&mut self, thread: &str) -> Option<String> {
        for a in self.asked.values_mut() {
            a.threads.retain(|t| t != thread);
        }
        self.asked.retain(|_, a| !a.threads.is_empty());
        self.unanswered.remove(thread)
    }
}
