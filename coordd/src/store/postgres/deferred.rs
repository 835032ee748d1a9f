//! Writes held back and sent together: the PostgreSQL writer's multi-row statement.
//!
//! A send writes four rows (its event, thread, message and mail copy), each its own round
//! trip to the server when sent at once, and the batch advances the `last_seen_at` of
//! every agent that made a call. While a batch runs without savepoints (see
//! [`group_commit`](crate::store::group_commit)), the plain inserts of those four tables
//! are instead kept here, column by column, and so are the `last_seen_at` updates of
//! agents known to exist (see [`cache`](super::cache)); all of them are then sent as one
//! statement: an `INSERT … SELECT * FROM unnest($1::text[], …)` per table and one
//! `UPDATE agents … FROM unnest(…)`, joined as data-modifying `WITH` parts (PostgreSQL
//! checks the foreign keys between them at the end of the statement). One round trip per
//! batch instead of four per send and one per agent.
//!
//! They are sent (the inserts in the order their tables were first written, which is the
//! order their foreign keys need) before anything could see them or depend on them:
//! - before any other write statement (its foreign keys may name a held row);
//! - before any read whose text names one of the held tables (as a whole word);
//! - before the batch commits.
//!
//! A held row that fails (a key already taken) fails the statement that sent it; the
//! batch is then run again with a savepoint per job, and in that mode nothing is held: every
//! write is sent at once, so that a job's failure is its own.

use postgres::types::ToSql;

/// A column's SQL type, as its array is cast in the multi-row insert.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    Text,
    Int,
    Bool,
}

/// A table whose plain inserts may be held back: its name and its columns in order.
pub struct Table {
    pub name: &'static str,
    pub columns: &'static [(&'static str, Kind)],
}

use Kind::{Bool, Int, Text};

/// The tables of a send, whose plain inserts are held back.
pub static EVENTS: Table = Table {
    name: "events",
    columns: &[
        ("event_id", Int),
        ("run_id", Text),
        ("task_id", Text),
        ("thread_id", Text),
        ("source", Text),
        ("event_type", Text),
        ("message_id", Text),
        ("summary", Text),
        ("payload_json", Text),
        ("created_at", Text),
        ("actor", Text),
        ("assigned_to", Text),
        ("created_by", Text),
        ("thread_status", Text),
        ("message_kind", Text),
        ("task_status", Text),
        ("message_type", Text),
        ("message_to", Text),
    ],
};
pub static THREADS: Table = Table {
    name: "threads",
    columns: &[
        ("thread_id", Text),
        ("run_id", Text),
        ("task_id", Text),
        ("subject", Text),
        ("created_by", Text),
        ("assigned_to", Text),
        ("status", Text),
        ("priority", Text),
        ("prio_rank", Int),
        ("latest_message_id", Text),
        ("created_at", Text),
        ("updated_at", Text),
    ],
};
pub static MESSAGES: Table = Table {
    name: "messages",
    columns: &[
        ("message_id", Text),
        ("thread_id", Text),
        ("from_agent", Text),
        ("to_agent", Text),
        ("kind", Text),
        ("summary", Text),
        ("body", Text),
        ("payload_json", Text),
        ("created_at", Text),
        ("event_id", Int),
        ("category", Text),
        ("requires_ack", Bool),
        ("msg_type", Text),
    ],
};
pub static MAIL: Table = Table {
    name: "mail",
    columns: &[
        ("recipient", Text),
        ("event_id", Int),
        ("message_id", Text),
        ("state", Text),
        ("priority", Text),
        ("expires_at", Text),
    ],
};

/// One value of a held row, in its column's kind.
#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    Text(Option<String>),
    Int(Option<i64>),
    Bool(Option<bool>),
}

impl From<&str> for Val {
    fn from(v: &str) -> Val {
        Val::Text(Some(v.to_string()))
    }
}
impl From<&String> for Val {
    fn from(v: &String) -> Val {
        Val::Text(Some(v.clone()))
    }
}
impl From<String> for Val {
    fn from(v: String) -> Val {
        Val::Text(Some(v))
    }
}
impl From<Option<&str>> for Val {
    fn from(v: Option<&str>) -> Val {
        Val::Text(v.map(str::to_string))
    }
}
impl From<Option<String>> for Val {
    fn from(v: Option<String>) -> Val {
        Val::Text(v)
    }
}
impl From<&Option<String>> for Val {
    fn from(v: &Option<String>) -> Val {
        Val::Text(v.clone())
    }
}
impl From<i64> for Val {
    fn from(v: i64) -> Val {
        Val::Int(Some(v))
    }
}
impl From<bool> for Val {
    fn from(v: bool) -> Val {
        Val::Bool(Some(v))
    }
}

/// One column's held values.
enum Column {
    Text(Vec<Option<String>>),
    Int(Vec<Option<i64>>),
    Bool(Vec<Option<bool>>),
}

