//! One verify job: `sh -c COMMAND` in the run's scratch worktree (checked out at the
//! candidate), stdin from nothing, stdout and stderr into the job's log, in a process
//! group of its own (Unix) so that stopping it stops everything it started: SIGTERM to
//! the group, SIGKILL after the grace period. It is stopped when it runs past the
//! timeout, or when the caller says so (the run was cancelled, Ctrl-C). It runs the
//! workers' code, so it does not get the verifier's `$COORD_AGENT_SECRET`.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use coord_proto::types::VerifyJob;
use tokio::process::{Child, Command};
use tokio::sync::watch;

/// How a verify run ended.
#[derive(Debug, Clone)]
pub struct Ran {
    /// Exit status 0.
    pub passed: bool,
    pub exit_code: Option<i32>,
    /// Killed past the timeout.
    pub timed_out: bool,
    /// Stopped on request: nothing to report.
    pub stopped: bool,
    /// The log's last lines.
    pub output: String,
    pub took: Duration,
}

/// Most bytes of the log's end read back for the report.
const TAIL_BYTES: u64 = 8 * 1024;

/// Run `job` for run `run_id`; stop it past `timeout`, or when `stop` turns true.
pub async fn run(
    job: &VerifyJob,
    run_id: &str,
    (timeout, grace): (Duration, Duration),
    mut stop: watch::Receiver<bool>,
) -> std::io::Result<Ran> {
    let log = Path::new(&job.log_path);
    if let Some(dir) = log.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let out = File::create(log)?;
    let err = out.try_clone()?;
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(&job.verify).current_dir(&job.worktree);
    cmd.env("COORD_RUN", run_id)
        .env("COORD_TASK", &job.task_id)
        .env("COORD_ATTEMPT", job.attempt.to_string())
        .env("COORD_VERIFY_TIP", &job.tip)
        .env("COORD_VERIFY_COMMIT", &job.commit)
        .env("COORD_VERIFY_BRANCH", &job.branch)
        // The verify runs the workers' code: it must not act as the verifier's agent.
        .env_remove(coord_proto::types::AGENT_SECRET_ENV);
    cmd.stdin(Stdio::null()).stdout(Stdio::from(out)).stderr(Stdio::from(err)).kill_on_drop(true);
    #[cfg(unix)]
    cmd.process_group(0);
    let started = Instant::now();
    let mut child = cmd.spawn()?;
    let (mut timed_out, mut stopped) = (false, false);
    let status = tokio::select! {
        s = child.wait() => Some(s?),
        _ = tokio::time::sleep(timeout) => { timed_out = true; None }
        _ = stop.wait_for(|s| *s) => { stopped = true; None }
    };
    let status = match status {
        Some(s) => s,
        None => end(&mut child, grace).await?,
    };
    let took = started.elapsed();
    let mut output = tail(log);
    if timed_out {
        output.push_str(&format!("\n[orch merge-queue: stopped after the timeout of {} s]", timeout.as_secs()));
    }
    let exit_code = status.code();
    Ok(Ran { passed: status.success() && !timed_out && !stopped, exit_code, timed_out, stopped, output, took })
}

/// Stop the child's whole group: SIGTERM, then SIGKILL after `grace`.
async fn end(child: &mut Child, grace: Duration) -> std::io::Result<std::process::ExitStatus> {
    #[cfg(unix)]
    if let Some(pid) = child.id() {
        // SAFETY: killpg only sends a signal to the group the child leads.
        unsafe { libc::killpg(pid as i32, libc::SIGTERM) };
        if let Ok(s) = tokio::time::timeout(grace, child.wait()).await {
            unsafe { libc::killpg(pid as i32, libc::SIGKILL) };
            return s;
        }
        unsafe { libc::killpg(pid as i32, libc::SIGKILL) };
    }
    #[cfg(not(unix))]
    let _ = grace;
    child.start_kill()?;
    child.wait().await
}

/// The log's last lines (its last [`TAIL_BYTES`]), lossily decoded.
fn tail(log: &Path) -> String {
    let Ok(mut f) = File::open(log) else { return String::new() };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    let from = len.saturating_sub(TAIL_BYTES);
    if f.seek(SeekFrom::Start(from)).is_err() {
        return String::new();
    }
    let mut buf = Vec::new();
    let _ = f.read_to_end(&mut buf);
    let text = String::from_utf8_lossy(&buf);
    match (from > 0, text.find('\n')) {
        (true, Some(i)) => text[i + 1..].to_string(),
        _ => text.into_owned(),
    }
}
