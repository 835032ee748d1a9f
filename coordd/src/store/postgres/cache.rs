//! What the writer's transaction has read of the two small tables nearly every write
//! consults, kept for the rest of that transaction: the settings (the strict-agents and
//! credentials switches) and the agent rows (a send's recipient, each agent whose
//! `last_seen_at` a batch advances). Without it, every send of a batch read both again,
//! one round trip each.
//!
//! What the cache holds is what a read would return:
//! - the writer holds the database-wide write lock from its first statement to `COMMIT`,
//!   so no other instance writes these tables meanwhile;
//! - this transaction's own writes of them go through the cache (`PgConn` updates it once
//!   the statement succeeded);
//! - it is emptied when a transaction begins, and when one is rolled back (to a savepoint
//!   or whole), since what it held may be undone.
//!
//! Both are read with the `BEGIN` round trip (as text, see [`TextRow`]): the settings
//! whole, and the agents whole when there are at most [`SMALL`] of them (a team's agents,
//! and the names its messages were sent to); a larger table is read row by row as asked,
//! each row kept. After a rollback to a savepoint they are read again when asked.

use std::collections::HashMap;

use coord_proto::types::Agent;

use crate::error::{Error, Result};
use crate::store::rows::RowRead;

/// The most agent rows read whole.
pub const SMALL: i64 = 256;

/// The cached rows of one write transaction (`None` outside one: nothing is cached).
#[derive(Default)]
pub struct Cache {
    /// Every setting, when read.
    settings: Option<HashMap<String, String>>,
    /// Agent rows read (or written), by id; `None`: known not to exist.
    agents: HashMap<String, Option<Agent>>,
    /// `agents` holds every row: an id it lacks does not exist.
    agents_whole: bool,
    /// The table had more than [`SMALL`] rows: read row by row.
    agents_large: bool,
}

/// What the cache says of an agent.
pub enum Known {
    /// The row (or its absence) is known.
    Yes(Option<Agent>),
    /// Not known; reading the whole table is worth it (once per transaction).
    ReadAll,
    /// Not known; read this row.
    ReadOne,
}

impl Cache {
    /// Forget everything (a transaction begins or is rolled back).
    pub fn clear(&mut self) {
        *self = Cache::default();
    }

    /// A setting's value, if the settings were read.
    pub fn setting(&self, key: &str) -> Option<Option<String>> {
        self.settings.as_ref().map(|s| s.get(key).cloned())
    }

    /// Every setting, as just read.
    pub fn settings_read(&mut self, rows: HashMap<String, String>) {
        self.settings = Some(rows);
    }

    /// A setting written by this transaction.
    pub fn setting_written(&mut self, key: &str, value: &str) {
        if let Some(s) = &mut self.settings {
            s.insert(key.to_string(), value.to_string());
        }
    }

    pub fn agent(&self, agent_id: &str) -> Known {
        if let Some(a) = self.agents.get(agent_id) {
            return Known::Yes(a.clone());
        }
        if self.agents_whole {
            Known::Yes(None)
        } else if self.agents_large {
            Known::ReadOne
        } else {
            Known::ReadAll
        }
    }

    /// The whole table as just read, or its first rows (`whole` false: it has more than
    /// [`SMALL`], which are then read one by one).
    pub fn agents_read(&mut self, rows: Vec<Agent>, whole: bool) {
        for a in rows {
            self.agents.insert(a.agent_id.clone(), Some(a));
        }
        self.agents_whole = whole;
        self.agents_large = !whole;
    }

    /// One agent row (or its absence) as just read.
    pub fn agent_read(&mut self, agent_id: &str, a: Option<Agent>) {
        self.agents.insert(agent_id.to_string(), a);
    }

    /// An agent inserted by this transaction.
    pub fn agent_inserted(&mut self, a: &Agent) {
        self.agents.insert(a.agent_id.clone(), Some(a.clone()));
    }

    /// An agent's fields written back (all but `created_at`, which `agent_save` keeps).
    pub fn agent_saved(&mut self, a: &Agent) {
        // Known absent, the save changed nothing; not read, it is read when asked.
        if let Some(Some(row)) = self.agents.get_mut(&a.agent_id) {
            let created_at = std::mem::take(&mut row.created_at);
            *row = Agent { created_at, ..a.clone() };
        }
    }

    /// An agent's `last_seen_at` advanced (if the row is known).
    pub fn agent_touched(&mut self, agent_id: &str, at: &str) {
        if let Some(Some(row)) = self.agents.get_mut(agent_id) {
            row.last_seen_at = Some(at.to_string());
        }
    }
}

