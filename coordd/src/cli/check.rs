//! `coordd check`: verify the database without changing it; exit 50 when a check fails.

use std::process::ExitCode;

use coord_ipc::paths;
use coord_proto::Exit;

pub fn run(paths: &paths::ProjectPaths, json: bool) -> anyhow::Result<ExitCode> {
    let r = crate::store::sqlite::check::check(&paths.db).map_err(|e| anyhow::anyhow!(e.to_app().message))?;
    if json {
        println!("{}", serde_json::to_value(&r)?);
    } else {
        println!("{} {}", if r.ok { "ok" } else { "PROBLEMS in" }, r.db);
        println!("  schema version   {}", r.schema_version);
        println!("  integrity        {}", r.integrity.join("; "));
        println!("  foreign keys     {} violation(s)", r.foreign_key_violations);
        let (first, last) = (r.events.first.unwrap_or(0), r.events.last.unwrap_or(0));
        println!("  events           {} ({first}..{last}), {} missing id(s)", r.events.count, r.events.gaps);
        println!("  orphans          {} lease(s), {} message(s)", r.orphan_leases, r.orphan_messages);
    }
    Ok(if r.ok { Exit::Ok } else { Exit::Internal }.into())
}
