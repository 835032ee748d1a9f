//! What both sides of `coordd migrate` share (see `store::migrate`): the tables to copy,
//! a cell as either backend gives it, the row hash both sides verify with, and the report.

/// One value of a row, as both backends can give it.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Blob(Vec<u8>),
}

/// A table to copy: its name and primary key (the verification order). Parents come
/// before children (foreign keys).
pub struct Table {
    pub name: &'static str,
    pub key: &'static str,
}

pub const TABLES: &[Table] = &[
    Table { name: "threads", key: "thread_id" },
    Table { name: "messages", key: "message_id" },
    Table { name: "artifacts", key: "artifact_id" },
    Table { name: "leases", key: "thread_id" },
    Table { name: "events", key: "event_id" },
    Table { name: "reads", key: "agent_id, thread_id" },
    Table { name: "runs", key: "run_id" },
    Table { name: "tasks", key: "run_id, task_id" },
    Table { name: "task_deps", key: "run_id, task_id, depends_on" },
    Table { name: "attempts", key: "run_id, task_id, attempt" },
    Table { name: "councils", key: "run_id, council_id" },
    Table { name: "council_members", key: "run_id, council_id, reviewer" },
    Table { name: "settings", key: "key" },
    Table { name: "agents", key: "agent_id" },
    Table { name: "agent_credentials", key: "agent_id" },
    Table { name: "mail", key: "recipient, event_id" },
    Table { name: "reservations", key: "reservation_id" },
    Table { name: "peers", key: "task_id, peer_task_id" },
    Table { name: "requests", key: "request_id" },
    Table { name: "launch_sessions", key: "session_id" },
    Table { name: "merge_queue", key: "run_id, task_id, attempt" },
    Table { name: "review_comments", key: "comment_id" },
    Table { name: "launch_usage", key: "session_id" },
    Table { name: "run_budgets", key: "run_id" },
];

/// What was copied (or found already copied) and verified, per table.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Report {
    /// False when the target already held this exact copy (it was verified again).
    pub copied: bool,
    pub tables: Vec<TableReport>,
    pub last_event_id: i64,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct TableReport {
    pub table: String,
    pub rows: u64,
    pub hash: String,
}

/// A running hash of rows (FNV-1a over a tagged encoding of each cell).
#[derive(Debug, Clone, Copy)]
pub struct RowHash(u64, u64);

impl Default for RowHash {
    fn default() -> Self {
        RowHash(0xcbf2_9ce4_8422_2325, 0)
    }
}

impl RowHash {
    fn eat(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
        }
    }

    pub fn row(&mut self, cells: &[Cell]) {
        for c in cells {
            match c {
                Cell::Null => self.eat(b"N"),
                Cell::Int(i) => {
                    self.eat(b"I");
                    self.eat(&i.to_le_bytes());
                }
                Cell::Real(f) => {
                    self.eat(b"R");
                    self.eat(&f.to_le_bytes());
                }
                Cell::Text(s) => {
                    self.eat(b"T");
                    self.eat(&(s.len() as u64).to_le_bytes());
                    self.eat(s.as_bytes());
                }
                Cell::Blob(b) => {
                    self.eat(b"B");
                    self.eat(&(b.len() as u64).to_le_bytes());
                    self.eat(b);
                }
            }
        }
        self.1 += 1;
    }

    pub fn rows(&self) -> u64 {
        self.1
    }

    pub fn hex(&self) -> String {
        format!("{:016x}", self.0)
    }
}

/// The value a copied cell gets: attempts without a host get this one's.
pub fn transform(table: &str, column: &str, cell: Cell, host: &str) -> Cell {
    match (table, column, cell) {
        ("attempts", "host", Cell::Null) => Cell::Text(host.to_string()),
        (_, _, c) => c,
    }
}
