//! Live sessions that wait for their merge (issue 36). When a live session's attempt is
//! done while its task waits in the run's merge queue (an auto-merge run: the queue settles
//! it by itself), and the session was not handed its agent's next task (reuse.rs), it is
//! *parked*: kept open rather than closed. If the task comes back to the same worker
//! (`task.dispatched`, mode `returned`: a failed verify, a merge conflict, requested
//! changes), the new attempt is handed to that session as session reuse hands a task
//! ([`Bridge::hand_over`]: a session record of its own, the previous one ended as handed
//! over), and its next turn is the failure and the new attempt's prompt: the worker goes
//! on in the same conversation. A merge, the task's failure or cancel, or the run's end
//! closes it.

use coord_proto::types::*;

use crate::bridge::{Bridge, BridgeError};
use crate::client::{self, Work};
use crate::session::StopWhy;

impl Bridge {
    /// A live session's thread is done (or failed): hand the session its agent's next
    /// task, else park it if its task waits in an auto-merge run's queue, else close its
    /// input.
    pub(crate) async fn live_thread_done(&mut self, ev: &Event) -> Result<(), BridgeError> {
        if !self.running.get(&ev.thread_id).is_some_and(|h| h.live) || self.reuse(&ev.thread_id).await? {
            return Ok(());
        }
        let parkable = self.running.get(&ev.thread_id).is_some_and(|h| h.place.is_some());
        let waits = parkable && ev.event_type == EventType::ThreadDone && !ev.task_id.is_empty() && {
            let tv = self.rpc.task_show(&self.o.run_id, &ev.task_id).await?;
            tv.task.merge_state == Some(MergeState::Pending) && self.rpc.run_show(&self.o.run_id).await?.run.auto_merge
        };
        let Some(h) = self.running.get_mut(&ev.thread_id) else { return Ok(()) };
        if waits {
            h.parked = true;
            self.say.line(&format!("{} waits for its merge; its live session stays open", ev.task_id));
        } else {
            h.stop(StopWhy::Finished);
        }
        Ok(())
    }

    /// A returned attempt for a worker whose live session is parked: hand it over (true),
    /// so no new session starts; else (false) the parked session is closed.
    pub(crate) async fn adopt_returned(&mut self, ev: &Event, d: &Dispatch, work: &Work) -> Result<bool, BridgeError> {
        if ev.payload_json["mode"] != "returned" {
            return Ok(false);
        }
        let parked = self
            .running
            .iter()
            .find(|(_, h)| h.parked && !h.ended() && h.task_id == d.task_id && h.agent == d.assigned_to);
        let Some(old) = parked.map(|(t, _)| t.clone()) else { return Ok(false) };
        let feedback = ev.payload_json["feedback"].as_str().unwrap_or_default();
        let wt = d
            .worktree_path
            .as_deref()
            .map(|p| {
                format!(" Work in its new worktree, {p} (`cd` there in each command): it continues from your branch.")
            })
            .unwrap_or_default();
        let text = format!(
            "Task {} came back to you (attempt {}):\n\n{feedback}\n\n{wt}\n\n{}",
            d.task_id,
            d.attempt,
            client::prompt(work, &self.o.inbox, true)
        );
        let handed = self.hand_over(&old, work.clone(), text, "its task came back").await?;
        if !handed && let Some(h) = self.running.get_mut(&old) {
            // The attempt runs elsewhere: nothing is left to wait for.
            h.stop(StopWhy::Finished);
        }
        Ok(handed)
    }

    /// Close the parked sessions of `task` (every task's: `None`): their merge is settled.
    pub(crate) fn end_parked(&mut self, task: Option<&str>) {
        for h in self.running.values_mut().filter(|h| h.parked && task.is_none_or(|t| t == h.task_id)) {
            h.stop(StopWhy::Finished);
        }
    }
}