/// A row of a statement run without parameters: every value as PostgreSQL's text output.
pub struct TextRow(pub Vec<Option<String>>);

impl TextRow {
    fn get(&self, i: usize) -> Result<Option<&str>> {
        self.0.get(i).map(Option::as_deref).ok_or_else(|| Error::Storage(format!("column {i}: no such column")))
    }

    fn parsed<T: std::str::FromStr>(&self, i: usize) -> Result<Option<T>> {
        self.get(i)?
            .map(|v| v.parse::<T>().map_err(|_| Error::Storage(format!("column {i}: '{v}' is not a number"))))
            .transpose()
    }
}

fn null(i: usize) -> Error {
    Error::Storage(format!("column {i}: unexpected NULL"))
}

impl RowRead for TextRow {
    fn s(&self, i: usize) -> Result<String> {
        self.os(i)?.ok_or_else(|| null(i))
    }
    fn os(&self, i: usize) -> Result<Option<String>> {
        Ok(self.get(i)?.map(str::to_string))
    }
    fn i(&self, i: usize) -> Result<i64> {
        self.oi(i)?.ok_or_else(|| null(i))
    }
    fn oi(&self, i: usize) -> Result<Option<i64>> {
        self.parsed(i)
    }
    fn b(&self, i: usize) -> Result<bool> {
        match self.get(i)? {
            Some("t") => Ok(true),
            Some("f") => Ok(false),
            Some(v) => Err(Error::Storage(format!("column {i}: '{v}' is not a boolean"))),
            None => Err(null(i)),
        }
    }
    fn f(&self, i: usize) -> Result<f64> {
        self.parsed(i)?.ok_or_else(|| null(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coord_proto::types::AgentStatus;

    fn text(values: &[Option<&str>]) -> TextRow {
        TextRow(values.iter().map(|v| v.map(str::to_string)).collect())
    }

    /// An unregistered agent, as the writer reads it with `BEGIN`.
    fn agent(id: &str) -> Agent {
        let created = "2026-01-01T00:00:00.000000Z";
        crate::store::rows::agent(&text(&[
            Some(id),
            Some(""),
            Some(""),
            Some("idle"),
            Some("f"),
            Some(created),
            None,
            Some("1"),
        ]))
        .unwrap()
    }

    #[test]
    fn a_table_read_whole_answers_for_absent_agents_and_a_large_one_does_not() {
        let mut c = Cache::default();
        assert!(matches!(c.agent("a"), Known::ReadAll));
        c.agents_read(vec![agent("a")], true);
        assert!(matches!(c.agent("a"), Known::Yes(Some(_))));
        assert!(matches!(c.agent("b"), Known::Yes(None)));
        c.clear();
        c.agents_read(vec![agent("a")], false);
        assert!(matches!(c.agent("a"), Known::Yes(Some(_))));
        assert!(matches!(c.agent("b"), Known::ReadOne));
        c.agent_read("b", None);
        assert!(matches!(c.agent("b"), Known::Yes(None)));
    }

    #[test]
    fn an_agent_reads_from_text_as_from_a_typed_row() {
        let row = text(&[Some("w"), Some(""), Some("dev"), Some("busy"), Some("t"), Some("c"), None, Some("3")]);
        let a = crate::store::rows::agent(&row).unwrap();
        assert_eq!((a.registered, a.last_seen_at, a.version, a.status), (true, None, 3, AgentStatus::Busy));
        let bad = text(&[Some("w"), Some(""), Some(""), Some("idle"), Some("yes"), Some("c"), None, Some("1")]);
        assert!(crate::store::rows::agent(&bad).is_err(), "a boolean is t or f");
    }

    #[test]
    fn writes_go_through_and_a_save_keeps_created_at() {
        let mut c = Cache::default();
        c.agents_read(vec![agent("a")], true);
        let mut a = Agent { registered: true, created_at: String::new(), ..agent("a") };
        a.version = 2;
        c.agent_saved(&a);
        c.agent_touched("a", "t");
        let Known::Yes(Some(row)) = c.agent("a") else { panic!("a is known") };
        assert!(row.registered && row.version == 2);
        assert_eq!(row.created_at, "2026-01-01T00:00:00.000000Z");
        assert_eq!(row.last_seen_at.as_deref(), Some("t"));
        c.agent_inserted(&agent("b"));
        assert!(matches!(c.agent("b"), Known::Yes(Some(_))));
        assert_eq!(c.setting("k"), None, "settings not read: not known");
        c.settings_read(HashMap::new());
        assert_eq!(c.setting("k"), Some(None));
        c.setting_written("k", "v");
        assert_eq!(c.setting("k"), Some(Some("v".into())));
    }
}
