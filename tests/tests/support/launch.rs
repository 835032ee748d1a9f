//! What the suites of `coord-launch` with the `command` client share (`launch.rs`,
//! `launch_bridge.rs`): a run of thread tasks, the bridge on it, a well-behaved worker's
//! script, and waits on the run's events. A suite includes it with
//! `#[path = "support/launch.rs"] mod support;`.

use std::process::Child;

use coord_client::Client;
use coord_proto::api::LaunchApiClient;
use coord_proto::types::*;
use coord_tests::{Project, next_run_event};
use serde_json::Value;

/// `orch --json` with `args`: its envelope.
pub fn orch(p: &Project, args: &[&str]) -> Value {
    p.orch().json_flag().args(args).run().ok().json()
}

/// A run R1 (with `extra` flags) of thread tasks, each assigned to w1.
pub fn thread_run(p: &Project, extra: &[&str], tasks: &[&str]) {
    let mut args = vec!["run", "create", "--goal", "g", "--id", "R1"];
    args.extend(extra);
    orch(p, &args);
    for t in tasks {
        orch(p, &["task", "add", "--run", "R1", "--id", t, "--title", t, "--kind", "thread", "--assign-to", "w1"]);
    }
}

/// The bridge on R1 with a command, started in the background.
pub fn bridge(p: &Project, command: &str, extra: &[&str]) -> Child {
    let mut args = vec!["--run", "R1", "--command", command, "--grace-seconds", "5"];
    args.extend(extra);
    p.launch().args(args).spawn()
}

/// Claim the thread and say it is up (a `thread.progress` the test waits for).
pub const UP: &str = "inbox claim --agent \"$COORD_AGENT\" --thread \"$COORD_THREAD\" >/dev/null && \
                      inbox update --agent \"$COORD_AGENT\" --thread \"$COORD_THREAD\" --status in_progress --summary up >/dev/null";

/// A fifo `gate` in the project: a session reading it waits until the test writes a line.
pub fn gate(p: &Project) -> std::path::PathBuf {
    let gate = p.path().join("gate");
    assert!(std::process::Command::new("mkfifo").arg(&gate).status().unwrap().success());
    gate
}

/// Claim the thread, run `work`, then finish it: what a well-behaved worker does.
pub fn worker(work: &str) -> String {
    format!(
        "inbox claim --agent \"$COORD_AGENT\" --thread \"$COORD_THREAD\" >/dev/null && {work} && \
         inbox done --agent \"$COORD_AGENT\" --thread \"$COORD_THREAD\" --summary finished >/dev/null"
    )
}

/// Wait for the next event of `types` on R1 after `after`.
pub async fn next_event(c: &Client, after: i64, types: &[EventType]) -> Event {
    next_run_event(c, "R1", after, types).await
}

/// Every session of R1, oldest first.
pub async fn sessions(c: &Client) -> Vec<LaunchSession> {
    c.session_list(SessionListParams { run_id: Some("R1".into()), ..Default::default() }).await.expect("list").sessions
}

/// SIGKILL a session's whole process group (its leader's pid).
pub fn kill_group(pid: i64) {
    let st = std::process::Command::new("kill").args(["-KILL", "--", &format!("-{pid}")]).status().unwrap();
    assert!(st.success());
}

/// Clean up after a test: SIGKILL the process group `pid` leads, if it still runs (a
/// session the daemon still lists as running may have ended since the list was read).
#[allow(dead_code, reason = "not every suite that includes this module cleans up this way")]
pub fn kill_group_if_running(pid: i64) {
    let _ = std::process::Command::new("kill")
        .args(["-KILL", "--", &format!("-{pid}")])
        .stderr(std::process::Stdio::null())
        .status();
}

/// Read the bridge's stdout until it holds `needle` (the bridge says it once the thing is
/// done); what it said so far. Byte by byte, so nothing after it leaves the pipe. Bounded
/// against a hang (not a speed target): a bridge that has not said it within 120 s is
/// sent SIGTERM, and the test fails with what it said.
#[track_caller]
#[allow(dead_code, reason = "launch_bridge.rs uses it, launch.rs does not")]
pub fn said(b: &mut Child, needle: &str) -> String {
    let pid = b.id().to_string();
    let (heard, watch) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = watch.recv_timeout(std::time::Duration::from_secs(120))
        {
            let _ = std::process::Command::new("kill").args(["-TERM", &pid]).status();
        }
    });
    let out = b.stdout.as_mut().expect("the bridge's stdout");
    let mut said = Vec::new();
    while !String::from_utf8_lossy(&said).contains(needle) {
        let mut byte = [0u8; 1];
        let n = std::io::Read::read(out, &mut byte).expect("read the bridge's stdout");
        assert!(
            n > 0,
            "the bridge ended (or was stopped after 120 s) before saying '{needle}': {}",
            String::from_utf8_lossy(&said)
        );
        said.push(byte[0]);
    }
    drop(heard);
    String::from_utf8_lossy(&said).into_owned()
}

/// A tmux server of the test's own (its `TMUX_TMPDIR`), killed when dropped.
pub struct Tmux(tempfile::TempDir);

impl Tmux {
    pub fn new() -> Self {
        Tmux(tempfile::Builder::new().prefix("tmx").tempdir().expect("TMUX_TMPDIR"))
    }

    /// Its `TMUX_TMPDIR`.
    #[allow(dead_code, reason = "launch_credentials.rs and live_tail.rs use it, the others do not")]
    pub fn dir(&self) -> String {
        self.0.path().display().to_string()
    }

    /// `tmux ARGS` on this server: whether it succeeded, and its stdout.
    pub fn run(&self, args: &[&str]) -> (bool, String) {
        let out = std::process::Command::new("tmux").env("TMUX_TMPDIR", self.0.path()).args(args).output().unwrap();
        (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// The bridge on R1 with `command` under `--tmux` on this server, dispatching, until done.
    pub fn bridge(&self, p: &Project, command: &str) -> Child {
        let args = ["--run", "R1", "--command", command, "--tmux", "--dispatch", "--until-done"];
        p.launch().args(args).env("TMUX_TMPDIR", &self.0.path().display().to_string()).spawn()
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.run(&["kill-server"]);
    }
}

/// Wait, with a bound, for what must come (a failure rather than a hang when it never does).
#[allow(dead_code, reason = "launch_bridge.rs and usage.rs use it, launch.rs does not")]
pub async fn within<T>(what: &str, f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(std::time::Duration::from_secs(120), f).await.unwrap_or_else(|_| panic!("{what} never came"))
}
