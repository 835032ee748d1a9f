//! Reading a project's SQLite database for `coordd migrate` (see `store::migrate`): every
//! table's columns and rows, migrated to the current schema first.

use std::path::Path;

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};

use super::migrations;
use crate::error::{Error, Result};
use crate::store::copy::{Cell, RowHash, transform};

/// The source database, open and migrated.
pub struct Source {
    conn: Connection,
}

fn cell(v: ValueRef<'_>) -> Cell {
    match v {
        ValueRef::Null => Cell::Null,
        ValueRef::Integer(i) => Cell::Int(i),
        ValueRef::Real(f) => Cell::Real(f),
        ValueRef::Text(t) => Cell::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Cell::Blob(b.to_vec()),
    }
}

impl Source {
    pub fn open(path: &Path) -> Result<Source> {
        if !path.is_file() {
            return Err(Error::invalid(format!("there is no SQLite database at {}", path.display())));
        }
        let mut conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_WRITE)?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        migrations::migrate(&mut conn)?;
        Ok(Source { conn })
    }

    /// A table's column names, in order.
    pub fn columns(&self, table: &str) -> Result<Vec<String>> {
        let mut stmt = self.conn.prepare(&format!("SELECT name FROM pragma_table_info('{table}') ORDER BY cid"))?;
        Ok(stmt.query_map([], |r| r.get(0))?.collect::<Result<_, _>>()?)
    }

    /// Every row of `table` (columns as given, in `order`), each cell through
    /// [`transform`] for `host`, handed to `f`.
    pub fn rows(
        &self,
        table: &str,
        columns: &[String],
        order: &str,
        host: &str,
        mut f: impl FnMut(Vec<Cell>) -> Result<()>,
    ) -> Result<()> {
        let sql = format!("SELECT {} FROM {table} ORDER BY {order}", columns.join(", "));
        let mut stmt = self.conn.prepare(&sql)?;
        let mut rows = stmt.query([])?;
        while let Some(r) = rows.next()? {
            let mut cells = Vec::with_capacity(columns.len());
            for (i, c) in columns.iter().enumerate() {
                cells.push(transform(table, c, cell(r.get_ref(i)?), host));
            }
            f(cells)?;
        }
        Ok(())
    }

    /// The verification hash of `table` over `columns` in primary-key order.
    pub fn hash(&self, table: &str, columns: &[String], key: &str, host: &str) -> Result<RowHash> {
        let mut h = RowHash::default();
        self.rows(table, columns, key, host, |cells| {
            h.row(&cells);
            Ok(())
        })?;
        Ok(h)
    }

    /// Whether `table` keeps a rowid (its insertion order), else its primary key orders it.
    pub fn has_rowid(&self, table: &str) -> bool {
        self.conn.prepare(&format!("SELECT rowid FROM {table} LIMIT 0")).is_ok()
    }
}
