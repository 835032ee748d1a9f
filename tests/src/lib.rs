//! Test harness for the end-to-end suites in `tests/tests/`: a throw-away project
//! directory, the real `coordd`, `inbox` and `orch` binaries, and helpers to run them and
//! read their JSON envelopes. Every wait is on a readiness signal or an event, never a
//! fixed sleep.
//!
//! The binaries are the ones `cargo test --workspace` builds beside this test binary
//! (each binary crate has an integration test of its own, which makes cargo build it).

pub mod browser;
pub mod mcp_client;
mod outside;
pub mod windows;

pub use outside::*;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, SystemTime};

use coord_client::{Client, ProjectPaths};

pub mod sim;
use serde_json::Value;

pub mod pg;

pub mod mock_model;

pub mod team;

/// Path of a workspace binary built next to the running test executable.
pub fn bin(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    let mut dir = exe.parent().expect("exe dir").to_path_buf();
    if dir.ends_with("deps") {
        dir.pop();
    }
    let path = dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.is_file(),
        "{} is not built; `cargo test --workspace` builds it (or run `cargo build --workspace --bins`)",
        path.display()
    );
    path
}

/// A session's shell line running `inbox VERB` on its own thread (`$COORD_AGENT`,
/// `$COORD_THREAD`), followed by `rest`: what scripted models and workers run.
pub fn on_thread(verb: &str, rest: &str) -> String {
    format!("{} {verb} --agent \"$COORD_AGENT\" --thread \"$COORD_THREAD\" {rest}", bin("inbox").display())
}

/// A temporary project directory. Dropping it stops any daemon still serving it.
pub struct Project {
    /// Keeps the temporary directory alive.
    _dir: tempfile::TempDir,
    /// The project root, where commands run (the temp dir, or a folder deep inside it).
    root: PathBuf,
    /// Extra environment for every process started for this project.
    env: Vec<(String, String)>,
}

impl Default for Project {
    fn default() -> Self {
        Self::new()
    }
}

impl Project {
    pub fn new() -> Project {
        // Short paths: socket paths must stay under ~100 bytes.
        Project::new_in(Path::new("/tmp"))
    }

    /// A project in a new directory inside `parent` (a small file system, say).
    pub fn new_in(parent: &Path) -> Project {
        let dir = tempfile::Builder::new().prefix("coord-").tempdir_in(parent).expect("tempdir");
        let root = std::fs::canonicalize(dir.path()).expect("canonical temp dir");
        let mut p = Project { _dir: dir, root, env: Vec::new() };
        if pg::backend() == pg::Backend::Postgres {
            match pg::shared() {
                Some(server) => p = p.with_store(&server.database()),
                None => eprintln!("(running on SQLite instead)"),
            }
        }
        p
    }

    /// A project whose daemons use the store at `url` (`COORD_STORE_URL`).
    pub fn with_store(mut self, url: &str) -> Project {
        self.env.retain(|(k, _)| k != "COORD_STORE_URL");
        self.env.push(("COORD_STORE_URL".into(), url.into()));
        self
    }

    /// A project whose daemons say they run on `host` (`COORD_HOST`): two projects on one
    /// store are then two hosts of one team.
    pub fn on_host(mut self, host: &str) -> Project {
        self.env.push(("COORD_HOST".into(), host.into()));
        self
    }

    /// A project whose daemons choose their store themselves (no `COORD_STORE_URL`).
    pub fn without_store(mut self) -> Project {
        self.env.retain(|(k, _)| k != "COORD_STORE_URL");
        self
    }

    /// The store URL of this project's daemons, when it is not the SQLite default.
    pub fn store_url(&self) -> Option<&str> {
        self.env.iter().find(|(k, _)| k == "COORD_STORE_URL").map(|(_, v)| v.as_str()).filter(|v| *v != "sqlite")
    }

    /// A project nested so deep that its natural socket path is too long.
    pub fn deep() -> Project {
        let mut p = Project::new();
        let runtime = p.root.join("rt");
        std::fs::create_dir_all(&runtime).unwrap();
        p.env.push(("XDG_RUNTIME_DIR".to_string(), runtime.display().to_string()));
        p.root = p.root.join("a".repeat(60)).join("b".repeat(60));
        std::fs::create_dir_all(p.root.join(".agents")).unwrap();
        p
    }

