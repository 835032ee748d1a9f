//! Records put together from the rows of several statements, the same way on both
//! backends: a thread's messages with their artifacts, tasks with their dependencies,
//! reservation counts from their groups, message events with their copies.

use std::collections::HashMap;

use coord_proto::types::{Artifact, Event, EventMail, Message, ReservationState, Task, TaskStatus};

use crate::error::Result;
use crate::store::repos::{Events, ReservationCounts, Tasks};

/// Give each message its artifacts (`artifacts` in their order, of any of the messages).
pub fn attach_artifacts(messages: &mut [Message], artifacts: Vec<Artifact>) {
    let mut by_message: HashMap<String, Vec<Artifact>> = HashMap::new();
    for a in artifacts {
        by_message.entry(a.message_id.clone()).or_default().push(a);
    }
    for m in messages {
        if let Some(a) = by_message.remove(&m.message_id) {
            m.artifacts = a;
        }
    }
}

/// Statuses as one text a statement can search (`,ready,failed,`; empty for any), so a
/// task-status filter is one parameter on both backends.
pub fn status_set(statuses: &[TaskStatus]) -> String {
    if statuses.is_empty() {
        return String::new();
    }
    let names: Vec<&str> = statuses.iter().map(|s| s.as_str()).collect();
    format!(",{},", names.join(","))
}

/// Fill in each task's dependencies.
pub fn with_deps(repo: &dyn Tasks, mut tasks: Vec<Task>) -> Result<Vec<Task>> {
    for t in &mut tasks {
        t.depends_on = repo.task_deps(&t.run_id, &t.task_id)?;
    }
    Ok(tasks)
}

/// Reservation counts from `(state, expired, count)` groups (an active reservation past its
/// expiry is stale).
pub fn reservation_counts(groups: Vec<(ReservationState, bool, u64)>) -> ReservationCounts {
    let mut c = ReservationCounts::default();
    for group in groups {
        match group {
            (ReservationState::Active, true, n) => c.stale += n,
            (ReservationState::Active, false, n) => c.active += n,
            (ReservationState::Released, _, n) => c.released += n,
            (ReservationState::Expired, _, n) => c.expired += n,
        }
    }
    c
}

/// Give each message event of `events` the copies its send gave (`mail`), as a live event
/// carries them, read for all of them at once. A message the store holds no copy of (one
/// sent to its own sender) gets none. Replays use it, and so does PostgreSQL's follower,
/// which publishes events it reads back from the store (another instance's, or its own
/// when the notification outruns the writer).
pub fn attach_mail(store: &dyn Events, events: &mut [Event]) -> Result<()> {
    let ids: Vec<i64> = events.iter().filter(|e| e.message.is_some()).map(|e| e.event_id).collect();
    if ids.is_empty() {
        return Ok(());
    }
    let mut copies = store.events_mail(&ids)?.into_iter().peekable();
    for e in events.iter_mut().filter(|e| e.message.is_some()) {
        let mut recipients = Vec::new();
        let mut of_it = None;
        while let Some((_, recipient, priority, expires_at)) = copies.next_if(|c| c.0 == e.event_id) {
            recipients.push(recipient);
            of_it = Some((priority, expires_at));
        }
        e.mail = of_it.map(|(priority, expires_at)| EventMail {
            recipients,
            priority,
            expires_at: expires_at.map(|t| t.to_string()),
        });
    }
    Ok(())
}