impl Column {
    fn new(kind: Kind) -> Column {
        match kind {
            Kind::Text => Column::Text(Vec::new()),
            Kind::Int => Column::Int(Vec::new()),
            Kind::Bool => Column::Bool(Vec::new()),
        }
    }

    /// Add a value of the column's kind (checked by the caller).
    fn push(&mut self, v: Val) {
        match (self, v) {
            (Column::Text(c), Val::Text(v)) => c.push(v),
            (Column::Int(c), Val::Int(v)) => c.push(v),
            (Column::Bool(c), Val::Bool(v)) => c.push(v),
            _ => {}
        }
    }

    fn param(&self) -> &(dyn ToSql + Sync) {
        match self {
            Column::Text(c) => c,
            Column::Int(c) => c,
            Column::Bool(c) => c,
        }
    }
}

/// The held rows of one table, column by column.
pub struct Rows {
    table: &'static Table,
    columns: Vec<Column>,
}

impl Rows {
    fn new(table: &'static Table) -> Rows {
        Rows { table, columns: table.columns.iter().map(|(_, k)| Column::new(*k)).collect() }
    }
}

/// `INSERT INTO t (a, b) SELECT * FROM unnest($1::text[], $2::int8[])`, its parameters
/// numbered from `first`.
pub fn insert_sql(t: &Table, first: usize) -> String {
    let names: Vec<&str> = t.columns.iter().map(|(n, _)| *n).collect();
    let arrays: Vec<String> = t
        .columns
        .iter()
        .enumerate()
        .map(|(i, (_, k))| {
            let ty = match k {
                Kind::Text => "text[]",
                Kind::Int => "int8[]",
                Kind::Bool => "bool[]",
            };
            format!("${}::{ty}", first + i)
        })
        .collect();
    format!("INSERT INTO {} ({}) SELECT * FROM unnest({})", t.name, names.join(", "), arrays.join(", "))
}

/// The rows held back on one connection, per table in the order the tables were first
/// written, and the `last_seen_at` updates held back.
#[derive(Default)]
pub struct Pending {
    tables: Vec<Rows>,
    touched: Touched,
}

/// Held `last_seen_at` updates: agent ids and times, one per agent (the latest).
#[derive(Default)]
pub struct Touched {
    ids: Vec<Option<String>>,
    at: Vec<Option<String>>,
}

/// The table the held updates write.
const AGENTS: &str = "agents";

impl Pending {
    /// Nothing is held.
    pub fn is_empty(&self) -> bool {
        self.tables.is_empty() && self.touched.ids.is_empty()
    }

    /// Hold an update of an existing agent's `last_seen_at` (a later one for the same agent
    /// replaces it, as it would have overwritten it).
    pub fn touch(&mut self, agent_id: &str, at: String) {
        let t = &mut self.touched;
        match t.ids.iter().position(|id| id.as_deref() == Some(agent_id)) {
            Some(i) => t.at[i] = Some(at),
            None => {
                t.ids.push(Some(agent_id.to_string()));
                t.at.push(Some(at));
            }
        }
    }

    /// Hold one row of `table` (its values in the table's column order).
    pub fn add(&mut self, table: &'static Table, row: Vec<Val>) -> Result<(), String> {
        if row.len() != table.columns.len() {
            return Err(format!("{} values for the {} columns of {}", row.len(), table.columns.len(), table.name));
        }
        let kind = |v: &Val| match v {
            Val::Text(_) => Kind::Text,
            Val::Int(_) => Kind::Int,
            Val::Bool(_) => Kind::Bool,
        };
        if let Some(((name, _), _)) = table.columns.iter().zip(&row).find(|((_, k), v)| kind(v) != *k) {
            return Err(format!("column {name} of {} holds another kind of value", table.name));
        }
        let i = match self.tables.iter().position(|r| std::ptr::eq(r.table, table)) {
            Some(i) => i,
            None => {
                self.tables.push(Rows::new(table));
                self.tables.len() - 1
            }
        };
        for (c, v) in self.tables[i].columns.iter_mut().zip(row) {
            c.push(v);
        }
        Ok(())
    }

    /// Whether `sql` names one of the held tables (as a whole word: `mail` but not
    /// `mail_id`). Naming one by mistake only costs an early send.
    pub fn named_in(&self, sql: &str) -> bool {
        self.tables.iter().any(|r| names(sql, r.table.name)) || (!self.touched.ids.is_empty() && names(sql, AGENTS))
    }

    /// Everything held, to send (leaving nothing held).
    pub fn take(&mut self) -> Held {
        Held { tables: std::mem::take(&mut self.tables), touched: std::mem::take(&mut self.touched) }
    }
}

/// Everything that was held, as one statement.
pub struct Held {
    tables: Vec<Rows>,
    touched: Touched,
}

impl Held {
    pub fn is_empty(&self) -> bool {
        self.tables.is_empty() && self.touched.ids.is_empty()
    }