    /// The directory commands run in (the project root).
    pub fn path(&self) -> &Path {
        &self.root
    }

    /// The paths the daemon and clients compute for this project.
    pub fn paths(&self) -> ProjectPaths {
        coord_client::paths::resolve(None, self.path())
    }

    /// Write a file in the project.
    pub fn write(&self, name: &str, contents: &str) -> PathBuf {
        let p = self.path().join(name);
        std::fs::write(&p, contents).unwrap();
        p
    }

    fn command(&self, name: &str) -> Command {
        self.command_of(Command::new(bin(name)))
    }

    /// `sh -c SCRIPT` in this project, with the workspace's `coordd`, `inbox` and `orch`
    /// first on `PATH`: commands as a user types them (the README's).
    pub fn sh(&self, script: &str) -> Run {
        let bins = bin("inbox").parent().expect("bin dir").to_path_buf();
        let path = std::env::join_paths(
            std::iter::once(bins).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
        )
        .expect("PATH");
        let mut cmd = self.command_of(Command::new("sh"));
        cmd.arg("-c").arg(script).env("PATH", path);
        Run { cmd, stdin: None }
    }

    fn command_of(&self, mut cmd: Command) -> Command {
        // The search for the project root (and git's for a repository) never goes up into
        // the temp directory: a stray `/tmp/.git` or `/tmp/.agents` left by anything on the
        // machine must not become every test project's root.
        if let Some(parent) = self.root.parent() {
            cmd.env("GIT_CEILING_DIRECTORIES", parent);
        }
        cmd.current_dir(self.path())
            .env("COORDD_BIN", bin("coordd"))
            .env("COORDD_LOG", "info")
            .env_remove("COORD_DB")
            .env_remove("COORD_AGENT")
            .env_remove("COORD_TASK")
            .env_remove("COORD_RUN")
            .env_remove("COORD_PROGRESS")
            .env_remove("COORD_NO_AUTOSTART")
            .env_remove("COORD_STORE_URL")
            .env_remove("COORD_HOST")
            .env_remove("XDG_RUNTIME_DIR");
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        cmd
    }

    /// An `inbox` command in this project.
    pub fn inbox(&self) -> Run {
        Run { cmd: self.command("inbox"), stdin: None }
    }

    /// A `coordd` command in this project.
    pub fn coordd(&self) -> Run {
        Run { cmd: self.command("coordd"), stdin: None }
    }

    /// An `orch` command in this project.
    pub fn orch(&self) -> Run {
        Run { cmd: self.command("orch"), stdin: None }
    }

    /// A `coord-launch` command in this project, with the workspace's binaries first on
    /// `PATH` (its sessions call `inbox`).
    pub fn launch(&self) -> Run {
        let mut cmd = self.command("coord-launch");
        let bins = bin("coordd").parent().expect("bin dir").to_path_buf();
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut dirs = vec![bins];
        dirs.extend(std::env::split_paths(&path));
        cmd.env("PATH", std::env::join_paths(dirs).expect("PATH"));
        Run { cmd, stdin: None }
    }

    /// Start `coordd serve` in the foreground and wait until it is ready.
    pub fn serve(&self) -> Daemon {
        self.try_serve().unwrap_or_else(|e| panic!("daemon did not start: {e}"))
    }

    /// Start a daemon whose clock runs `secs` ahead (`COORDD_CLOCK_OFFSET_SECS`), so that
    /// leases and reservations made before expire without waiting.
    pub fn serve_ahead(&self, secs: u64) -> Daemon {
        self.spawn_daemon(&[("COORDD_CLOCK_OFFSET_SECS", &secs.to_string())])
            .unwrap_or_else(|e| panic!("daemon did not start: {e}"))
    }

    /// Start `coordd serve`; `Err` with its stderr if it exits instead of getting ready.
    pub fn try_serve(&self) -> Result<Daemon, String> {
        self.spawn_daemon(&[])
    }

