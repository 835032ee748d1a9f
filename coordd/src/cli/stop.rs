//! `coordd stop`: ask this project's daemon to shut down (`system.shutdown`) and wait until
//! its process has exited.

use std::process::ExitCode;

use coord_ipc::paths;
use coord_proto::Exit;
use coord_proto::types::ShutdownResult;

use super::control::{self, ControlError};

pub async fn run(paths: paths::ProjectPaths, json: bool) -> anyhow::Result<ExitCode> {
    let reason = serde_json::json!({"reason": "coordd stop"});
    let pid = match control::call::<ShutdownResult>(&paths.socket, "system.shutdown", reason).await {
        Ok(r) => r.pid,
        Err(ControlError::NotRunning) => {
            if json {
                println!("{}", serde_json::json!({"ok": true, "stopped": false, "running": false}));
            } else {
                println!("coordd is not running for {}", paths.db.display());
            }
            return Ok(Exit::Ok.into());
        }
        Err(e) => return Err(e.into()),
    };
    let lock = paths.lock.clone();
    let exited = tokio::task::spawn_blocking(move || {
        crate::lockfile::wait_exited(pid, &lock, std::time::Duration::from_secs(30))
    })
    .await??;
    if !exited {
        anyhow::bail!("coordd (pid {pid}) did not exit within 30 s");
    }
    if json {
        println!("{}", serde_json::json!({"ok": true, "stopped": true, "pid": pid}));
    } else {
        println!("coordd (pid {pid}) stopped");
    }
    Ok(Exit::Ok.into())
}
