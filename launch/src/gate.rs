//! A session held at its start until the daemon has recorded it. The session's id is chosen
//! first and its process started (the pid is part of the record), but the process stops
//! itself before it runs the client ([`hold`]); the bridge waits for that stop, records the
//! session, and only then lets it go on ([`release`]). When the record is refused (another
//! bridge's session runs the attempt, `session_running`), the held process is killed
//! ([`discard`]) having run nothing of the worker's: an attempt's work runs exactly once.

use crate::process::{Spec, Waiter};

/// Run `spec` through a shell that stops itself (SIGSTOP) and, once continued, execs it.
pub fn hold(spec: &mut Spec) {
    let mut args = vec!["-c".to_string(), "kill -STOP $$ && exec \"$0\" \"$@\"".to_string(), spec.program.clone()];
    args.append(&mut spec.args);
    spec.program = "sh".into();
    spec.args = args;
}

/// Wait (off the executor) until the child `pid` has stopped itself, or ended. Leaves its
/// state to be collected by its waiter (`WNOWAIT`).
pub async fn until_held(pid: i32) -> std::io::Result<()> {
    tokio::task::spawn_blocking(move || {
        // SAFETY: waitid writes only into the zeroed siginfo we own.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let flags = libc::WSTOPPED | libc::WEXITED | libc::WNOWAIT;
        // SAFETY: as above; `pid` is our child.
        match unsafe { libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, flags) } {
            0 => Ok(()),
            _ => Err(std::io::Error::last_os_error()),
        }
    })
    .await
    .map_err(std::io::Error::other)?
}

/// Let a held session go on.
pub fn release(pid: i32) {
    // SAFETY: kill sends a signal to one process; no memory is involved.
    unsafe { libc::kill(pid, libc::SIGCONT) };
}

/// Kill a held session that must not run, and collect it.
pub async fn discard(pid: i32, waiter: &mut Waiter) {
    crate::process::signal_group(pid, libc::SIGKILL);
    waiter.wait().await;
}
