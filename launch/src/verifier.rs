//! `--merge-queue`: the bridge starts the run's verifier, `orch merge-queue --run R
//! --until-done`, beside its sessions. The daemon runs no user command, so the merge
//! queue's verify command runs there (docs/ARCHITECTURE.md, "Where the merge queue's
//! verify runs"). It runs in a process group of its own with its output in
//! `.agents/merge-queue/<run>/verifier.log`. When the run is done it is left to finish
//! what is queued and ends by itself; when the bridge ends otherwise (the run failed,
//! Ctrl-C, an error) it gets SIGINT, which stops a running verify with its process group.

use std::path::Path;

use crate::process::{self, Ended, Spec, Waiter};

/// The verifier the bridge started.
pub struct Verifier {
    pid: i32,
    waiter: Waiter,
}

impl Verifier {
    /// Start `orch merge-queue` for `run_id` on the database `db`. `orch` is the binary
    /// beside this one when there is one, else the one on PATH.
    pub fn start(run_id: &str, db: &Path, agents_dir: &Path) -> std::io::Result<Self> {
        let orch = std::env::current_exe()
            .ok()
            .and_then(|e| e.parent().map(|d| d.join("orch")))
            .filter(|p| p.is_file())
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "orch".into());
        let spec = Spec {
            program: orch,
            args: ["merge-queue", "--run", run_id, "--until-done"].map(String::from).to_vec(),
            cwd: std::env::current_dir()?,
            env: vec![("COORD_DB".into(), db.display().to_string())],
            filter: None,
            stdin: None,
            // The lead's own process: it keeps the bridge's agent secret (every other
            // inherited secret is removed, as from sessions).
            secret: std::env::var(coord_proto::types::AGENT_SECRET_ENV).ok().map(crate::credentials::Secret::new),
        };
        let log = agents_dir.join("merge-queue").join(run_id).join("verifier.log");
        let (pid, waiter) = process::spawn(&spec, &log)?;
        Ok(Self { pid, waiter })
    }

    /// Wait for it to end by itself (the run is done: it merges what is queued first).
    pub async fn finish(mut self) -> Ended {
        self.waiter.wait().await
    }

    /// Stop it (SIGINT: it stops a running verify and reports nothing) and wait for it.
    pub async fn stop(mut self) -> Ended {
        process::signal_group(self.pid, libc::SIGINT);
        self.waiter.wait().await
    }
}
