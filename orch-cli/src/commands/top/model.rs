//! What `orch top` shows, kept apart from the terminal so it can be tested: the agents view,
//! the blocked questions of the active runs, and the newest events. An event says which
//! parts need reading again; nothing is read on a timer.

use std::collections::VecDeque;

use coord_proto::types::{AgentsView, BlockedTask, Event, LaunchSession, UsageReport};

/// Events kept for the "recent events" pane.
pub const RECENT: usize = 200;

#[derive(Default)]
pub struct Model {
    /// Only this run (`orch status --watch`), or every run.
    pub run: Option<String>,
    pub agents: Option<AgentsView>,
    /// Blocked tasks of the active runs, with their run id.
    pub blocked: Vec<(String, BlockedTask)>,
    /// Launched sessions: every running one, then the newest that ended.
    pub sessions: Vec<LaunchSession>,
    /// The usage of the runs those sessions belong to (`launch.usageShow`).
    pub usage: Vec<UsageReport>,
    /// Newest first.
    pub events: VecDeque<Event>,
    /// The newest event applied.
    pub cursor: i64,
    /// Set when the daemon connection ended.
    pub lost: Option<String>,
}

/// What an event makes stale.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Stale {
    pub agents: bool,
    pub blocked: bool,
    pub sessions: bool,
}

impl Stale {
    pub fn any(self) -> bool {
        self.agents || self.blocked || self.sessions
    }

    pub fn merge(&mut self, other: Stale) {
        self.agents |= other.agents;
        self.blocked |= other.blocked;
        self.sessions |= other.sessions;
    }
}

impl Model {
    pub fn new(run: Option<String>) -> Model {
        Model { run, ..Default::default() }
    }

    /// Whether an event concerns this view at all.
    pub fn wants(&self, e: &Event) -> bool {
        self.run.as_deref().is_none_or(|r| e.run_id == r || e.run_id.is_empty())
    }

    /// Record an event; say what to read again.
    pub fn apply(&mut self, e: Event) -> Stale {
        self.cursor = self.cursor.max(e.event_id);
        if !self.wants(&e) {
            return Stale::default();
        }
        let t = e.event_type.as_str();
        let stale = Stale {
            agents: ["mail.", "thread.", "message.", "lease.", "agent."].iter().any(|p| t.starts_with(p)),
            blocked: t.starts_with("task.") || t.starts_with("run."),
            sessions: t.starts_with("launch."),
        };
        // A running session's new lines show in its row; listed, they would crowd out the
        // events a lead acts on.
        if e.event_type != coord_proto::types::EventType::LaunchTail {
            self.events.push_front(e);
            self.events.truncate(RECENT);
        }
        stale
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coord_proto::types::EventType;

    fn event(id: i64, t: EventType, run: &str) -> Event {
        Event {
            event_id: id,
            event_type: t,
            source: "inbox".into(),
            run_id: run.into(),
            task_id: String::new(),
            thread_id: String::new(),
            actor: "a".into(),
            assigned_to: String::new(),
            created_by: String::new(),
            thread_status: None,
            task_status: None,
            message_id: None,
            summary: "s".into(),
            payload_json: serde_json::json!({}),
            created_at: "2026-01-01T00:00:00.000Z".into(),
            message: None,
            message_type: None,
            mail: None,
        }
    }

    #[test]
    fn mail_refreshes_agents_and_tasks_refresh_blocked() {
        let mut m = Model::new(None);
        assert_eq!(m.apply(event(1, EventType::MailDelivered, "")), Stale { agents: true, ..Stale::default() });
        assert_eq!(m.apply(event(2, EventType::TaskBlocked, "R1")), Stale { blocked: true, ..Stale::default() });
        assert_eq!(m.apply(event(3, EventType::LaunchExited, "R1")), Stale { sessions: true, ..Stale::default() });
        assert_eq!(m.cursor, 3);
        assert_eq!(m.events.front().unwrap().event_id, 3);
    }

    #[test]
    fn a_sessions_new_lines_refresh_its_row_and_stay_out_of_recent_events() {
        let mut m = Model::new(None);
        assert_eq!(m.apply(event(1, EventType::LaunchTail, "R1")), Stale { sessions: true, ..Stale::default() });
        assert!(m.events.is_empty());
    }

    #[test]
    fn a_watched_run_ignores_other_runs() {
        let mut m = Model::new(Some("R1".into()));
        assert!(!m.apply(event(5, EventType::TaskBlocked, "R2")).any());
        assert!(m.events.is_empty());
        assert_eq!(m.cursor, 5, "the cursor still moves");
    }
}
