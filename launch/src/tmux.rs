//! `--tmux`: each session runs in a window of the tmux session `coord-<run>`, which a
//! person can attach to and watch. The pane's process is the session (tmux gives each pane
//! a process group of its own); its output still goes to the log, and its exit code to a
//! file beside it, read when the pidfd says it ended.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::client::Work;
use crate::process::{self, Spec, Waiter};

/// The tmux session of a run.
pub fn session_name(run_id: &str) -> String {
    format!("coord-{run_id}")
}

/// Where a tmux session's exit code is written.
pub fn status_file(log: &Path) -> PathBuf {
    log.with_extension("exit")
}

/// Quote for `sh`.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

fn tmux(args: &[&str]) -> std::io::Result<String> {
    let out = Command::new("tmux").args(args).output()?;
    if !out.status.success() {
        return Err(std::io::Error::other(format!(
            "tmux {}: {}",
            args.first().unwrap_or(&""),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Start `spec` in a new window; returns the pane's pid, its waiter and the window's name.
pub fn spawn(run_id: &str, w: &Work, spec: &Spec, log: &Path) -> std::io::Result<(i32, Waiter, String)> {
    if let Some(dir) = log.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let session = session_name(run_id);
    if tmux(&["has-session", "-t", &session]).is_err() {
        tmux(&["new-session", "-d", "-s", &session, "-n", "bridge"])?;
    }
    let status = status_file(log);
    let _ = std::fs::remove_file(&status);
    let env: Vec<String> = spec.env.iter().map(|(k, v)| format!("{k}={}", quote(v))).collect();
    let argv: Vec<String> = std::iter::once(&spec.program).chain(&spec.args).map(|a| quote(a)).collect();
    let line = format!(
        "env {} {} >> {} 2>&1 </dev/null; echo $? > {}",
        env.join(" "),
        argv.join(" "),
        quote(&log.display().to_string()),
        quote(&status.display().to_string())
    );
    let window = format!("{}-a{}", w.task_id, w.attempt);
    let cwd = spec.cwd.display().to_string();
    let target = format!("{session}:");
    let pid = tmux(&["new-window", "-d", "-t", &target, "-n", &window, "-c", &cwd, "-P", "-F", "#{pane_pid}", &line])?;
    let pid: i32 = pid.parse().map_err(|_| std::io::Error::other(format!("tmux gave no pane pid: '{pid}'")))?;
    let waiter = process::attach(pid, Some(status))?;
    Ok((pid, waiter, format!("{session}:{window}")))
}