    /// Start `coordd serve ARGS` (and wait until it is ready); `Err` with its stderr if it
    /// exits instead.
    pub fn try_serve_args(&self, args: &[&str]) -> Result<Daemon, String> {
        self.spawn(args, &[])
    }

    /// Start `coordd serve ARGS` with extra environment, and wait until it is ready. Its
    /// log (stderr) is for the test to read: [`Daemon::log`].
    pub fn serve_with(&self, args: &[&str], env: &[(&str, &str)]) -> Daemon {
        self.spawn(args, env).unwrap_or_else(|e| panic!("daemon did not start: {e}"))
    }

    fn spawn_daemon(&self, env: &[(&str, &str)]) -> Result<Daemon, String> {
        self.spawn(&[], env)
    }

    fn spawn(&self, args: &[&str], env: &[(&str, &str)]) -> Result<Daemon, String> {
        let mut cmd = self.command("coordd");
        for (k, v) in env {
            cmd.env(k, v);
        }
        serve_with_command(cmd, args)
    }

    /// A client connected to the running daemon (no auto-start).
    pub async fn client(&self) -> Client {
        let mut opts = coord_client::ConnectOptions::for_dir(None, self.path());
        opts.autostart = false;
        Client::connect(opts).await.expect("connect to daemon")
    }
}

/// Run `CMD serve --notify-ready ARGS` (`CMD`: a `coordd`, however it is started) and wait
/// until it is ready; `Err` with its stderr if it exits instead.
pub fn serve_with_command(mut cmd: Command, args: &[&str]) -> Result<Daemon, String> {
    let mut child = cmd
        .args(["serve", "--notify-ready"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn coordd");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    // A generous bound that only matters when something is broken.
    let line = rx.recv_timeout(Duration::from_secs(120)).unwrap_or_default();
    if let Some(sock) = line.trim().strip_prefix("ready ") {
        return Ok(Daemon { child: Some(child), socket: PathBuf::from(sock), log: None });
    }
    let status = child.wait().expect("wait coordd");
    let mut err = String::new();
    let _ = std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err);
    Err(format!("{status}: {err}"))
}

impl Drop for Project {
    fn drop(&mut self) {
        // Stop an auto-started daemon, if any; harmless when none runs.
        let _ = self.command("coordd").arg("stop").stdout(Stdio::null()).stderr(Stdio::null()).status();
    }
}

/// A command about to run.
pub struct Run {
    cmd: Command,
    stdin: Option<Vec<u8>>,
}

impl Run {
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        self.cmd.args(args);
        self
    }

    /// Add the global `--json` flag.
    pub fn json_flag(self) -> Self {
        self.args(["--json"])
    }

    pub fn env(mut self, k: &str, v: &str) -> Self {
        self.cmd.env(k, v);
        self
    }

    pub fn stdin(mut self, data: &[u8]) -> Self {
        self.stdin = Some(data.to_vec());
        self
    }

    /// Run to completion.
    pub fn run(mut self) -> Out {
        self.cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = self.cmd.spawn().expect("spawn");
        let input = self.stdin.take().unwrap_or_default();
        let mut stdin = child.stdin.take().unwrap();
        let writer = std::thread::spawn(move || {
            let _ = stdin.write_all(&input);
        });
        let out = child.wait_with_output().expect("wait");
        let _ = writer.join();
        out.into()
    }

    /// The command itself, for callers that run it their own way (an MCP client).
    pub fn into_command(self) -> Command {
        self.cmd
    }

    /// Start without waiting (stdout and stderr captured).
    pub fn spawn(mut self) -> Child {
        self.cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        self.cmd.spawn().expect("spawn")
    }
}

/// A finished command.
#[derive(Debug)]
pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Out {
    /// Assert the exit code, showing the output when it differs.
    #[track_caller]
    pub fn code(self, want: i32) -> Out {
        assert_eq!(self.code, want, "exit code; stdout:\n{}\nstderr:\n{}", self.stdout, self.stderr);
        self
    }

    /// Assert success.
    #[track_caller]
    pub fn ok(self) -> Out {
        self.code(0)
    }

    /// The stdout as one JSON value.
    #[track_caller]
    pub fn json(&self) -> Value {
        serde_json::from_str(self.stdout.trim())
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}\nstderr:\n{}", self.stdout, self.stderr))
    }

    /// The stdout as JSON lines.
    pub fn json_lines(&self) -> Vec<Value> {
        self.stdout.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).unwrap()).collect()
    }
}

