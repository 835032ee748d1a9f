//! Inserts held back and sent together: the PostgreSQL writer's multi-row inserts.
//!
//! A send writes four rows (its event, thread, message and mail copy), each its own round
//! trip to the server when sent at once. While a batch runs without savepoints (see
//! [`group_commit`](crate::store::group_commit)), the plain inserts of those tables are
//! instead kept here, column by column, and sent as one `INSERT … SELECT * FROM
//! unnest($1::text[], …)` per table: four statements per batch instead of four per send.
//!
//! They are sent (in the order their tables were first written, which is the order their
//! foreign keys need) before anything could see them or depend on them:
//! - before any other write statement (its foreign keys may name a held row);
//! - before any read whose text names one of the held tables (as a whole word);
//! - before the batch commits.
//!
//! A held row that fails (a key already taken) fails the statement that sent it; the
//! batch is then run again with a savepoint per job, and in that mode nothing is held: every
//! insert is sent at once, so that a job's failure is its own.

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

    /// The statement inserting every held row of the table (the same text whatever their
    /// number, so it is prepared once).
    pub fn sql(&self) -> String {
        insert_sql(self.table)
    }

    /// Its parameters: one array per column.
    pub fn params(&self) -> Vec<&(dyn ToSql + Sync)> {
        self.columns.iter().map(Column::param).collect()
    }
}

/// `INSERT INTO t (a, b) SELECT * FROM unnest($1::text[], $2::int8[])`.
pub fn insert_sql(t: &Table) -> String {
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
            format!("${}::{ty}", i + 1)
        })
        .collect();
    format!("INSERT INTO {} ({}) SELECT * FROM unnest({})", t.name, names.join(", "), arrays.join(", "))
}

/// The rows held back on one connection, per table in the order the tables were first
/// written.
#[derive(Default)]
pub struct Pending {
    tables: Vec<Rows>,
}

impl Pending {
    /// Nothing is held.
    pub fn is_empty(&self) -> bool {
        self.tables.is_empty()
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
        self.tables.iter().any(|r| names(sql, r.table.name))
    }

    /// Everything held, to send, in order (leaving nothing held).
    pub fn take(&mut self) -> Vec<Rows> {
        std::mem::take(&mut self.tables)
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
    fn rows_are_sent_table_by_table_in_the_order_first_written() {
        let mut p = Pending::default();
        p.add(&U, vec!["m1".into()]).unwrap();
        p.add(&T, vec!["w".into(), 1.into()]).unwrap();
        p.add(&U, vec!["m2".into()]).unwrap();
        let sent = p.take();
        assert!(p.is_empty());
        assert_eq!(sent.len(), 2);
        assert_eq!(sent[0].sql(), "INSERT INTO messages (message_id) SELECT * FROM unnest($1::text[])");
        assert_eq!(
            sent[1].sql(),
            "INSERT INTO mail (recipient, event_id) SELECT * FROM unnest($1::text[], $2::int8[])"
        );
        assert_eq!(sent[0].params().len(), 1);
    }

    #[test]
    fn a_row_of_the_wrong_shape_is_refused() {
        let mut p = Pending::default();
        assert!(p.add(&T, vec!["w".into()]).is_err());
        assert!(p.add(&T, vec![1.into(), "w".into()]).is_err());
        assert!(p.is_empty(), "nothing of a refused row is held");
    }
}
