//! `coordd check`: verify a database file without changing it, whether or not a daemon
//! serves it. SQLite's own `integrity_check` and `foreign_key_check`, then what the daemon
//! promises on top: event ids from 1 without a gap, every lease and every message on an
//! existing thread.

use std::path::Path;

use rusqlite::{Connection, OpenFlags};
use serde::Serialize;

use super::migrations;
use crate::error::{Error, Result};

/// What `coordd check` found.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Everything below holds.
    pub ok: bool,
    pub db: String,
    pub schema_version: i64,
    /// `PRAGMA integrity_check`: `["ok"]` or the problems it lists.
    pub integrity: Vec<String>,
    /// Rows `PRAGMA foreign_key_check` reports.
    pub foreign_key_violations: i64,
    pub events: EventIds,
    /// Leases whose thread does not exist.
    pub orphan_leases: i64,
    /// Messages whose thread does not exist.
    pub orphan_messages: i64,
}

/// The stored event ids.
#[derive(Debug, Clone, Serialize)]
pub struct EventIds {
    pub count: i64,
    pub first: Option<i64>,
    pub last: Option<i64>,
    /// Ids missing between the first and the last.
    pub gaps: i64,
}

/// Check the database at `path`. It is opened without `CREATE` and never written (a WAL
/// left by a crashed daemon is read as SQLite recovers it, in memory).
pub fn check(path: &Path) -> Result<Report> {
    if !path.is_file() {
        return Err(Error::Storage(format!("no database at {}", path.display())));
    }
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX)
        .or_else(|_| Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY))?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    conn.pragma_update(None, "query_only", "ON")?;
    let schema_version: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    let mut stmt = conn.prepare("PRAGMA integrity_check")?;
    let integrity: Vec<String> = stmt.query_map([], |r| r.get(0))?.collect::<Result<_, _>>()?;
    let foreign_key_violations = count(&conn, "SELECT COUNT(*) FROM pragma_foreign_key_check")?;
    let has_events = schema_version >= 1 && schema_version <= migrations::latest_version();
    let (events, orphan_leases, orphan_messages) = if has_events {
        let (n, first, last): (i64, Option<i64>, Option<i64>) =
            conn.query_row("SELECT COUNT(*), MIN(event_id), MAX(event_id) FROM events", [], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })?;
        let gaps = match (first, last) {
            (Some(f), Some(l)) => l - f + 1 - n,
            _ => 0,
        };
        let orphan_leases = count(
            &conn,
            "SELECT COUNT(*) FROM leases l WHERE NOT EXISTS (SELECT 1 FROM threads t WHERE t.thread_id = l.thread_id)",
        )?;
        let orphan_messages = count(
            &conn,
            "SELECT COUNT(*) FROM messages m WHERE NOT EXISTS (SELECT 1 FROM threads t WHERE t.thread_id = m.thread_id)",
        )?;
        (EventIds { count: n, first, last, gaps }, orphan_leases, orphan_messages)
    } else {
        (EventIds { count: 0, first: None, last: None, gaps: 0 }, 0, 0)
    };
    let ok = integrity == ["ok"]
        && foreign_key_violations == 0
        && events.gaps == 0
        && events.first.is_none_or(|f| f == 1)
        && orphan_leases == 0
        && orphan_messages == 0;
    Ok(Report {
        ok,
        db: path.display().to_string(),
        schema_version,
        integrity,
        foreign_key_violations,
        events,
        orphan_leases,
        orphan_messages,
    })
}

fn count(conn: &Connection, sql: &str) -> Result<i64> {
    Ok(conn.query_row(sql, [], |r| r.get(0))?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sound_database_passes_and_a_gap_in_the_events_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("coord.db");
        let mut conn = Connection::open(&path).unwrap();
        migrations::migrate(&mut conn).unwrap();
        let insert = "INSERT INTO events (run_id, task_id, thread_id, source, event_type, actor, summary, \
                      payload_json, created_at) VALUES ('', '', '', 'inbox', 'thread.created', 'a', 's', '{}', 'now')";
        for _ in 0..3 {
            conn.execute(insert, []).unwrap();
        }
        let r = check(&path).unwrap();
        assert!(r.ok, "{r:?}");
        assert_eq!((r.events.count, r.events.last), (3, Some(3)));
        conn.execute("DELETE FROM events WHERE event_id = 2", []).unwrap();
        let r = check(&path).unwrap();
        assert!(!r.ok);
        assert_eq!(r.events.gaps, 1);
    }
}
