//! Writing a SQLite history into PostgreSQL for `coordd migrate` (see `store::migrate`):
//! one transaction under the write lock, copied table by table, verified before `COMMIT`.

use postgres::types::{ToSql, Type};

use super::conn::{self, PgConn};
use super::migrations;
use crate::error::{Error, Result};
use crate::store::copy::{Cell, Report, RowHash, TABLES, TableReport};
use crate::store::sqlite::export::Source;

/// Columns of a PostgreSQL table, in order.
fn pg_columns(c: &mut PgConn, table: &str) -> Result<Vec<String>> {
    let rows = c.query_raw(
        "SELECT column_name::text FROM information_schema.columns \
         WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position",
        &[&table],
    )?;
    Ok(rows.iter().map(|r| r.get(0)).collect())
}

/// A cell as a parameter of the target column's type.
fn param(cell: &Cell, ty: &Type, table: &str, column: &str) -> Result<Box<dyn ToSql + Sync>> {
    let bad = || Error::Storage(format!("{table}.{column}: cannot store {cell:?} as {ty}"));
    Ok(match (ty, cell) {
        (&Type::TEXT, Cell::Null) => Box::new(None::<String>),
        (&Type::TEXT, Cell::Text(s)) => Box::new(Some(s.clone())),
        (&Type::TEXT, Cell::Int(i)) => Box::new(Some(i.to_string())),
        (&Type::INT8, Cell::Null) => Box::new(None::<i64>),
        (&Type::INT8, Cell::Int(i)) => Box::new(Some(*i)),
        (&Type::INT8, Cell::Text(s)) => Box::new(Some(s.parse::<i64>().map_err(|_| bad())?)),
        (&Type::BOOL, Cell::Null) => Box::new(None::<bool>),
        (&Type::BOOL, Cell::Int(i)) => Box::new(Some(*i != 0)),
        _ => return Err(bad()),
    })
}

/// A PostgreSQL cell as SQLite would give it (flags as 0/1).
fn pg_cell(row: &postgres::Row, i: usize) -> Result<Cell> {
    let err = |e: postgres::Error| Error::Storage(format!("reading back column {i}: {e}"));
    Ok(match *row.columns()[i].type_() {
        Type::INT8 => row.try_get::<_, Option<i64>>(i).map_err(err)?.map_or(Cell::Null, Cell::Int),
        Type::BOOL => row.try_get::<_, Option<bool>>(i).map_err(err)?.map_or(Cell::Null, |b| Cell::Int(b.into())),
        _ => row.try_get::<_, Option<String>>(i).map_err(err)?.map_or(Cell::Null, Cell::Text),
    })
}

fn pg_hash(c: &mut PgConn, table: &str, columns: &[String], key: &str) -> Result<RowHash> {
    let sql = format!("SELECT {} FROM {table} ORDER BY {key}", columns.join(", "));
    let mut h = RowHash::default();
    let mut rows = c.client().query_raw(sql.as_str(), std::iter::empty::<&(dyn ToSql + Sync)>())?;
    while let Some(row) = rows.next()? {
        let cells = (0..columns.len()).map(|i| pg_cell(&row, i)).collect::<Result<Vec<_>>>()?;
        h.row(&cells);
    }
    Ok(h)
}

/// Copy `src` into the database at `url` (or verify an earlier copy of it).
pub fn copy(src: &Source, url: &str, host: &str) -> Result<Report> {
    let mut c = PgConn::connect(&conn::config(url)?)?;
    migrations::migrate(&mut c)?;
    let write_key = conn::lock_key(&c.schema()?, "write");
    c.batch("BEGIN")?;
    let out = copy_in(&mut c, src, host, write_key);
    match out {
        Ok(r) => {
            c.batch("COMMIT")?;
            Ok(r)
        }
        Err(e) => {
            let _ = c.batch("ROLLBACK");
            Err(e)
        }
    }
}

