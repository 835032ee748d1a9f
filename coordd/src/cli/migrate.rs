//! `coordd migrate --to URL`: copy this project's SQLite history into PostgreSQL under the
//! daemon lock, verify it, and record PostgreSQL as the project's store.

use std::process::ExitCode;

use anyhow::Context;
use coord_ipc::paths;
use coord_proto::Exit;

pub fn run(paths: paths::ProjectPaths, to: &str, json: bool) -> anyhow::Result<ExitCode> {
    use crate::lockfile::{Acquire, DaemonLock};
    use crate::store::select::{self, Choice};
    let url = match Choice::parse(to)? {
        Choice::Postgres(url) => url,
        Choice::Sqlite => anyhow::bail!("--to takes a PostgreSQL URL (postgres://…)"),
    };
    if let Some(dir) = paths.lock.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    // Holding the daemon lock: no daemon of this project writes the source meanwhile.
    let _lock = match DaemonLock::try_acquire(&paths.lock)? {
        Acquire::Acquired(l) => l,
        Acquire::Held(info) => {
            let pid = info.map_or("unknown".to_string(), |i| i.pid.to_string());
            eprintln!("coordd: a daemon (pid {pid}) serves this project: stop it first with `coordd stop`");
            return Ok(Exit::DaemonState.into());
        }
    };
    let report = crate::store::migrate::run(&paths.db, &url)?;
    select::record(&paths.db, &Choice::Postgres(url.clone()))
        .with_context(|| format!("cannot record the store in {}", select::config_path(&paths.db).display()))?;
    let target = crate::store::postgres::redact(&url);
    if json {
        let mut v = serde_json::to_value(&report)?;
        v["ok"] = true.into();
        v["to"] = target.into();
        v["config"] = select::config_path(&paths.db).display().to_string().into();
        println!("{v}");
    } else {
        let verb = if report.copied { "copied and verified" } else { "already copied; verified again" };
        println!("{} → {target}: {verb}", paths.db.display());
        for t in &report.tables {
            println!("  {:<16} {:>8} rows  {}", t.table, t.rows, t.hash);
        }
        println!("  last event id {}", report.last_event_id);
        println!("The project now uses PostgreSQL ({}).", select::config_path(&paths.db).display());
    }
    Ok(Exit::Ok.into())
}
