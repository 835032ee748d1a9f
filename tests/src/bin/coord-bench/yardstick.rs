//! The yardstick for SQLite sends: what the disk allows one SQLite writer doing the least a
//! durable write can do. Python's `sqlite3` (any Python 3 has it) commits one single-row
//! insert per transaction, in a WAL database with `synchronous=NORMAL` (the daemon's
//! writer's settings) in the project's directory, so on the same disk, for a few seconds.

use std::path::Path;
use std::process::Command;

const SCRIPT: &str = r#"
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("PRAGMA journal_mode=WAL")
db.execute("PRAGMA synchronous=NORMAL")
db.execute("CREATE TABLE IF NOT EXISTS yard (id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
secs = float(sys.argv[2])
n, t0 = 0, time.perf_counter()
while time.perf_counter() - t0 < secs:
    db.execute("BEGIN")
    db.execute("INSERT INTO yard (body) VALUES ('durable send')")
    db.execute("COMMIT")
    n += 1
print(n / (time.perf_counter() - t0))
"#;

/// Single-row WAL transactions per second in a scratch database inside `dir`.
pub fn sqlite_single_row(dir: &Path, secs: f64) -> Result<f64, String> {
    let db = dir.join("yardstick.sqlite");
    let out = Command::new("python3")
        .args(["-c", SCRIPT])
        .arg(&db)
        .arg(secs.to_string())
        .output()
        .map_err(|e| format!("cannot run python3: {e}"))?;
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    stdout.trim().parse().map_err(|_| format!("python3 said: {stdout} {}", String::from_utf8_lossy(&out.stderr)))
}