fn copy_in(c: &mut PgConn, src: &Source, host: &str, write_key: i64) -> Result<Report> {
    // No daemon on this database writes while the copy runs.
    c.execute("SELECT pg_advisory_xact_lock($1)", &[&write_key])?;
    c.batch(
        "CREATE TABLE IF NOT EXISTS coordd_import (fingerprint TEXT NOT NULL, rows BIGINT NOT NULL, \
         finished_at TEXT NOT NULL)",
    )?;
    let mut plan = Vec::new();
    let mut whole = RowHash::default();
    for t in TABLES {
        let pg = pg_columns(c, t.name)?;
        let columns: Vec<String> = src.columns(t.name)?.into_iter().filter(|col| pg.contains(col)).collect();
        let h = src.hash(t.name, &columns, t.key, host)?;
        whole.row(&[Cell::Text(t.name.into()), Cell::Int(h.rows() as i64), Cell::Text(h.hex())]);
        plan.push((t, columns, h));
    }
    let fingerprint = whole.hex();
    let done = !c.query_raw("SELECT 1 FROM coordd_import WHERE fingerprint = $1", &[&fingerprint])?.is_empty();
    if !done {
        for (t, _, _) in &plan {
            let n: i64 = c.query_raw(&format!("SELECT COUNT(*)::bigint FROM {}", t.name), &[])?[0].get(0);
            if n > 0 {
                return Err(Error::invalid(format!(
                    "the target already holds coordd data ({n} row(s) in {}) that is not a copy of this project: \
                     migrate into an empty database or schema",
                    t.name
                )));
            }
        }
        for (t, columns, _) in &plan {
            insert_all(c, src, t.name, columns, host)?;
        }
        c.execute("UPDATE coordd_event_counter SET last = (SELECT COALESCE(MAX(event_id), 0) FROM events)", &[])?;
    }
    let mut tables = Vec::new();
    for (t, columns, h) in &plan {
        let got = pg_hash(c, t.name, columns, t.key)?;
        if got.rows() != h.rows() || got.hex() != h.hex() {
            return Err(Error::Storage(format!(
                "verification failed for {}: {} row(s) with hash {} in SQLite, {} with hash {} in PostgreSQL",
                t.name,
                h.rows(),
                h.hex(),
                got.rows(),
                got.hex()
            )));
        }
        tables.push(TableReport { table: t.name.to_string(), rows: h.rows(), hash: h.hex() });
    }
    let total: i64 = tables.iter().map(|t| t.rows as i64).sum();
    if !done {
        let now = crate::time::SystemClock::from_env();
        let at = crate::time::Clock::now(&now).to_string();
        c.execute_raw(
            "INSERT INTO coordd_import (fingerprint, rows, finished_at) VALUES ($1, $2, $3)",
            &[&fingerprint, &total, &at],
        )?;
    }
    let last: i64 = c.query_raw("SELECT last FROM coordd_event_counter", &[])?[0].get(0);
    Ok(Report { copied: !done, tables, last_event_id: last })
}

fn insert_all(c: &mut PgConn, src: &Source, table: &str, columns: &[String], host: &str) -> Result<()> {
    let marks: Vec<String> = (1..=columns.len()).map(|i| format!("${i}")).collect();
    let sql = format!("INSERT INTO {table} ({}) VALUES ({})", columns.join(", "), marks.join(", "));
    let stmt = c.client().prepare(&sql)?;
    let types = stmt.params().to_vec();
    // Insertion order is SQLite's own (rowid), so `seq` columns keep creation order.
    let order = if src.has_rowid(table) { "rowid".to_string() } else { "1".to_string() };
    src.rows(table, columns, &order, host, |cells| {
        let args = cells
            .iter()
            .zip(&types)
            .zip(columns)
            .map(|((cell, ty), col)| param(cell, ty, table, col))
            .collect::<Result<Vec<_>>>()?;
        let refs: Vec<&(dyn ToSql + Sync)> = args.iter().map(|b| b.as_ref()).collect();
        c.client().execute(&stmt, &refs)?;
        Ok(())
    })
}
