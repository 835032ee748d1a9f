//! `coordd status`: ask this project's daemon for its details (`system.hello`); exit 3 when
//! none runs.

use std::process::ExitCode;

use coord_ipc::paths;
use coord_proto::Exit;
use coord_proto::types::HelloResult;

use super::control::{self, ControlError};

pub async fn run(paths: paths::ProjectPaths, json: bool) -> anyhow::Result<ExitCode> {
    let h: HelloResult = match control::call(&paths.socket, "system.hello", serde_json::json!({})).await {
        Ok(h) => h,
        Err(ControlError::NotRunning) => {
            if json {
                println!(
                    "{}",
                    serde_json::json!({"ok": true, "running": false, "db": paths.db, "socket": paths.socket})
                );
            } else {
                println!("coordd is not running for {}", paths.db.display());
            }
            return Ok(Exit::DaemonState.into());
        }
        Err(e) => return Err(e.into()),
    };
    let lock = crate::lockfile::read_info(&paths.lock);
    if json {
        let mut v = serde_json::to_value(&h)?;
        v["ok"] = true.into();
        v["running"] = true.into();
        v["lock_file"] = paths.lock.display().to_string().into();
        v["socket_fallback"] = lock.as_ref().is_some_and(|l| l.socket_fallback).into();
        println!("{v}");
    } else {
        println!("coordd {} (protocol {}) running", h.version, h.protocol_version);
        println!("  pid         {}", h.pid);
        println!("  socket      {}{}", h.socket, if paths.socket_fallback { " (short fallback path)" } else { "" });
        println!("  db          {}", h.db);
        println!("  lock file   {}", paths.lock.display());
        println!("  started     {}", h.started_at);
        println!("  uptime      {}", humantime::format_duration(std::time::Duration::from_secs(h.uptime_ms / 1000)));
        println!("  clients     {} connection(s), {} subscription(s)", h.connections, h.subscriptions);
        println!("  last event  {}", h.last_event_id);
        if let Some(ro) = &h.read_only {
            println!("  READ-ONLY   since {} ({}): {}", ro.since, ro.reason, ro.message);
            println!("              writes are refused (read_only) until space returns; the next write then reopens");
        }
    }
    Ok(Exit::Ok.into())
}
