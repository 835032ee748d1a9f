//! `--tmux`: each session runs in a window of the tmux session `coord-<run>`, which a
//! person can attach to and watch. The pane's process is the session (tmux gives each pane
//! a process group of its own); its output still goes to the log (through its output
//! filter, started in the same window with what a filter gets outside tmux), and its exit
//! code to a file beside it, read when the pidfd says it ended. The `bridge` window follows the
//! bridge's own lines (its log, `say.rs`). The bridge closes that window when it exits; a
//! session's window closes when the session ends, so the tmux session ends with the last
//! of them and outlives the bridge only while sessions it left running go on.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::client::Work;
use crate::credentials;
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
    // A tmux server this starts keeps its environment for every window: none of the
    // bridge's secrets.
    let mut cmd = Command::new("tmux");
    for k in credentials::scrub() {
        cmd.env_remove(k);
    }
    let out = cmd.args(args).output()?;
    if !out.status.success() {
        return Err(std::io::Error::other(format!(
            "tmux {}: {}",
            args.first().unwrap_or(&""),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// What the `bridge` window runs: the bridge's log, followed (as a program and its
/// arguments, which tmux runs itself: see [`spawn`]).
fn follow(bridge_log: &Path) -> Vec<String> {
    let path = bridge_log.display().to_string();
    ["tail", "-n", "+1", "-F", &path].map(String::from).to_vec()
}

/// Make sure the run's tmux session exists with its `bridge` window following
/// `bridge_log` (made again, or given back its command, when a bridge restarts).
pub fn open(run_id: &str, bridge_log: &Path) -> std::io::Result<()> {
    let session = session_name(run_id);
    let follow = follow(bridge_log);
    // The window's command goes last, as its words.
    let with = |args: &[&str]| tmux(&[args, &follow.iter().map(String::as_str).collect::<Vec<_>>()].concat()).map(drop);
    if tmux(&["has-session", "-t", &format!("={session}")]).is_err() {
        return with(&["new-session", "-d", "-s", &session, "-n", "bridge"]);
    }
    let windows = tmux(&["list-windows", "-t", &format!("={session}"), "-F", "#{window_name}"])?;
    if windows.lines().any(|w| w == "bridge") {
        with(&["respawn-window", "-k", "-t", &format!("={session}:bridge")])
    } else {
        with(&["new-window", "-d", "-t", &format!("={session}:"), "-n", "bridge"])
    }
}

/// The bridge is exiting: close its window. With no session window left, that ends the
/// tmux session; one whose panes are all dead (`remain-on-exit`) is ended too.
pub fn close(run_id: &str) {
    let session = session_name(run_id);
    let _ = tmux(&["kill-window", "-t", &format!("={session}:bridge")]);
    let dead = tmux(&["list-panes", "-s", "-t", &format!("={session}"), "-F", "#{pane_dead}"]);
    if dead.is_ok_and(|d| d.lines().all(|l| l == "1")) {
        let _ = tmux(&["kill-session", "-t", &format!("={session}")]);
    }
}

/// How a tmux session gets its secret without it reaching the command line (which `ps`
/// and tmux show): a `0600` file beside the log that the window's shell reads into
/// `COORD_AGENT_SECRET` and deletes before the client starts. Also the `-u` options of
/// `env` that take every other secret away (the tmux server's environment may be older
/// than this bridge). Returns the shell prefix and the options.
fn hand_over(spec: &Spec, log: &Path) -> std::io::Result<(String, String)> {
    let secret_var = coord_proto::types::AGENT_SECRET_ENV;
    let mut unset = credentials::scrub();
    if !unset.iter().any(|k| k == secret_var) {
        unset.push(secret_var.to_string());
    }
    let Some(secret) = &spec.secret else {
        let unset: Vec<String> = unset.iter().map(|k| format!("-u {k}")).collect();
        return Ok((String::new(), unset.join(" ")));
    };
    let file = secret_file(&secret_path(spec, log, "secret"), secret.expose())?;
    let unset: Vec<String> = unset.iter().filter(|k| *k != secret_var).map(|k| format!("-u {k}")).collect();
    Ok((format!("{secret_var}=$(cat {file}); rm -f {file}; export {secret_var}; "), unset.join(" ")))
}

/// Where the window's shell finds a secret handed over to it: beside the log, named for
/// the session (two bridges starting the same attempt never share one).
fn secret_path(spec: &Spec, log: &Path, what: &str) -> PathBuf {
    let session = spec.env.iter().find(|(k, _)| k == process::SESSION_VAR).map(|(_, v)| v.as_str());
    log.with_extension(session.map_or_else(|| what.to_string(), |s| format!("{s}.{what}")))
}

/// Write `secret` to a new `0600` file at `path`; the path, quoted for `sh`.
fn secret_file(path: &Path, secret: &str) -> std::io::Result<String> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let _ = std::fs::remove_file(path);
    let mut f = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(path)?;
    f.write_all(secret.as_bytes())?;
    Ok(quote(&path.display().to_string()))
}

/// The shell variable holding the filter's secret between the window's first step and
/// the filter's part of the pipeline (never exported: no program of the session's part
/// gets it).
const FILTER_SECRET: &str = "coord_filter_secret";

/// The output filter's part of the window's line, as `process::spawn` starts a filter:
/// a process group of its own (`setsid`: stopping the session signals the pane's group,
/// and the filter reports the session's last lines once its output ends), the session's
/// id as `COORD_FILTER_SESSION` (the filter is not one of the session's processes), the
/// session's other variables, and the bridge's own secret (the filter reports the
/// session's usage and last lines, calls that are the launcher's), handed over as the
/// session's is: a `0600` file the window's shell reads into an unexported variable and
/// deletes before either part starts, exported in the filter's part alone. Returns that
/// first step and the filter's part.
fn filter_part(spec: &Spec, filter: &[String], log: &Path) -> std::io::Result<(String, String)> {
    let secret_var = coord_proto::types::AGENT_SECRET_ENV;
    let unset: Vec<String> =
        credentials::scrub().into_iter().filter(|k| k != secret_var).map(|k| format!("-u {k}")).collect();
    let (first, export) = match std::env::var(secret_var) {
        Ok(secret) if !secret.is_empty() => {
            let file = secret_file(&secret_path(spec, log, "filter-secret"), &secret)?;
            (
                format!("{FILTER_SECRET}=$(cat {file}); rm -f {file}; "),
                format!("{secret_var}=\"${FILTER_SECRET}\"; export {secret_var}; "),
            )
        }
        _ => (String::new(), String::new()),
    };
    let env: Vec<String> = process::filter_env(spec).map(|(k, v)| format!("{k}={}", quote(v))).collect();
    let argv: Vec<String> = filter.iter().map(|a| quote(a)).collect();
    Ok((first, format!("{{ {export}exec setsid env {} {} {}; }}", unset.join(" "), env.join(" "), argv.join(" "))))
}

/// Start `spec` in a new window; returns the pane's pid, its waiter and the window's name.
pub fn spawn(
    run_id: &str,
    w: &Work,
    spec: &Spec,
    log: &Path,
    bridge_log: &Path,
) -> std::io::Result<(i32, Waiter, String)> {
    if let Some(dir) = log.parent() {
        std::fs::create_dir_all(dir)?;
    }
    open(run_id, bridge_log)?;
    let session = session_name(run_id);
    let status = status_file(log);
    let _ = std::fs::remove_file(&status);
    let started = start(spec, log, &status, &session, &window_name(w));
    if started.is_err() {
        // Nothing will read the secrets handed over: they go.
        for what in ["secret", "filter-secret"] {
            let _ = std::fs::remove_file(secret_path(spec, log, what));
        }
    }
    let pid = started?;
    let waiter = process::attach(pid, Some(status))?;
    Ok((pid, waiter, format!("{session}:{}", window_name(w))))
}

/// A session's window: `<task>-a<attempt>`.
fn window_name(w: &Work) -> String {
    format!("{}-a{}", w.task_id, w.attempt)
}

/// Open `spec`'s window `window` in the tmux session `session`; the pane's pid.
fn start(spec: &Spec, log: &Path, status: &Path, session: &str, window: &str) -> std::io::Result<i32> {
    let env: Vec<String> = spec.env.iter().map(|(k, v)| format!("{k}={}", quote(v))).collect();
    let argv: Vec<String> = std::iter::once(&spec.program).chain(&spec.args).map(|a| quote(a)).collect();
    let (give, unset) = hand_over(spec, log)?;
    let (log_q, status_q) = (quote(&log.display().to_string()), quote(&status.display().to_string()));
    let stdin = spec.stdin.as_ref().map_or("/dev/null".to_string(), |f| quote(&f.display().to_string()));
    let run = format!("{give}env {unset} {} {} <{stdin}", env.join(" "), argv.join(" "));
    let line = match &spec.filter {
        // The exit code is the session's, not the filter's.
        Some(filter) => {
            let (first, filter) = filter_part(spec, filter, log)?;
            format!("{first}{{ unset {FILTER_SECRET}; {run}; echo $? > {status_q}; }} 2>&1 | {filter} >> {log_q} 2>&1")
        }
        None => format!("{run} >> {log_q} 2>&1; echo $? > {status_q}"),
    };
    // tmux expands formats (`#{…}`, `#(…)`) in the directory: a `#` of the path is doubled.
    let cwd = spec.cwd.display().to_string().replace('#', "##");
    let target = format!("={session}:");
    // The line is sh's, whatever the tmux server's default shell is (a shell command
    // given as several words is run by tmux itself, not through that shell).
    let args = ["new-window", "-d", "-t", &target, "-n", window, "-c", &cwd, "-P", "-F", "#{pane_pid}", "sh", "-c"];
    let pid = tmux(&[&args[..], &[line.as_str()]].concat())?;
    pid.parse().map_err(|_| std::io::Error::other(format!("tmux gave no pane pid: '{pid}'")))
}
