//! `coordd stop`: ask this project's daemon to shut down (`system.shutdown`) and wait until
//! its process has exited. While the project requires credentials, `system.shutdown` is the
//! lead's or an admin's; the daemon's own user may still stop it, as with any process of
//! theirs: `coordd stop` then sends it SIGTERM (the pid its lock's details record), which
//! stops it just as cleanly. Anyone else (another user sharing the socket) is refused.

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
        Err(ControlError::Rpc { code, message }) if refused(code) => signal(&paths, &message)?,
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

/// `system.shutdown` refused for want of the lead's authority.
fn refused(code: i64) -> bool {
    [coord_proto::ErrorCode::Unauthenticated, coord_proto::ErrorCode::NotPermitted]
        .iter()
        .any(|c| i64::from(c.rpc_code()) == code)
}

/// Stop the daemon with SIGTERM as its owner; its pid.
#[cfg(unix)]
fn signal(paths: &paths::ProjectPaths, why: &str) -> anyhow::Result<u32> {
    let info = crate::lockfile::read_info(&paths.lock)
        .ok_or_else(|| anyhow::anyhow!("{why}; and the daemon's pid is not recorded, so it cannot be signalled"))?;
    let pid = libc::pid_t::try_from(info.pid)?;
    // SAFETY: kill(2) with a pid and a signal number has no memory effects.
    if unsafe { libc::kill(pid, libc::SIGTERM) } != 0 {
        let e = std::io::Error::last_os_error();
        anyhow::bail!("{why}; and signalling the daemon (pid {pid}) failed: {e}");
    }
    Ok(info.pid)
}

#[cfg(not(unix))]
fn signal(_: &paths::ProjectPaths, why: &str) -> anyhow::Result<u32> {
    anyhow::bail!("{why}")
}