impl From<Output> for Out {
    fn from(out: Output) -> Out {
        Out {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

/// Wait for a spawned command and collect its output.
pub fn finish(child: Child) -> Out {
    child.wait_with_output().expect("wait").into()
}

/// [`finish`], with a guard against a hang (not a speed target): past `limit` the command
/// is sent SIGTERM (a bridge then stops its sessions), SIGKILL 30 s later, and the test
/// fails with what it printed.
#[track_caller]
pub fn finish_within(child: Child, limit: Duration) -> Out {
    let pid = child.id().to_string();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    if let Ok(out) = rx.recv_timeout(limit) {
        return out.expect("wait").into();
    }
    let _ = Command::new("kill").args(["-TERM", &pid]).status();
    let out = rx.recv_timeout(Duration::from_secs(30)).unwrap_or_else(|_| {
        let _ = Command::new("kill").args(["-KILL", &pid]).status();
        rx.recv().expect("the waiting thread")
    });
    let out: Out = out.expect("wait").into();
    panic!("still running after {limit:?}: stopped\nstdout:\n{}\nstderr:\n{}", out.stdout, out.stderr);
}

/// A foreground daemon started by the test. Killed on drop if still running.
pub struct Daemon {
    child: Option<Child>,
    pub socket: PathBuf,
    /// Its stderr (the log), once a test reads it.
    log: Option<BufReader<std::process::ChildStderr>>,
}

impl Daemon {
    /// Block until the daemon logs a line containing `needle`; returns that line. (An
    /// event, not a sleep: the daemon writes the line when the thing has happened.)
    #[track_caller]
    pub fn wait_for_log(&mut self, needle: &str) -> String {
        if self.log.is_none() {
            let stderr = self.child.as_mut().and_then(|c| c.stderr.take()).expect("the daemon's stderr");
            self.log = Some(BufReader::new(stderr));
        }
        let log = self.log.as_mut().unwrap();
        loop {
            let mut line = String::new();
            assert!(log.read_line(&mut line).unwrap() > 0, "the daemon exited before logging {needle:?}");
            if line.contains(needle) {
                return line;
            }
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().unwrap().id()
    }

    /// `kill -9`: no cleanup at all.
    pub fn kill9(mut self) {
        let mut child = self.child.take().unwrap();
        child.kill().unwrap();
        child.wait().unwrap();
    }

    /// Send a signal (by name, e.g. `TERM`) and wait for the exit.
    pub fn signal(mut self, sig: &str) -> ExitStatus {
        let mut child = self.child.take().unwrap();
        let ok = Command::new("kill").arg(format!("-{sig}")).arg(child.id().to_string()).status().unwrap();
        assert!(ok.success(), "kill -{sig} failed");
        child.wait().unwrap()
    }

    /// Wait for the daemon to exit by itself (e.g. after `coordd stop`).
    pub fn wait(mut self) -> ExitStatus {
        self.child.take().unwrap().wait().unwrap()
    }

    /// The daemon's log (its stderr), line by line, for waiting on what it says.
    pub fn log(&mut self) -> std::io::Lines<BufReader<std::process::ChildStderr>> {
        let err = self.child.as_mut().unwrap().stderr.take().expect("the log was taken already");
        BufReader::new(err).lines()
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Block until the wall clock passes an RFC 3339 instant (for lease expiry).
pub fn wait_until(rfc3339: &str) {
    let t = humantime::parse_rfc3339(rfc3339).expect("timestamp");
    while let Ok(left) = t.duration_since(SystemTime::now()) {
        std::thread::sleep(left + Duration::from_millis(5));
    }
}

/// Run `inbox ARGS --json` in the project, expect success, return the envelope.
#[track_caller]
pub fn ok(p: &Project, args: &[&str]) -> Value {
    p.inbox().args(args).json_flag().run().ok().json()
}

/// Run `inbox ARGS --json` in the project, expect exit `code` and an error envelope with
/// the error code `name`; return the envelope.
#[track_caller]
pub fn fails(p: &Project, args: &[&str], code: i32, name: &str) -> Value {
    let v = p.inbox().args(args).json_flag().run().code(code).json();
    assert_eq!(v["ok"], false);
    assert_eq!(v["error"]["code"], name, "{v}");
    v
}

/// The `thread.thread_id` of a JSON envelope.
pub fn thread_id(v: &Value) -> String {
    v["thread"]["thread_id"].as_str().expect("thread_id").to_string()
}

/// The `message.message_id` of a JSON envelope.
pub fn message_id(v: &Value) -> String {
    v["message"]["message_id"].as_str().expect("message_id").to_string()
}

/// Register `name` (role `worker`) with `inbox agent register`; its secret.
#[track_caller]
pub fn register(p: &Project, name: &str) -> String {
    let r = ok(p, &["agent", "register", "--name", name, "--role", "worker"]);
    let secret = r["secret"].as_str().unwrap_or_else(|| panic!("a secret: {r}")).to_string();
    assert_eq!(coord_proto::types::secret_agent(&secret), Some(name));
    secret
}

/// Run `inbox --agent AGENT ARGS --json`, expect success, return the envelope.
#[track_caller]
pub fn ok_as(p: &Project, agent: &str, args: &[&str]) -> Value {
    let mut all = vec!["--agent", agent];
    all.extend_from_slice(args);
    ok(p, &all)
}

/// A typed payload of each known message type that the daemon accepts as a first send:
/// requests carry their `request_id`, answers name the request of the same sample set
/// (`perm-1`, `plan-1`, `stop-1`, `stop-2`). In send order: requests before answers.
pub fn control_samples() -> Vec<(&'static str, Value)> {
    use serde_json::json;
    vec![
        (
            "permission_request",
            json!({"request_id": "perm-1", "tool_name": "Bash", "tool_use_id": "toolu_1",
            "description": "push", "input": {"command": "git push"}}),
        ),
        ("plan_approval_request", json!({"request_id": "plan-1", "plan": "1. tests\n2. code"})),
        ("shutdown_request", json!({"request_id": "stop-1", "reason": "done"})),
        ("shutdown_request", json!({"request_id": "stop-2"})),
        (
            "idle_notification",
            json!({"idle_reason": "available", "summary": "ok", "completed_task_id": "T1",
            "completed_status": "resolved"}),
        ),
        (
            "task_assignment",
            json!({"task_id": "T9", "subject": "Add a cache", "description": "LRU", "assigned_by": "lead"}),
        ),
        ("mode_set_request", json!({"mode": "plan"})),
        ("team_permission_update", json!({"rules": ["Bash(git push*)"], "behavior": "ask"})),
        (
            "permission_response",
            json!({"request_id": "perm-1", "approved": true, "reason": "ok",
            "updated_input": {"command": "git push --dry-run"}}),
        ),
        ("plan_approval_response", json!({"request_id": "plan-1", "approved": false, "feedback": "tests first"})),
        ("shutdown_approved", json!({"request_id": "stop-1"})),
        ("shutdown_rejected", json!({"request_id": "stop-2", "reason": "mid-migration"})),
    ]
}

/// Who sends each sample of [`control_samples`] in a lead/worker pair: the worker asks
/// for permission and plan approval and answers shutdowns; the lead does the rest.
pub fn sample_sender(msg_type: &str) -> (&'static str, &'static str) {
    match msg_type {
        "permission_request"
        | "plan_approval_request"
        | "idle_notification"
        | "shutdown_approved"
        | "shutdown_rejected" => ("w1", "lead"),
        _ => ("lead", "w1"),
    }
}

/// `orch wait --run RUN --after-event CURSOR --json` (30 s at most); expect it to wake and
/// return its envelope.
#[track_caller]
pub fn orch_wait(p: &Project, run: &str, cursor: i64) -> Value {
    let cursor = cursor.to_string();
    let args = ["wait", "--run", run, "--after-event", &cursor, "--timeout-seconds", "30", "--json"];
    let v = p.orch().args(args).run().ok().json();
    assert_eq!(v["woke"], true, "{v}");
    v
}

/// A project that is a git repository on `main` with one commit (a README).
pub fn git_project() -> Project {
    let p = Project::new();
    init_repo(&p);
    p
}

/// Run git in `dir`, expect success, return its stdout.
#[track_caller]
pub fn git_in(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git").current_dir(dir).args(args).output().expect("git");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Make the project a git repository on `main` with one commit (a `README.md`).
pub fn init_repo(p: &Project) {
    git_in(p.path(), &["init", "-q", "-b", "main"]);
    git_in(p.path(), &["config", "user.email", "t@example.com"]);
    git_in(p.path(), &["config", "user.name", "Test"]);
    p.write("README.md", "hello\n");
    git_in(p.path(), &["add", "README.md"]);
    git_in(p.path(), &["commit", "-q", "-m", "init"]);
}

/// Wait for the next permission request to `approver` after event `after`, and answer it
/// with `answer` (its `request_id` is filled in); the request.
pub async fn answer_permission(c: &Client, approver: &str, after: i64, answer: Value) -> coord_proto::types::Message {
    use coord_proto::api::ControlApiClient;
    let filter = coord_proto::types::EventFilter {
        after_event: Some(after),
        to: Some(approver.into()),
        message_types: vec!["permission_request".into()],
        ..Default::default()
    };
    let mut sub = c.subscribe(filter).await.unwrap();
    let limit = Some(Duration::from_secs(120));
    let request = sub.next_within(limit).await.unwrap().expect("a permission request").message.unwrap();
    let mut payload = answer;
    payload["request_id"] = request.payload_json["request_id"].clone();
    let p = coord_proto::types::ControlSendParams {
        from: approver.into(),
        msg_type: "permission_response".into(),
        payload,
        ..Default::default()
    };
    c.control_send(p).await.unwrap();
    request
}

/// Ask the project's daemon (auto-started if needed) to serve the dashboard; its URL.
#[track_caller]
pub fn dashboard_url(p: &Project) -> String {
    let v = p.orch().args(["dashboard", "--json"]).run().ok().json();
    v["url"].as_str().expect("dashboard url").to_string()
}

/// [`dashboard_url`] asked by the agent whose secret is `secret` (with credentials
/// required, only the lead or an admin may start it and learn its URL).
#[track_caller]
pub fn dashboard_url_as(p: &Project, secret: &str) -> String {
    let v = p.orch().args(["dashboard", "--json"]).env(coord_proto::types::AGENT_SECRET_ENV, secret).run().ok().json();
    v["url"].as_str().expect("dashboard url").to_string()
}

/// Run R1 with one thread task T1, dispatched to `worker`, claimed and blocked on
/// `question`; the thread id and the event id of the block.
#[track_caller]
pub fn blocked_task(p: &Project, worker: &str, question: &str) -> (String, i64) {
    let orch = |args: &[&str]| p.orch().args(args).json_flag().run().ok().json();
    orch(&["run", "create", "--goal", "G", "--id", "R1"]);
    orch(&["task", "add", "--run", "R1", "--id", "T1", "--title", "Schema", "--kind", "thread"]);
    let d = orch(&["dispatch", "--run", "R1", "--task", "T1", "--to", worker]);
    let thr = d["dispatches"][0]["thread_id"].as_str().expect("thread_id").to_string();
    ok(p, &["claim", "--agent", worker, "--thread", &thr]);
    let blocked = ok(p, &["update", "--agent", worker, "--thread", &thr, "--status", "blocked", "--summary", question]);
    (thr, blocked["event_id"].as_i64().expect("event_id"))
}

/// Wait for the next event of `types` on `run` after event `after` (a subscription: no
/// polling).
pub async fn next_run_event(
    c: &Client,
    run: &str,
    after: i64,
    types: &[coord_proto::types::EventType],
) -> coord_proto::types::Event {
    let f = coord_proto::types::EventFilter {
        run_id: Some(run.into()),
        after_event: Some(after),
        event_types: types.to_vec(),
        ..Default::default()
    };
    let mut s = c.subscribe(f).await.expect("subscribe");
    s.next().await.expect("event").expect("event")
}

/// Whether a process with this pid is alive (and not a zombie), read from `/proc`.
pub fn pid_alive(pid: i64) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|s| s.rsplit_once(") ").is_some_and(|(_, rest)| !rest.starts_with('Z')))
}

/// Every process below `pid` (read from `/proc`).
pub fn descendants(pid: i64) -> Vec<i64> {
    let children = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
    let direct: Vec<i64> = children.split_whitespace().filter_map(|c| c.parse().ok()).collect();
    direct.iter().flat_map(|c| std::iter::once(*c).chain(descendants(*c))).collect()
}

/// The pids of every live process whose environment holds `var=value` (`COORD_THREAD`,
/// `COORD_SESSION`): what a session started, however deep or in whatever process group.
pub fn processes_with(var: &str, value: &str) -> Vec<i64> {
    let want = format!("{var}={value}");
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i64>() else { continue };
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else { continue };
        if environ.split(|b| *b == 0).any(|kv| kv == want.as_bytes()) && pid_alive(pid) {
            pids.push(pid);
        }
    }
    pids
}

/// `inbox hook claude EVENT` of `agent`'s Claude Code session of `task`: its JSON answer, if
/// it printed one (a stopped session's `{"continue": false, ...}`, a reminder).
pub fn claude_hook(p: &Project, agent: &str, task: &str, event: &str) -> Option<Value> {
    let input = serde_json::json!({"hook_event_name": event, "session_id": "s1"}).to_string();
    let out = p.inbox().args(["--agent", agent, "hook", "claude", event, "--task", task]).stdin(input.as_bytes()).run();
    let text = out.code(0).stdout.trim().to_string();
    (!text.is_empty()).then(|| serde_json::from_str(&text).expect("one JSON object"))
}

/// Wait until the process `pid` (not a child of the test) has ended, or `within` passed;
/// true if it ended. It waits on a pidfd, which becomes readable when the process ends:
/// no polling.
#[cfg(target_os = "linux")]
pub fn wait_gone(pid: i64, within: std::time::Duration) -> bool {
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) } as i32;
    if fd < 0 {
        return !pid_alive(pid);
    }
    let mut p = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
    // SAFETY: one valid pollfd; the descriptor is ours and closed right after.
    let n = unsafe { libc::poll(&mut p, 1, within.as_millis().min(i32::MAX as u128) as i32) };
    // SAFETY: closing the descriptor opened above.
    unsafe { libc::close(fd) };
    n > 0 || !pid_alive(pid)
}

/// How many times the threads of process `pid` were switched out (voluntary and
/// involuntary context switches, from `/proc/PID/task/*/status`) during `window`, counting
/// the threads alive at its start and its end; and which, by name. A thread is switched out
/// only after it woke, so this counts the wake-ups of an idle process. Linux only.
pub fn wake_ups_during(pid: u32, window: Duration) -> (u64, Vec<(String, u64)>) {
    fn switches(pid: u32) -> HashMap<String, u64> {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return HashMap::new() };
        tasks
            .flatten()
            .filter_map(|t| {
                let status = std::fs::read_to_string(t.path().join("status")).ok()?;
                let count = |key: &str| -> u64 {
                    status.lines().find_map(|l| l.strip_prefix(key)?.trim().parse().ok()).unwrap_or(0)
                };
                let n = count("voluntary_ctxt_switches:") + count("nonvoluntary_ctxt_switches:");
                Some((t.file_name().to_string_lossy().into_owned(), n))
            })
            .collect()
    }
    let before = switches(pid);
    std::thread::sleep(window);
    let after = switches(pid);
    let mut total = 0;
    let mut who: HashMap<String, u64> = HashMap::new();
    for (tid, n) in &after {
        if let Some(b) = before.get(tid).filter(|b| n > *b) {
            total += n - b;
            let name = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/comm")).unwrap_or_default();
            *who.entry(name.trim().to_string()).or_default() += n - b;
        }
    }
    let mut who: Vec<(String, u64)> = who.into_iter().collect();
    who.sort();
    (total, who)
}
