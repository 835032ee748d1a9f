//! Records put together from the rows of several statements, the same way on both
//! backends: a thread's messages with their artifacts, tasks with their dependencies,
//! reservation counts from their groups.

use std::collections::HashMap;

use coord_proto::types::{Artifact, Message, ReservationState, Task, TaskStatus};

use crate::error::Result;
use crate::store::repos::{ReservationCounts, Tasks};

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