    /// The statement writing it all: each table's insert, then the updates, as parts of
    /// one `WITH` (the same text whatever the number of rows, so it is prepared once per
    /// combination of tables).
    pub fn sql(&self) -> String {
        let mut parts = Vec::new();
        let mut next = 1;
        for rows in &self.tables {
            parts.push(insert_sql(rows.table, next));
            next += rows.table.columns.len();
        }
        if !self.touched.ids.is_empty() {
            parts.push(format!(
                "UPDATE {AGENTS} SET last_seen_at = v.at FROM unnest(${}::text[], ${}::text[]) AS v(id, at) \
                 WHERE {AGENTS}.agent_id = v.id",
                next,
                next + 1
            ));
        }
        let last = parts.pop().unwrap_or_default();
        if parts.is_empty() {
            return last;
        }
        let with: Vec<String> = parts.iter().enumerate().map(|(i, p)| format!("w{i} AS ({p})")).collect();
        format!("WITH {} {last}", with.join(", "))
    }

    /// Its parameters: one array per column of each table, then the updates' two.
    pub fn params(&self) -> Vec<&(dyn ToSql + Sync)> {
        let mut p: Vec<&(dyn ToSql + Sync)> =
            self.tables.iter().flat_map(|r| r.columns.iter().map(Column::param)).collect();
        if !self.touched.ids.is_empty() {
            p.push(&self.touched.ids);
            p.push(&self.touched.at);
        }
        p
    }
}

/// Whether `word` occurs in `sql` with no identifier character on either side.
fn names(sql: &str, word: &str) -> bool {
    let ident = |c: Option<u8>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_');
    let bytes = sql.as_bytes();
    sql.match_indices(word).any(|(i, _)| {
        let before = i.checked_sub(1).map(|j| bytes[j]);
        let after = bytes.get(i + word.len()).copied();
        !ident(before) && !ident(after)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    static T: Table = Table { name: "mail", columns: &[("recipient", Kind::Text), ("event_id", Kind::Int)] };
    static U: Table = Table { name: "messages", columns: &[("message_id", Kind::Text)] };

    #[test]
    fn a_held_table_is_named_only_as_a_whole_word() {
        let mut p = Pending::default();
        p.add(&T, vec!["w".into(), 1.into()]).unwrap();
        assert!(p.named_in("SELECT 1 FROM mail x WHERE x.recipient = $1"));
        assert!(p.named_in("SELECT 1 FROM\nmail"));
        assert!(!p.named_in("SELECT mail_id FROM agents"));
        assert!(!p.named_in("SELECT 1 FROM coordd_mail"));
        assert!(!p.named_in("SELECT 1 FROM messages"));
    }

    #[test]
    fn rows_are_sent_in_one_statement_table_by_table_in_the_order_first_written() {
        let mut p = Pending::default();
        p.add(&U, vec!["m1".into()]).unwrap();
        p.add(&T, vec!["w".into(), 1.into()]).unwrap();
        p.add(&U, vec!["m2".into()]).unwrap();
        let sent = p.take();
        assert!(p.is_empty());
        assert_eq!(
            sent.sql(),
            "WITH w0 AS (INSERT INTO messages (message_id) SELECT * FROM unnest($1::text[])) \
             INSERT INTO mail (recipient, event_id) SELECT * FROM unnest($2::text[], $3::int8[])"
        );
        assert_eq!(sent.params().len(), 3);
    }

    #[test]
    fn one_table_is_one_plain_insert() {
        let mut p = Pending::default();
        p.add(&U, vec!["m1".into()]).unwrap();
        assert_eq!(p.take().sql(), "INSERT INTO messages (message_id) SELECT * FROM unnest($1::text[])");
    }

    #[test]
    fn held_touches_keep_the_latest_time_per_agent_and_follow_the_inserts() {
        let mut p = Pending::default();
        p.touch("a", "t1".into());
        assert!(p.named_in("SELECT 1 FROM agents"), "a held touch names agents");
        p.add(&U, vec!["m1".into()]).unwrap();
        p.touch("b", "t2".into());
        p.touch("a", "t3".into());
        let sent = p.take();
        assert_eq!(sent.touched.ids, vec![Some("a".to_string()), Some("b".to_string())]);
        assert_eq!(sent.touched.at, vec![Some("t3".to_string()), Some("t2".to_string())]);
        assert_eq!(
            sent.sql(),
            "WITH w0 AS (INSERT INTO messages (message_id) SELECT * FROM unnest($1::text[])) \
             UPDATE agents SET last_seen_at = v.at FROM unnest($2::text[], $3::text[]) AS v(id, at) \
             WHERE agents.agent_id = v.id"
        );
        assert_eq!(sent.params().len(), 3);
    }

    #[test]
    fn a_row_of_the_wrong_shape_is_refused() {
        let mut p = Pending::default();
        assert!(p.add(&T, vec!["w".into()]).is_err());
        assert!(p.add(&T, vec![1.into(), "w".into()]).is_err());
        assert!(p.is_empty(), "nothing of a refused row is held");
    }
}
